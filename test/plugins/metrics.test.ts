// GET /metrics through the whole app (inject) with the upstream faked by MockAgent: who may scrape, what
// each front request and upstream exchange records, and that no label carries anything about a user.
import * as prom from 'prom-client'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { breakerMetrics } from '../../src/upstream/breaker.ts'
import type { BreakerState } from '../../src/upstream/client.ts'
import { createDriftTracker, MAX_PASSTHROUGH_PATHS } from '../../src/upstream/contract/drift.ts'
import { MAX_CONTRACT_PATHS, normalizeContractPath, OTHER_PATH, upstreamMetrics } from '../../src/upstream/metrics.ts'
import type { OperationName } from '../../schemas/operations.ts'
import { operations, operationNames } from '../../schemas/operations.ts'
import { buildTestApp, CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY, type TestApp } from '../helpers/build-app.ts'
import { respondToOperation, respondToOperations, slashRedirect } from '../helpers/upstream-mock.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const PROFILE = '/api/users/profile'
const IVANOV_TOKEN = hs256()

interface Sample { name: string, labels: Record<string, string>, value: number }

/** The samples of a Prometheus text exposition (no escaped quotes in our label values). */
function parse (text: string): Sample[] {
  return text.split('\n').filter(line => line !== '' && !line.startsWith('#')).map(line => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(m => [m[1], m[2]]))
    return { name: match[1]!, labels, value: Number(match[3]) }
  })
}

/** The value of the one sample with this name and at least these labels; undefined when there is none. */
function value (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

async function scrape (app: TestApp['app']): Promise<{ text: string, samples: Sample[] }> {
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_KEY}` } })
  if (res.statusCode !== 200) throw new Error(`scrape answered ${res.statusCode}`)
  return { text: res.body, samples: parse(res.body) }
}

const metricsApp = (t: Parameters<typeof buildTestApp>[0]) => buildTestApp(t, { METRICS_API_KEY: METRICS_KEY })

t.test('off unless METRICS_API_KEY is set: the route does not exist', async t => {
  const { app } = await buildTestApp(t)
  t.equal(app.metrics, null)
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_KEY}` } })
  t.equal(res.statusCode, 404)
  t.equal(res.json().code, 'NOT_FOUND')
})

t.test('only the metrics key scrapes: no header, a mobile token, the console key, a near miss are 401', async t => {
  const { app } = await metricsApp(t)
  const refused = [
    {},
    bearer(IVANOV_TOKEN),
    { 'x-console-key': CONSOLE_KEY },
    { authorization: `Bearer ${CONSOLE_KEY}` },
    { authorization: `Bearer ${METRICS_KEY}x` },
    { authorization: `Basic ${METRICS_KEY}` },
    { 'x-metrics-key': METRICS_KEY }
  ]
  for (const headers of refused) {
    const res = await app.inject({ url: '/metrics', headers })
    t.equal(res.statusCode, 401, JSON.stringify(Object.keys(headers)))
    t.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"')
    t.match(res.json(), { statusCode: 401, code: 'UNAUTHORIZED' })
    t.notOk(res.body.includes('bff_'), 'no metric in a refusal')
  }

  const res = await app.inject({ url: '/metrics', headers: { authorization: `bearer ${METRICS_KEY}` } })
  t.equal(res.statusCode, 200, 'the scheme is case-insensitive')
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  t.equal(res.headers['cache-control'], 'no-store')
  const samples = parse(res.body)
  t.ok(value(samples, 'process_cpu_user_seconds_total') !== undefined, 'default process metrics')
  t.ok(value(samples, 'nodejs_eventloop_lag_seconds') !== undefined, 'default Node.js metrics')
})

t.test('an operator endpoint: absent from the OpenAPI document', async t => {
  const { app } = await metricsApp(t)
  const doc = (await app.inject('/docs/json')).json()
  t.ok(doc.paths[PROFILE], 'the document lists the routes')
  t.notOk(doc.paths['/metrics'])
})

t.test('every app has its own registry: two apps in one process count apart', async t => {
  const a = await metricsApp(t)
  const b = await metricsApp(t)
  await a.app.inject('/health/live')
  await a.app.inject('/health/live')
  await b.app.inject('/health/live')
  const live = { route: '/health/live', method: 'GET', status_code: '200' }
  t.equal(value((await scrape(a.app)).samples, 'bff_http_requests_total', live), 2)
  t.equal(value((await scrape(b.app)).samples, 'bff_http_requests_total', live), 1)
})

t.test('front requests by route pattern, method and status; never the raw URL', async t => {
  const { app, agent, upstream } = await metricsApp(t)
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 200, body: fx.discountWithBonuses })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: fx.contractorResult })

  t.equal((await app.inject({ url: `${PROFILE}?login=${fx.IVANOV.login}`, headers: bearer(IVANOV_TOKEN) })).statusCode,
    200)
  t.equal((await app.inject({ url: PROFILE })).statusCode, 401)
  t.equal((await app.inject({ url: `/api/users/${fx.IVANOV.uid_client}` })).statusCode, 404)
  t.equal((await app.inject({ url: `/${fx.PETROVA.login}`, method: 'DELETE' })).statusCode, 404)
  agent.assertNoPendingInterceptors()

  const { text, samples } = await scrape(app)
  t.equal(value(samples, 'bff_http_requests_total', { route: PROFILE, method: 'GET', status_code: '200' }), 1)
  t.equal(value(samples, 'bff_http_requests_total', { route: PROFILE, method: 'GET', status_code: '401' }), 1)
  t.equal(value(samples, 'bff_http_requests_total', { route: 'not_found', method: 'GET', status_code: '404' }), 1)
  t.equal(value(samples, 'bff_http_requests_total', { route: 'not_found', method: 'DELETE', status_code: '404' }), 1)
  t.equal(value(samples, 'bff_http_request_duration_seconds_count',
    { route: PROFILE, method: 'GET', status_code: '200' }), 1)
  t.equal(value(samples, 'bff_http_request_duration_seconds_bucket',
    { route: PROFILE, status_code: '200', le: '+Inf' }), 1)
  const profileSum = value(samples, 'bff_http_request_duration_seconds_sum', { route: PROFILE, status_code: '200' })
  t.ok(profileSum !== undefined && profileSum > 0 && profileSum < 60, `latency in seconds, not ms (${profileSum})`)
  const routes = new Set(samples.filter(s => s.name === 'bff_http_requests_total').map(s => s.labels.route))
  t.strictSame([...routes].sort(), ['/api/users/profile', 'not_found'], 'one series per route pattern')

  // Nothing that names or opens anything: ids, logins, the token, any configured key.
  const secrets = [fx.IVANOV.uid_client, fx.IVANOV.login, fx.PETROVA.login, IVANOV_TOKEN, JWT_SECRET, PASSPORT_KEY,
    DEALER_KEY, CONSOLE_KEY, METRICS_KEY]
  for (const secret of secrets) {
    t.notOk(text.toLowerCase().includes(secret.toLowerCase()), `no ${secret.slice(0, 8)}… in the metrics`)
  }
})

t.test('upstream exchanges by operation and outcome, hops followed, degraded sections', async t => {
  const { app, agent, upstream } = await metricsApp(t)
  const passport = operations['passport.get_client'].path
  // The passport moved to its slash path (one hop), the discount fails, the contractor is fine.
  upstream.intercept({ path: passport, method: 'POST' }).reply(...slashRedirect(passport))
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound }, { path: `${passport}/` })
  respondToOperation(upstream, 'dealer.discount', { status: 500, body: { success: false } })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: fx.contractorResult })

  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  agent.assertNoPendingInterceptors()
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-degraded'], 'discount')

  const { samples } = await scrape(app)
  t.equal(value(samples, 'bff_upstream_requests_total', { operation: 'passport.get_client', outcome: 'ok' }), 1)
  t.equal(value(samples, 'bff_upstream_requests_total', { operation: 'dealer.discount', outcome: 'status' }), 1)
  t.equal(value(samples, 'bff_upstream_requests_total', { operation: 'dealer.client', outcome: 'ok' }), 1)
  t.equal(value(samples, 'bff_upstream_request_duration_seconds_count',
    { operation: 'dealer.discount', outcome: 'status' }), 1)
  t.equal(value(samples, 'bff_upstream_redirects_total', { operation: 'passport.get_client' }), 1)
  t.equal(value(samples, 'bff_upstream_redirects_total', { operation: 'dealer.client' }), 0,
    'known series start at zero')
  t.equal(value(samples, 'bff_profile_degraded_sections_total', { section: 'discount' }), 1)
  t.equal(value(samples, 'bff_profile_degraded_sections_total', { section: 'contractor' }), 0)
  t.equal(value(samples, 'bff_upstream_contract_violations_total', { operation: 'dealer.discount' }), undefined,
    'an error status is an outcome, not a field-level violation')
  for (const operation of operationNames) {
    t.equal(value(samples, 'bff_upstream_breaker_state', { operation }), 0, `${operation} breaker reported closed`)
  }
})

t.test('contract violations by operation and field path, array indexes folded', async t => {
  const { app, agent, upstream } = await metricsApp(t)
  // Breadcrumbs 1 and 3 carry their data as an object instead of JSON text: one drifted field.
  const drifted = fx.catalogCarsView.map((crumb, i) => i % 2 === 1 ? { ...crumb, data: fx.breadcrumbData } : crumb)
  respondToOperation(upstream, 'passport.get_client',
    { status: 200, body: { ...fx.passportFound, catalog_cars_view: drifted } })

  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  agent.assertNoPendingInterceptors()
  t.equal(res.statusCode, 502)

  const { samples } = await scrape(app)
  t.equal(value(samples, 'bff_upstream_requests_total', { operation: 'passport.get_client', outcome: 'contract' }), 1)
  const violations = samples.filter(s => s.name === 'bff_upstream_contract_violations_total')
  t.strictSame(violations.map(s => [s.labels.operation, s.labels.path, s.value]),
    [['passport.get_client', '/catalog_cars_view/*/data', 2]])
})

t.test('degraded sections count per answer sent, stale ones per load, both through the profile observer', async t => {
  const { app, upstream } = await metricsApp(t)
  // First a fresh profile without its contractor: the copy keeps the passport and the discount.
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 200, body: fx.discountWithBonuses })
  respondToOperation(upstream, 'dealer.client', { status: 500, body: { success: false } })
  t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })).headers['x-degraded'], 'contractor')
  await new Promise(resolve => setImmediate(resolve))
  // Then a burst of the same caller with both dealers down: the discount from the copy, the contractor degraded.
  respondToOperations(upstream, {
    'passport.get_client': { status: 200, body: fx.passportFound, persist: true },
    'dealer.discount': { status: 500, body: {}, persist: true },
    'dealer.client': { status: 500, body: {}, persist: true }
  })
  const burst = await Promise.all([1, 2, 3].map(() => app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })))
  for (const res of burst) {
    t.equal(res.headers['x-degraded'], 'contractor')
    t.equal(res.headers['x-stale'], 'discount')
  }

  const { samples } = await scrape(app)
  // However many loads the burst shared (single-flight), each answer was sent degraded.
  const loads = value(samples, 'bff_upstream_requests_total', { operation: 'passport.get_client', outcome: 'ok' })! - 1
  t.ok(loads >= 1 && loads <= 3)
  t.equal(value(samples, 'bff_profile_degraded_sections_total', { section: 'contractor' }), 4, 'one per answer')
  t.equal(value(samples, 'bff_profile_stale_sections_total', { section: 'discount', reason: 'status' }), loads,
    'one per load')
})

t.test('contract path labels: indexes folded, odd characters replaced, length and count bounded', async t => {
  t.equal(normalizeContractPath('/catalog_cars_view/3/data'), '/catalog_cars_view/*/data')
  t.equal(normalizeContractPath('/a/12/b/0'), '/a/*/b/*')
  t.equal(normalizeContractPath('/client/phone2'), '/client/phone2', 'digits inside a name stay')
  t.equal(normalizeContractPath('/data/ключ x"y'), '/data/_____x_y')
  t.ok(normalizeContractPath(`/${'a'.repeat(500)}`).length <= 120)

  const registry = new prom.Registry()
  const observer = upstreamMetrics(prom, registry)
  for (let i = 0; i < MAX_CONTRACT_PATHS + 50; i++) {
    observer.exchange({
      operation: 'dealer.client',
      outcome: 'contract',
      status: 200,
      duration_ms: 3,
      hops: 0,
      contractErrors: [{ path: `/data/field_${i}`, message: 'must be string' }]
    })
  }
  const samples = parse(await registry.metrics()).filter(s => s.name === 'bff_upstream_contract_violations_total')
  t.equal(samples.length, MAX_CONTRACT_PATHS + 1, 'the cap plus one overflow series')
  t.equal(value(samples, 'bff_upstream_contract_violations_total', { path: OTHER_PATH }), 50)
})

t.test('the upstream client reports its breakers to the gauge', async t => {
  const { app, agent, upstream } = await buildTestApp(t,
    { METRICS_API_KEY: METRICS_KEY, UPSTREAM_BREAKER_MIN_CALLS: '1' })
  respondToOperation(upstream, 'dealer.discount', { status: 500, body: { success: false } })
  const params = { uid_client: fx.IVANOV.uid_client }
  const failure = (call: Promise<unknown>) => call.then(() => 'answered', (error: { reason?: string }) => error.reason)
  t.equal(await failure(app.upstream.call('dealer.discount', params)), 'status')
  t.equal(await failure(app.upstream.call('dealer.discount', params)), 'breaker_open', 'open: nothing sent')
  agent.assertNoPendingInterceptors()

  const { samples } = await scrape(app)
  t.equal(value(samples, 'bff_upstream_breaker_state', { operation: 'dealer.discount' }), 2, 'open')
  t.equal(value(samples, 'bff_upstream_breaker_state', { operation: 'dealer.client' }), 0, 'the others stay closed')
  t.equal(value(samples, 'bff_upstream_requests_total', { operation: 'dealer.discount', outcome: 'breaker_open' }), 1)
})

t.test('breaker state gauge: 0 closed, 1 half-open, 2 open', async t => {
  const registry = new prom.Registry()
  const states = Object.fromEntries(operationNames.map(operation => [operation, 'closed'])) as
    Record<OperationName, BreakerState>
  breakerMetrics(prom, registry, () => states)
  const state = async () =>
    value(parse(await registry.metrics()), 'bff_upstream_breaker_state', { operation: 'dealer.discount' })
  t.equal(await state(), 0)
  states['dealer.discount'] = 'open'
  t.equal(await state(), 2, 'read at each scrape')
  states['dealer.discount'] = 'half_open'
  t.equal(await state(), 1)
  states['dealer.discount'] = 'closed'
  t.equal(await state(), 0)
})

t.test('new key paths in pass-through parts are counted once each; documented ones never', async t => {
  const { app, agent, upstream } = await metricsApp(t)
  const newDiscount = {
    ...fx.discountWithBonuses,
    data: { ...fx.discountWithBonuses.data, tier: { name: 'gold', perks: [{ code: 'x' }] } }
  }
  const newContractor = {
    ...fx.contractorResult,
    data: { ...fx.contractor, last_dealer: { id: 'D1', city: 'Москва' } }
  }
  for (let i = 0; i < 2; i++) {
    respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
    respondToOperation(upstream, 'dealer.discount', { status: 200, body: newDiscount })
    respondToOperation(upstream, 'dealer.client', { status: 200, body: newContractor })
    // One after the other: two sets of exchanges, the second adds nothing new.
    t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })).statusCode, 200)
  }
  agent.assertNoPendingInterceptors()
  const { samples } = await scrape(app)
  // /data/tier, /data/tier/name, /data/tier/perks, /data/tier/perks/*, /data/tier/perks/*/code; balance,
  // currency, level and expires_at are in the schema's example.
  t.equal(value(samples, 'bff_upstream_passthrough_new_paths_total', { operation: 'dealer.discount' }), 5)
  t.equal(value(samples, 'bff_upstream_passthrough_new_paths_total', { operation: 'dealer.client' }), 2,
    'last_dealer id and city')
  t.equal(value(samples, 'bff_upstream_passthrough_new_paths_total', { operation: 'passport.get_client' }), 0,
    'the series starts at zero')
})

t.test('pass-through drift: bounded in remembered paths', async t => {
  const seen: string[] = []
  const tracker = createDriftTracker('dealer.discount', path => seen.push(path))
  tracker.observe([[0, Object.fromEntries(Array.from({ length: MAX_PASSTHROUGH_PATHS + 50 }, (_, i) => [`k${i}`, i]))]])
  t.equal(seen.length, MAX_PASSTHROUGH_PATHS - 4, 'the cap counts the four documented fields too')
  t.equal(seen[0], '/data/k0')
  tracker.observe([[0, { k0: 1, zzz: 2 }]])
  t.equal(seen.length, MAX_PASSTHROUGH_PATHS - 4, 'nothing past the cap, nothing twice')
})
