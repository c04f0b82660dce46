// Trace context hygiene with tracing on, over real HTTP (the service on a port, the fault upstream recording
// what reached it): a malformed inbound traceparent starts a new trace, and the upstream receives that
// trace's traceparent, never the caller's value nor its tracestate; a valid one keeps its trace id on every
// upstream call. The SDK's W3C propagator does the parsing; these tests hold it to the standard.
import t, { type Test } from 'tap'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace'
import { ivanov } from '../../sandbox/seed.ts'
import { signToken } from '../../sandbox/sign.ts'
import { registerTracing } from '../../src/tracing/sdk.ts'
import { JWT_SECRET } from '../helpers/build-app.ts'
import { faultService, faultUpstream, readResponse } from '../helpers/fault-upstream.ts'

const exporter = new InMemorySpanExporter()
const tracing = registerTracing({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
t.teardown(() => tracing.shutdown())

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const SPAN_ID = 'b7ad6b7169203331'
const OURS = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/
const { login, uid_client: sub, vendor } = ivanov.identity
const authorization = `Bearer ${signToken({ sub, login, vendor }, JWT_SECRET)}`

const upstream = await faultUpstream(t)
const base = await faultService(t, upstream.url)

/** The profile with these headers: the trace id of its SERVER span and what the upstream received. */
async function profile (t: Test, headers: Record<string, string>) {
  upstream.reset()
  exporter.reset()
  const res = await fetch(`${base}/api/users/profile`, { headers: { ...headers, authorization } })
  t.equal((await readResponse(t, res)).status, 200)
  const server = exporter.getFinishedSpans().find(s => s.name === 'GET /api/users/profile')
  t.ok(server, 'a SERVER span')
  return {
    traceId: server?.spanContext().traceId,
    parent: server?.parentSpanContext?.spanId,
    received: upstream.received().map(r => r.headers)
  }
}

t.test('a valid traceparent keeps its trace id on every upstream call', async t => {
  const { traceId, parent, received } = await profile(t,
    { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: 'rojo=1' })
  t.equal(traceId, TRACE_ID)
  t.equal(parent, SPAN_ID)
  for (const got of received) {
    t.equal(OURS.exec(String(got.traceparent))?.[1], TRACE_ID)
    t.equal(got.tracestate, 'rojo=1')
  }
})

for (const traceparent of ['garbage-not-a-trace', `ff-${TRACE_ID}-${SPAN_ID}-01`, `00-${'0'.repeat(32)}-${SPAN_ID}-01`,
  `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`]) {
  t.test(`traceparent ${traceparent.slice(0, 24)}…: a new trace, and only its traceparent upstream`, async t => {
    const { traceId, parent, received } = await profile(t, { traceparent, tracestate: 'rojo=1' })
    t.equal(parent, undefined, 'a root span')
    t.not(traceId, TRACE_ID)
    for (const got of received) {
      t.equal(OURS.exec(String(got.traceparent))?.[1], traceId, 'the new trace')
      t.notOk('tracestate' in got, 'no tracestate of the dropped trace')
    }
  })
}

t.test('a tracestate past 32 members is cut to its first 32 by the SDK', async t => {
  const members = Array.from({ length: 33 }, (_, i) => `k${i}=v`)
  const { received } = await profile(t, { traceparent: `00-${TRACE_ID}-${SPAN_ID}-01`, tracestate: members.join(',') })
  for (const got of received) t.equal(got.tracestate, members.slice(0, 32).join(','))
})
