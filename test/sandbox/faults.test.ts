// The fault upstream's record of what reached it (docs/testing.md, One way to fake the upstream), over raw requests:
// method, path, headers and body of every request, whatever its fault; the upstream keys written as their names
// and a caller's credentials as [redacted], so a printed record holds no secret; reset clears it.
import t from 'tap'
import { request } from 'undici'
import { operations } from '../../schemas/operations.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { startFaultUpstream } from '../../sandbox/faults.ts'

const keys = { passport: 'fault-passport-key-0001', dealer: 'fault-dealer-key-0002' }
const upstream = await startFaultUpstream({ keys, record: true })
t.teardown(() => upstream.close())

const PASSPORT = operations['passport.get_client'].path
const DISCOUNT = operations['dealer.discount'].path
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

async function post (url: string, headers: Record<string, string>, body: string) {
  try {
    const res = await request(url, { method: 'POST', headers, body })
    return { status: res.statusCode, text: await res.body.text() }
  } catch (error) {
    return { error: (error as { code?: string }).code }
  }
}

t.beforeEach(() => { upstream.reset() })

t.test('a request passed to the sandbox: method, path with its query, headers and body, as sent', async t => {
  const body = JSON.stringify(ivanov.identity)
  const res = await post(`${upstream.url}${PASSPORT}/?trace=1`,
    { ...FORM, 'x-authorization': keys.passport, 'x-request-id': 'req-1', traceparent: 'tp' }, body)
  t.match(res, { status: 200 }, 'the sandbox answered')
  const [got, ...more] = upstream.received()
  t.strictSame(more, [], 'one request')
  t.match(got, {
    method: 'POST',
    path: `${PASSPORT}/?trace=1`,
    headers: { ...FORM, 'x-authorization': '[passport key]', 'x-request-id': 'req-1', traceparent: 'tp' },
    body
  })
})

t.test('no secret in the record: keys by name wherever they stand, credentials redacted', async t => {
  await post(`${upstream.url}${DISCOUNT}/`, {
    ...FORM,
    'x-authorization': keys.dealer,
    'x-forwarded-key': `a ${keys.passport} b`,
    authorization: 'Bearer caller-token',
    cookie: 'session=abc',
    'x-console-key': 'console-secret'
  }, JSON.stringify({ uid_client: ivanov.identity.uid_client, note: keys.dealer }))
  const [got] = upstream.received()
  t.match(got?.headers, {
    'x-authorization': '[dealer key]',
    'x-forwarded-key': 'a [passport key] b',
    authorization: '[redacted]',
    cookie: '[redacted]',
    'x-console-key': '[redacted]'
  })
  t.equal(got?.body, JSON.stringify({ uid_client: ivanov.identity.uid_client, note: '[dealer key]' }))
  const printed = JSON.stringify(upstream.received())
  for (const secret of [keys.passport, keys.dealer, 'caller-token', 'session=abc', 'console-secret']) {
    t.notOk(printed.includes(secret), `${secret} is not in the record`)
  }
})

t.test('recorded whole whatever the fault, then reset clears it', async t => {
  upstream.queue('dealer.discount', { kind: 'reset' }, { kind: 'status', status: 500 })
  const body = JSON.stringify({ uid_client: ivanov.identity.uid_client })
  const headers = { ...FORM, 'x-authorization': keys.dealer }
  t.match(await post(`${upstream.url}${DISCOUNT}/`, headers, body), { error: String }, 'the socket reset')
  t.match(await post(`${upstream.url}${DISCOUNT}/`, headers, body), { status: 500 })
  t.strictSame(upstream.received().map(r => [r.path, r.body]), [[`${DISCOUNT}/`, body], [`${DISCOUNT}/`, body]])
  upstream.reset()
  t.strictSame(upstream.received(), [])
})

t.test('without record: true it keeps nothing, and says so rather than answer none', async t => {
  const quiet = await startFaultUpstream({ keys })
  t.teardown(() => quiet.close())
  t.match(await post(`${quiet.url}${PASSPORT}/`, { ...FORM, 'x-authorization': keys.passport },
    JSON.stringify(ivanov.identity)), { status: 200 })
  t.throws(() => quiet.received(), /record: true/)
})

t.test('the other origin records what reached it the same way', async t => {
  await post(`${upstream.elsewhere.url}/x`, { 'x-authorization': keys.passport }, 'hello')
  t.match(upstream.elsewhere.received(),
    [{ method: 'POST', path: '/x', headers: { 'x-authorization': '[passport key]' }, body: 'hello' }])
  t.strictSame(upstream.received(), [], 'not the upstream itself')
})
