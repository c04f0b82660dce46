// The span tree of a profile and a console run, recorded by an in-memory exporter (the SDK's own test
// exporter, exporting each span as it ends): parentage, kinds, names, attributes, ERROR statuses, the
// traceparent the upstream receives, log lines joined to spans, and no secret or personal field in any
// attribute or event. Upstreams are faked by MockAgent: the hop spans come from our undici interceptor,
// which a MockAgent runs like any dispatcher.
import t, { type Test } from 'tap'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { Writable } from 'node:stream'
import * as fx from '../../schemas/fixtures.ts'
import { registerTracing } from '../../src/tracing/sdk.ts'
import { operations, type OperationName } from '../../schemas/operations.ts'
import { buildTestApp, CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import { respondToOperation, respondToOperations, type Reply, type Sent } from '../helpers/upstream-mock.ts'

const exporter = new InMemorySpanExporter()
const tracing = registerTracing({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
t.teardown(() => tracing.shutdown())
t.beforeEach(() => { exporter.reset() })

const PROFILE = '/api/users/profile'
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CALLER_SPAN = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`
const TOKEN = hs256()

const allFine: Record<OperationName, Reply> = {
  'passport.get_client': { status: 200, body: fx.passportFound },
  'dealer.discount': { status: 200, body: fx.discountWithBonuses },
  'dealer.client': { status: 200, body: fx.contractorResult }
}

const spans = () => exporter.getFinishedSpans()
const one = (t: Test, name: string, list = spans()): ReadableSpan => {
  const found = list.filter(s => s.name === name)
  t.equal(found.length, 1, `one span ${name}`)
  return found[0]!
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const childrenOf = (parent: ReadableSpan, list = spans()) =>
  list.filter(s => parentOf(s) === parent.spanContext().spanId)
const status = (span: ReadableSpan) => span.status.code

t.test('a profile: SERVER span in the caller trace, the profile work, one exchange ' +
  'and one CLIENT hop per call', async t => {
  const { app, upstream } = await buildTestApp(t)
  const received = respondToOperations(upstream, allFine)
  const res = await app.inject({
    url: PROFILE,
    headers: {
      ...bearer(TOKEN),
      traceparent: TRACEPARENT,
      tracestate: 'vendor=opaque',
      baggage: 'k=v',
      'x-trace-id': 'abc'
    }
  })
  t.equal(res.statusCode, 200)

  const all = spans()
  t.ok(all.every(s => s.spanContext().traceId === TRACE_ID), "every span is in the caller's trace")
  const server = one(t, `GET ${PROFILE}`)
  t.equal(server.kind, SpanKind.SERVER)
  t.equal(parentOf(server), CALLER_SPAN, "the SERVER span is the child of the caller's span")
  t.match(server.attributes,
    {
      'http.request.method': 'GET',
      'http.route': PROFILE,
      'url.path': PROFILE,
      'http.response.status_code': 200,
      'bff.request_id': res.headers['x-request-id']
    })
  t.equal(status(server), SpanStatusCode.UNSET)

  const profile = one(t, 'profile')
  t.equal(parentOf(profile), server.spanContext().spanId)
  t.equal(profile.kind, SpanKind.INTERNAL)
  t.match(profile.attributes,
    { 'bff.profile.single_flight': 'started', 'bff.profile.outcome': 'ok', 'bff.profile.freshness': 'fresh' })
  t.notOk('bff.profile.degraded' in profile.attributes)

  const exchanges = childrenOf(profile)
  t.strictSame(exchanges.map(s => s.name).sort(),
    ['upstream dealer.client', 'upstream dealer.discount', 'upstream passport.get_client'])
  for (const exchange of exchanges) {
    const operation = exchange.attributes['bff.upstream.operation'] as OperationName
    t.match(exchange.attributes,
      { 'bff.upstream.outcome': 'ok', 'http.response.status_code': 200, 'bff.upstream.redirects': 0 }, operation)
    t.equal(status(exchange), SpanStatusCode.UNSET)
    const hops = childrenOf(exchange)
    t.equal(hops.length, 1, `${operation}: one hop`)
    const hop = hops[0]!
    t.equal(hop.kind, SpanKind.CLIENT)
    t.equal(hop.name, 'POST')
    t.match(hop.attributes, {
      'http.request.method': 'POST',
      'url.full': `https://upstream.test${operations[operation].path}`,
      'server.address': 'upstream.test',
      'server.port': 443,
      'http.response.status_code': 200,
      'bff.upstream.operation': operation,
      'bff.upstream.hop': 0
    })
    const got = received.find(r => r.operation === operation)!
    t.equal(got.headers.traceparent, `00-${TRACE_ID}-${hop.spanContext().spanId}-01`,
      `${operation}: the upstream's parent is our CLIENT span`)
    t.equal(got.headers.tracestate, 'vendor=opaque', 'tracestate carried on')
    t.equal(got.headers.baggage, 'k=v', 'baggage passes through unchanged')
    t.equal(got.headers['x-trace-id'], 'abc')
    t.equal(got.headers['x-request-id'], res.headers['x-request-id'])
  }
  t.equal(all.length, 1 + 1 + 3 + 3, 'nothing else: server, profile, three exchanges, three hops')
})

t.test('a caller without traceparent starts a new trace that reaches the upstream', async t => {
  const { app, upstream } = await buildTestApp(t)
  const received = respondToOperations(upstream, allFine)
  const res = await app.inject({ url: PROFILE, headers: { ...bearer(TOKEN), tracestate: 'orphan=1' } })
  t.equal(res.statusCode, 200)
  const server = one(t, `GET ${PROFILE}`)
  t.equal(parentOf(server), undefined, 'a root span')
  const traceId = server.spanContext().traceId
  t.not(traceId, TRACE_ID)
  for (const got of received) {
    t.match(got.headers.traceparent, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    t.notOk('tracestate' in got.headers, 'a tracestate without its traceparent is not sent beside a new trace')
  }
})

t.test("a caller's decision not to sample is kept: nothing recorded, the upstream " +
  "still in the caller's trace", async t => {
  const { app, upstream } = await buildTestApp(t)
  const received = respondToOperations(upstream, allFine)
  const res = await app.inject({
    url: PROFILE,
    headers: { ...bearer(TOKEN), traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-00` }
  })
  t.equal(res.statusCode, 200)
  t.equal(spans().length, 0, 'no span recorded')
  t.equal(received.length, 3)
  for (const got of received) {
    t.match(got.headers.traceparent, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`),
      'unsampled flag carried on')
  }
})

t.test('a 307 hop is a CLIENT span of its own under the same exchange, and a later call goes straight', async t => {
  const { app, upstream } = await buildTestApp(t)
  const received: Sent[] = []
  const path = operations['passport.get_client'].path
  respondToOperation(upstream, 'passport.get_client',
    { status: 307, headers: { location: `${path}/`, 'content-type': 'text/html' } }, { into: received })
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound },
    { into: received, path: `${path}/` })
  respondToOperation(upstream, 'dealer.discount', allFine['dealer.discount'], { into: received })
  respondToOperation(upstream, 'dealer.client', allFine['dealer.client'], { into: received })
  const res = await app.inject({ url: PROFILE, headers: { ...bearer(TOKEN), traceparent: TRACEPARENT } })
  t.equal(res.statusCode, 200)

  const exchange = one(t, 'upstream passport.get_client')
  t.match(exchange.attributes,
    { 'bff.upstream.outcome': 'ok', 'http.response.status_code': 200, 'bff.upstream.redirects': 1 })
  const hops = childrenOf(exchange).sort((a, b) =>
    Number(a.attributes['bff.upstream.hop']) - Number(b.attributes['bff.upstream.hop']))
  t.strictSame(hops.map(h =>
    [h.kind, h.attributes['bff.upstream.hop'], h.attributes['http.response.status_code'], h.attributes['url.full']]), [
    [SpanKind.CLIENT, 0, 307, `https://upstream.test${path}`],
    [SpanKind.CLIENT, 1, 200, `https://upstream.test${path}/`]
  ])
  t.ok(hops.every(h => status(h) === SpanStatusCode.UNSET), 'a redirect is not an error')
  const passportCalls = received.filter(r => r.operation === 'passport.get_client')
  t.strictSame(passportCalls.map(r => r.headers.traceparent),
    hops.map(h => `00-${TRACE_ID}-${h.spanContext().spanId}-01`),
    'each hop carries its own span as the parent')
})

t.test('a degraded section: its exchange and hop are ERROR, the profile span names it,' +
  ' the answer is still 200', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondToOperations(upstream, { ...allFine, 'dealer.client': { status: 500, body: { oops: true } } })
  const res = await app.inject({ url: PROFILE, headers: bearer(TOKEN) })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-degraded'], 'contractor')
  const exchange = one(t, 'upstream dealer.client')
  t.equal(status(exchange), SpanStatusCode.ERROR)
  t.match(exchange.attributes,
    { 'bff.upstream.outcome': 'status', 'error.type': 'status', 'http.response.status_code': 500 })
  const [hop] = childrenOf(exchange)
  t.equal(status(hop!), SpanStatusCode.ERROR, 'a 5xx hop is an error')
  t.equal(status(one(t, 'upstream dealer.discount')), SpanStatusCode.UNSET)
  const profile = one(t, 'profile')
  t.equal(status(profile), SpanStatusCode.ERROR)
  t.match(profile.attributes, { 'bff.profile.outcome': 'degraded', 'bff.profile.degraded': ['contractor'] })
  t.equal(status(one(t, `GET ${PROFILE}`)), SpanStatusCode.UNSET, 'a served profile is no server error')
})

t.test('each passport failure mapping', async t => {
  interface Case {
    name: string
    env?: Record<string, string>
    reply: Reply
    front: number
    outcome: string
    error: boolean
    code?: string
  }
  const cases: Case[] = [
    {
      name: '400 CLIENT_NOT_FOUND is 404, not an error',
      reply: { status: 400, body: fx.passportNotFound },
      front: 404,
      outcome: 'not_found',
      error: false
    },
    {
      name: 'a 5xx is 502',
      reply: { status: 503, body: {} },
      front: 502,
      outcome: 'status',
      error: true,
      code: 'UPSTREAM_BAD_RESPONSE'
    },
    {
      name: 'a broken contract is 502',
      reply: { status: 200, body: { success: true } },
      front: 502,
      outcome: 'contract',
      error: true,
      code: 'UPSTREAM_BAD_RESPONSE'
    },
    {
      name: 'no connection is 503',
      reply: { error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
      front: 503,
      outcome: 'connect',
      error: true,
      code: 'UPSTREAM_UNAVAILABLE'
    },
    {
      name: 'too slow is 504',
      env: { UPSTREAM_TIMEOUT_MS: '50' },
      reply: { status: 200, body: fx.passportFound, delay: 1000 },
      front: 504,
      outcome: 'timeout',
      error: true,
      code: 'UPSTREAM_TIMEOUT'
    }
  ]
  for (const c of cases) {
    t.test(c.name, async t => {
      exporter.reset()
      const { app, upstream } = await buildTestApp(t, c.env)
      respondToOperations(upstream, { 'passport.get_client': c.reply })
      const res = await app.inject({ url: PROFILE, headers: bearer(TOKEN) })
      t.equal(res.statusCode, c.front)
      const expected = c.error ? SpanStatusCode.ERROR : SpanStatusCode.UNSET
      const exchange = one(t, 'upstream passport.get_client')
      t.equal(status(exchange), expected, 'exchange status')
      t.equal(exchange.attributes['bff.upstream.outcome'], c.outcome)
      const profile = one(t, 'profile')
      t.equal(status(profile), expected, 'profile status')
      t.equal(profile.attributes['bff.profile.outcome'], c.error ? 'failed' : 'not_found')
      if (c.code !== undefined) t.equal(profile.attributes['error.type'], c.code)
      const server = one(t, `GET ${PROFILE}`)
      t.equal(server.attributes['http.response.status_code'], c.front)
      t.equal(status(server), c.front >= 500 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET,
        'only a 5xx answer is a server error')
      t.notOk(spans().some(s => s.name === 'upstream dealer.discount' || s.name === 'upstream dealer.client'),
        'no dealer call')
      const hops = childrenOf(exchange)
      t.ok(hops.length >= 1 && hops.every(h => h.kind === SpanKind.CLIENT))
      if (c.outcome === 'connect') {
        t.ok(hops.every(h => status(h) === SpanStatusCode.ERROR && typeof h.attributes['error.type'] === 'string'),
          'a hop with no answer is an error')
      } else if (c.outcome !== 'timeout') {
        t.ok(hops.every(h => h.attributes['http.response.status_code'] === (c.reply as { status: number }).status))
      }
    })
  }
})

t.test('an open breaker: the refusal is an event with its state, no hop is sent', async t => {
  const { app, upstream } = await buildTestApp(t,
    { UPSTREAM_BREAKER_MIN_CALLS: '1', UPSTREAM_BREAKER_HALF_OPEN_MS: '60000' })
  respondToOperations(upstream, { 'passport.get_client': { status: 500, body: {} } })
  t.equal((await app.inject({ url: PROFILE, headers: bearer(TOKEN) })).statusCode, 502)
  exporter.reset()
  const res = await app.inject({ url: PROFILE, headers: bearer(TOKEN) })
  t.equal(res.statusCode, 503)
  const exchange = one(t, 'upstream passport.get_client')
  t.equal(status(exchange), SpanStatusCode.ERROR)
  t.match(exchange.attributes, { 'bff.upstream.outcome': 'breaker_open', 'bff.upstream.redirects': 0 })
  t.strictSame(exchange.events.map(e => [e.name, e.attributes]),
    [['breaker_refused', { 'bff.upstream.breaker.state': 'open' }]])
  t.equal(childrenOf(exchange).length, 0, 'nothing went on the wire')
  t.equal(status(one(t, `GET ${PROFILE}`)), SpanStatusCode.ERROR)
})

t.test('single-flight: the request that joins a run in flight says so and links to the run', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondToOperations(upstream, {
    ...allFine, 'passport.get_client': { status: 200, body: fx.passportFound, delay: 100 }
  })
  const [a, b] = await Promise.all([
    app.inject({ url: PROFILE, headers: { ...bearer(TOKEN), 'x-request-id': 'first' } }),
    app.inject({ url: PROFILE, headers: { ...bearer(TOKEN), 'x-request-id': 'second' } })
  ])
  t.equal(a.statusCode, 200)
  t.equal(b.statusCode, 200)
  const profiles = spans().filter(s => s.name === 'profile')
  const started = profiles.find(s => s.attributes['bff.profile.single_flight'] === 'started')!
  const joined = profiles.find(s => s.attributes['bff.profile.single_flight'] === 'joined')!
  t.ok(started && joined, 'one started, one joined')
  t.equal(joined.attributes['bff.profile.shared_with'], 'first')
  t.strictSame(joined.links.map(l => l.context.spanId), [started.spanContext().spanId], 'linked to the run it shared')
  t.equal(childrenOf(joined).length, 0, 'the upstream calls are under the run that made them')
  t.equal(childrenOf(started).length, 3)
})

t.test('the console exchange is traced the same way', async t => {
  const { app, upstream } = await buildTestApp(t)
  const received = respondToOperations(upstream, { 'dealer.client': allFine['dealer.client'] })
  const res = await app.inject({
    method: 'POST',
    url: '/request-console',
    headers: { 'x-console-key': CONSOLE_KEY, traceparent: TRACEPARENT },
    payload: { operation: 'dealer.client', params: { uid_client: fx.IVANOV.uid_client } }
  })
  t.equal(res.statusCode, 200)
  const server = one(t, 'POST /request-console')
  t.equal(parentOf(server), CALLER_SPAN)
  const [exchange] = childrenOf(server)
  t.equal(exchange?.name, 'upstream dealer.client')
  t.match(exchange?.attributes, { 'bff.upstream.outcome': 'ok', 'http.response.status_code': 200 })
  const [hop] = childrenOf(exchange!)
  t.equal(hop?.kind, SpanKind.CLIENT)
  t.equal(received[0]?.headers.traceparent, `00-${TRACE_ID}-${hop!.spanContext().spanId}-01`)
})

t.test('no key, token, console key, login or uid_client in any span attribute or event', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondToOperations(upstream, allFine)
  respondToOperations(upstream, { 'passport.get_client': allFine['passport.get_client'] })
  t.equal((await app.inject({
    url: `${PROFILE}?login=${fx.IVANOV.login}`,
    headers: { ...bearer(TOKEN), traceparent: TRACEPARENT }
  })).statusCode, 200)
  t.equal((await app.inject({
    method: 'POST',
    url: '/request-console',
    headers: { 'x-console-key': CONSOLE_KEY, authorization: `Bearer ${TOKEN}` },
    payload: { operation: 'passport.get_client', params: fx.passportParams }
  })).statusCode, 200)
  const all = spans()
  t.ok(all.length >= 10, 'a profile and a console run were recorded')
  const values = all.flatMap(s => [
    s.name,
    s.status.message ?? '',
    ...Object.entries(s.attributes).flat(),
    ...s.events.flatMap(e => [e.name, ...Object.entries(e.attributes ?? {}).flat()]),
    ...Object.entries(s.resource.attributes).flat()
  ]).map(v => JSON.stringify(v).toLowerCase())
  const secrets = {
    PASSPORT_KEY,
    DEALER_KEY,
    CONSOLE_KEY,
    JWT_SECRET,
    TOKEN,
    login: fx.IVANOV.login,
    uid_client: fx.IVANOV.uid_client,
    'the authorization headers': 'authorization',
    'a last name': fx.contractor.last_name,
    'a phone number': '123-45-67'
  }
  for (const [name, secret] of Object.entries(secrets)) {
    t.notOk(values.some(v => v.includes(secret.toLowerCase())), `${name} is in no span`)
  }
  t.notOk(all.some(s => 'url.query' in s.attributes), 'no query string recorded')
})

t.test('an unknown path is a span without route or path, the query never recorded; probes make no span', async t => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({
    url: `/api/users/${fx.IVANOV.uid_client}?token=abc`,
    headers: { traceparent: TRACEPARENT }
  })
  t.equal(res.statusCode, 404)
  const [span, ...more] = spans()
  t.equal(more.length, 0)
  t.equal(span?.name, 'GET')
  t.equal(span?.kind, SpanKind.SERVER)
  t.notOk('http.route' in span!.attributes)
  t.notOk('url.path' in span!.attributes, 'what the caller typed is not recorded')
  t.match(span?.attributes, { 'http.request.method': 'GET', 'http.response.status_code': 404 })
  t.equal(status(span!), SpanStatusCode.UNSET, 'a 404 is not a server error')
  exporter.reset()
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
  t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200)
  t.equal(spans().length, 0, 'no span for health probes')
})

t.test('log lines written while serving a request carry its trace_id and span_id', async t => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const { app, upstream } = await buildTestApp(t, {}, { logger: { level: 'info', stream } })
  respondToOperations(upstream, { ...allFine, 'dealer.discount': { status: 500, body: {} } })
  const res = await app.inject({ url: PROFILE, headers: { ...bearer(TOKEN), traceparent: TRACEPARENT } })
  t.equal(res.statusCode, 200)
  const profile = one(t, 'profile')
  const server = one(t, `GET ${PROFILE}`)
  const degraded = lines.find(l => l.msg === 'profile section degraded')
  t.match(degraded, { trace_id: TRACE_ID, span_id: profile.spanContext().spanId, trace_flags: '01' },
    'the work logs under the profile span')
  const completed = lines.find(l => l.msg === 'request completed')
  t.match(completed, { trace_id: TRACE_ID, span_id: server.spanContext().spanId },
    'the access line under the SERVER span')
  const ofRequest = lines.filter(l => l.reqId === res.headers['x-request-id'] && l.msg !== 'incoming request')
  t.ok(ofRequest.length >= 2)
  t.ok(ofRequest.every(l => l.trace_id === TRACE_ID), 'every line once the span started')
})
