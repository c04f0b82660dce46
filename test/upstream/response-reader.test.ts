// The dispatch handler that reads each upstream answer, driven as undici drives it, with a controller
// that records what the handler asks of the connection: where a socket cannot show it (was the
// connection closed, was a body read through), the calls can.
import t from 'tap'
import type { Dispatcher } from 'undici'
import { responseText, parseResponseJson } from '../../src/upstream/transport/response-body.ts'
import { ResponseReader, ResponseTooLarge } from '../../src/upstream/transport/response-reader.ts'

function controller () {
  const aborted: Error[] = []
  const c = {
    aborted,
    abort (reason: Error) { aborted.push(reason) },
    pause () {},
    resume () {}
  }
  return c as typeof c & Dispatcher.DispatchController
}

const reader = () => new ResponseReader({ maxBodyBytes: 100, discard: new Set([307]), discardLimit: 50 })
const bytes = (n: number) => Buffer.alloc(n, 'x')
const rejection = (promise: Promise<unknown>) =>
  promise.then(() => { throw new Error('expected a rejection') }, (reason: unknown) => reason)

t.test('an answer within the cap is read whole, as its bytes', async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 200, { 'content-type': 'application/json' })
  r.onResponseData(c, Buffer.from('{"a":'))
  r.onResponseData(c, Buffer.from('1}'))
  r.onResponseEnd()

  t.strictSame(await r.promise,
    { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}') })
  t.strictSame(c.aborted, [])
})

t.test('a declared length past the cap ends the answer before any of its body is read', async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 200, { 'content-length': '101' })

  await t.rejects(r.promise, ResponseTooLarge)
  t.equal(c.aborted.length, 1, 'the connection is closed')
  t.equal(r.status, 200, 'the headers had arrived')
})

t.test('a body counted past the cap ends the answer while it is read', async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 200, {})
  r.onResponseData(c, bytes(60))
  t.strictSame(c.aborted, [], 'within the cap so far')
  r.onResponseData(c, bytes(41))

  await t.rejects(r.promise, ResponseTooLarge)
  t.equal(c.aborted.length, 1)
})

t.test("a redirect's short body is read through and kept on its connection", async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 307, { location: '/x/' })
  r.onResponseData(c, bytes(50))
  r.onResponseEnd()

  t.strictSame(await r.promise, { status: 307, headers: { location: '/x/' }, body: Buffer.alloc(0) },
    'its body is not kept')
  t.strictSame(c.aborted, [], 'the connection stays for the next request')
})

t.test("a redirect's long body is not read through: the answer is kept, its connection closed", async t => {
  for (const [how, start, data] of [
    ['declared', { location: '/x/', 'content-length': '51' }, []],
    ['counted', { location: '/x/' }, [bytes(30), bytes(21)]]
  ] as const) {
    const r = reader()
    const c = controller()
    r.onRequestStart(c)
    r.onResponseStart(c, 307, start)
    for (const chunk of data) r.onResponseData(c, chunk)

    t.strictSame(await r.promise, { status: 307, headers: start, body: Buffer.alloc(0) }, how)
    t.equal(c.aborted.length, 1, `${how}: the connection is closed`)
  }
})

t.test('an abort before the request reaches a connection fails at once, and ends it when it does', async t => {
  const r = reader()
  const reason = new DOMException('The upstream deadline passed', 'TimeoutError')
  r.abort(reason)
  t.equal(await rejection(r.promise), reason, 'the caller gets the reason it was aborted with')

  const c = controller()
  r.onRequestStart(c)
  t.strictSame(c.aborted, [reason], 'never sent')
})

t.test('an abort in flight ends the connection, handing undici an Error; later reports change nothing', async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 200, {})
  r.abort('gone')

  t.equal(await rejection(r.promise), 'gone')
  t.equal(c.aborted.length, 1)
  t.match(c.aborted[0], { message: 'the exchange was aborted', cause: 'gone' }, 'undici is given an Error')
  r.onResponseError(c, new Error('aborted'))
  r.onResponseEnd()
})

t.test('a transport error rejects with undici\'s error', async t => {
  const r = reader()
  const error = new Error('other side closed')
  r.onResponseError(controller(), error)
  t.equal(await rejection(r.promise), error)
})

t.test('the body is kept as received; a leading byte order mark is not part of its text', async t => {
  const r = reader()
  const c = controller()
  r.onRequestStart(c)
  r.onResponseStart(c, 200, {})
  r.onResponseData(c, Buffer.from([0xEF, 0xBB, 0xBF, 0x7B]))
  r.onResponseData(c, Buffer.from([0x7D]))
  r.onResponseEnd()
  const { body } = await r.promise
  t.same([...body], [0xEF, 0xBB, 0xBF, 0x7B, 0x7D])
  t.equal(responseText(body), '{}')
  t.same(parseResponseJson(body), {})
})
