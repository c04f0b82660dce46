// The answer reader against what it replaced, undici's request() + body.text(), over real sockets: a
// node:net server writes generated answers byte for byte (a declared length, chunked with any chunk
// sizes, or read until the connection closes; split anywhere, a multi-byte character included; a byte
// order mark; cut short), and both must read the same status and text, or both must fail.
import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { setImmediate as turn } from 'node:timers/promises'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { Client, request } from 'undici'
import { responseText } from '../../src/upstream/transport/response-body.ts'
import { ResponseReader, dispatchPost } from '../../src/upstream/transport/response-reader.ts'

type Framing = 'length' | 'chunked' | 'close'

interface Answer {
  status: number
  framing: Framing
  body: Buffer
  /** Chunk sizes of a chunked body (the last one takes what is left). */
  chunks: number[]
  /** Where the bytes written are split into separate writes. */
  splits: number[]
  /** Bytes of the encoded body to leave out before the connection is closed: 0 sends it whole. */
  cut: number
}

const BOM = Buffer.from([0xEF, 0xBB, 0xBF])

function encode ({ status, framing, body, chunks }: Answer): { head: Buffer, payload: Buffer } {
  const lines = [`HTTP/1.1 ${status} X`, 'content-type: application/json; charset=utf-8']
  if (framing === 'length') lines.push(`content-length: ${body.length}`)
  if (framing === 'chunked') lines.push('transfer-encoding: chunked')
  if (framing === 'close') lines.push('connection: close')
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`)
  if (framing !== 'chunked') return { head, payload: body }
  const parts: Buffer[] = []
  let at = 0
  for (const size of [...chunks, body.length]) {
    const end = Math.min(body.length, at + Math.max(1, size))
    if (end <= at) break
    parts.push(Buffer.from(`${(end - at).toString(16)}\r\n`), body.subarray(at, end), Buffer.from('\r\n'))
    at = end
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return { head, payload: Buffer.concat(parts) }
}

/** Writes the answer in separate writes at its split points, then ends or cuts the connection. */
async function send (socket: Socket, answer: Answer): Promise<void> {
  const { head, payload } = encode(answer)
  const cut = Math.min(answer.cut, payload.length)
  const bytes = Buffer.concat([head, payload.subarray(0, payload.length - cut)])
  let at = 0
  for (const split of [...new Set(answer.splits.map(s => s % bytes.length))].sort((a, b) => a - b)) {
    if (split <= at) continue
    socket.write(bytes.subarray(at, split))
    at = split
    await turn()
  }
  socket.write(bytes.subarray(at))
  if (cut > 0) {
    await turn()
    socket.destroy()
  } else if (answer.framing === 'close') {
    socket.end()
  }
}

/** A server that answers `POST /<n>` with answers[n] once the request has arrived whole. */
async function rawServer (t: Test, answers: Map<number, Answer>) {
  const sockets = new Set<Socket>()
  const server = createServer(socket => {
    sockets.add(socket)
    socket.setNoDelay(true)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let received = Buffer.alloc(0)
    socket.on('data', chunk => {
      received = Buffer.concat([received, chunk])
      const end = received.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = received.subarray(0, end).toString('latin1')
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (received.length < end + 4 + length) return
      received = received.subarray(end + 4 + length)
      const n = Number(/^POST \/(\d+) /.exec(head)?.[1])
      send(socket, answers.get(n)!).catch(() => socket.destroy())
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy()
    server.close()
    await once(server, 'close')
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

type Outcome = { status: number, text: string } | 'failed'

const HEADERS = { 'content-type': 'application/json' }
const BODY = '{"login":"79161234567"}'

async function ours (origin: string, path: string): Promise<Outcome> {
  const client = new Client(origin)
  try {
    const reader = new ResponseReader({ maxBodyBytes: 1 << 20, discard: new Set(), discardLimit: 0 })
    const { status, body } = await dispatchPost(client, new URL(path, origin), HEADERS, BODY, reader)
    return { status, text: responseText(body) }
  } catch {
    return 'failed'
  } finally {
    await client.destroy()
  }
}

async function theirs (origin: string, path: string): Promise<Outcome> {
  const client = new Client(origin)
  try {
    const { statusCode, body } = await request(new URL(path, origin),
      { method: 'POST', headers: HEADERS, body: BODY, dispatcher: client })
    return { status: statusCode, text: await body.text() }
  } catch {
    return 'failed'
  } finally {
    await client.destroy()
  }
}

// Text with multi-byte characters (2, 3 and 4 bytes in UTF-8), sometimes after a byte order mark, and
// sometimes bytes that are not UTF-8 at all.
const body = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.boolean(),
      fc.string({ unit: 'grapheme', maxLength: 40 })).map(([bom, text]) => bom
      ? Buffer.concat([BOM, Buffer.from(text)])
      : Buffer.from(text))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('ж', '€', '😀', 'Привет, мир')
      .map(text => Buffer.from(`{"name":"${text}"}`))
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 20 }).map(bytes => Buffer.from(bytes)) }
)

const answer: fc.Arbitrary<Answer> = fc.record({
  status: fc.constantFrom(200, 201, 404, 422, 500, 503),
  framing: fc.constantFrom<Framing>('length', 'chunked', 'close'),
  body,
  chunks: fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 6 }),
  splits: fc.array(fc.nat(), { maxLength: 6 }),
  cut: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 10 }) })
})

t.test('the reader reads what request() + body.text() read, or both fail', async t => {
  const answers = new Map<number, Answer>()
  const origin = await rawServer(t, answers)
  let n = 0
  const outcomes = { read: 0, failed: 0, bom: 0 }
  await fc.assert(fc.asyncProperty(answer, async generated => {
    answers.set(++n, generated)
    const mine = await ours(origin, `/${n}`)
    answers.set(++n, generated)
    const reference = await theirs(origin, `/${n}`)
    if (mine === 'failed') outcomes.failed++
    else outcomes.read++
    if (generated.body.subarray(0, 3).equals(BOM) && generated.cut === 0) outcomes.bom++
    return JSON.stringify(mine) === JSON.stringify(reference)
  }), { seed: 21, numRuns: 80 })
  t.ok(outcomes.read > 0 && outcomes.failed > 0 && outcomes.bom > 0,
    `answers read, cut short and with a BOM (${JSON.stringify(outcomes)})`)
})
