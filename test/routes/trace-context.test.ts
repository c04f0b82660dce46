// Trace context hygiene over real HTTP, tracing off: the service on a port in front of the fault upstream, which
// records what reached it. A malformed or oversized tracing header never reaches the upstream (W3C Trace
// Context and Baggage limits); a valid traceparent reaches every upstream call unchanged, with its
// tracestate and the baggage.
import t, { type Test } from 'tap'
import { ivanov } from '../../sandbox/seed.ts'
import { signToken } from '../../sandbox/sign.ts'
import { JWT_SECRET } from '../helpers/build-app.ts'
import { faultService, faultUpstream, readResponse } from '../helpers/fault-upstream.ts'

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const SPAN_ID = 'b7ad6b7169203331'
const VALID = `00-${TRACE_ID}-${SPAN_ID}-01`
const list = (members: number, size = 4) =>
  Array.from({ length: members }, (_, i) => `k${i}=${'v'.repeat(size)}`).join(',')
const { login, uid_client: sub, vendor } = ivanov.identity
const authorization = `Bearer ${signToken({ sub, login, vendor }, JWT_SECRET)}`

// One service for every case: each case reads only the requests of its own profile.
const upstream = await faultUpstream(t)
const base = await faultService(t, upstream.url)

/** The profile with these inbound headers; answers the headers of every upstream request it made. */
async function forwarded (t: Test, headers: Record<string, string>) {
  upstream.reset()
  const res = await fetch(`${base}/api/users/profile`, { headers: { ...headers, authorization } })
  const { status } = await readResponse(t, res)
  t.equal(status, 200, 'the profile is served whatever the tracing headers')
  const received = upstream.received()
  t.ok(received.length >= 3, 'every operation called')
  return received.map(r => r.headers)
}

t.test('a valid traceparent keeps its trace id on every upstream call, with its ' +
  'tracestate and the baggage', async t => {
  const headers = {
    traceparent: VALID, tracestate: 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE', baggage: 'tenant=kia;ttl=60,app=ios'
  }
  for (const got of await forwarded(t, headers)) {
    t.equal(got.traceparent, VALID)
    t.equal(got.tracestate, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')
    t.equal(got.baggage, 'tenant=kia;ttl=60,app=ios')
  }
})

t.test('a later version is parsed as version 00 reads it, and passed on', async t => {
  const later = `cc-${TRACE_ID}-${SPAN_ID}-01-what-the-future-holds`
  for (const got of await forwarded(t, { traceparent: later })) t.equal(got.traceparent, later)
})

const malformed: Array<[string, string]> = [
  ['not a trace context at all', 'garbage-not-a-trace'],
  ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
  ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
  ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
  ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
  ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
  ['a long parent id', `00-${TRACE_ID}-${SPAN_ID}0-01`],
  ['version 00 with a fifth field', `${VALID}-extra`],
  ['two traceparents', `${VALID}, 00-${'1'.repeat(32)}-${SPAN_ID}-01`]
]
for (const [name, traceparent] of malformed) {
  t.test(`traceparent with ${name}: neither it nor its tracestate reaches the upstream`, async t => {
    for (const got of await forwarded(t, { traceparent, tracestate: 'rojo=1', baggage: 'tenant=kia' })) {
      t.notOk('traceparent' in got, 'no traceparent')
      t.notOk('tracestate' in got, 'no tracestate')
      t.equal(got.baggage, 'tenant=kia', 'the valid baggage still travels')
    }
  })
}

t.test('a tracestate without a traceparent is not forwarded', async t => {
  for (const got of await forwarded(t, { tracestate: 'rojo=1' })) t.notOk('tracestate' in got)
})

const badTracestates: Array<[string, string]> = [
  ['33 members', list(33)],
  ['more than 512 characters', list(5, 120)],
  ['an upper-case key', 'Rojo=1'],
  ['a key twice', 'rojo=1,congo=2,rojo=3'],
  ['a member without a value', 'rojo'],
  ['an equals sign in a value', 'rojo=a=b']
]
for (const [name, tracestate] of badTracestates) {
  t.test(`a tracestate with ${name} is dropped; its traceparent still travels`, async t => {
    for (const got of await forwarded(t, { traceparent: VALID, tracestate })) {
      t.equal(got.traceparent, VALID)
      t.notOk('tracestate' in got)
    }
  })
}

t.test('a tracestate at its limits (32 members) travels', async t => {
  for (const got of await forwarded(t, { traceparent: VALID, tracestate: list(32) })) t.equal(got.tracestate, list(32))
})

const badBaggage: Array<[string, string]> = [
  ['181 members', list(181)],
  ['more than 8,192 bytes', `big=${'v'.repeat(8190)}`],
  ['a member without a value', 'tenant'],
  ['a space inside a value', 'tenant=kia motors'],
  ['a non-ASCII value', 'tenant=киа']
]
for (const [name, baggage] of badBaggage) {
  t.test(`baggage with ${name} is dropped`, async t => {
    for (const got of await forwarded(t, { traceparent: VALID, baggage: Buffer.from(baggage).toString('latin1') })) {
      t.equal(got.traceparent, VALID)
      t.notOk('baggage' in got)
    }
  })
}

t.test('baggage at its limits (180 members) travels', async t => {
  for (const got of await forwarded(t, { baggage: list(180) })) t.equal(got.baggage, list(180))
})

t.test('a malformed sentry-trace or x-trace-id is dropped; well-formed ones travel', async t => {
  for (const got of await forwarded(t, { 'sentry-trace': 'not-sentry', 'x-trace-id': 'a b c' })) {
    t.notOk('sentry-trace' in got)
    t.notOk('x-trace-id' in got)
  }
  const sentry = `${TRACE_ID}-${SPAN_ID}-1`
  for (const got of await forwarded(t, { 'sentry-trace': sentry, 'x-trace-id': 'trace-1' })) {
    t.equal(got['sentry-trace'], sentry)
    t.equal(got['x-trace-id'], 'trace-1')
  }
})
