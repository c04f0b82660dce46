// Every metric and label the alert rules and the dashboard ask for is one the service really exports: the
// app is built with metrics on (and a Redis that does not answer, so its gauges exist), serves a degraded
// profile, then one whose passport answer broke its schema from the last-known copy, and is scraped;
// a second app verifying with a key set (AUTH_JWKS_URL on a local stand-in provider; its metrics exist only
// then) is scraped too. Each expression is then read (test/helpers/promql.ts) and compared with the scrapes.
// Also: the dashboard is the generated one.
import { readFileSync } from 'node:fs'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { ruleGroups } from '../../scripts/alert-rules.ts'
import { DASHBOARD_FILE, dashboardJson } from '../../scripts/dashboard.ts'
import { buildTestApp, type TestApp } from '../helpers/build-app.ts'
import { eventually, setKeyPair, startKeySetServer } from '../helpers/key-set-server.ts'
import { exposition, promqlNames, unknownNames } from '../helpers/promql.ts'
import { freePort } from '../helpers/real-servers.ts'
import { bearer, hs256, withKid } from '../helpers/tokens.ts'
import { respondToOperation } from '../helpers/upstream-mock.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const PROFILE = '/api/users/profile'
const scrapeKey = { authorization: `Bearer ${METRICS_KEY}` }

const rules = ruleGroups.flatMap(group => group.rules)
const records = new Set(rules.flatMap(rule => 'record' in rule ? [rule.record] : []))

interface Target { expr: string }
interface Panel {
  id: number
  type: string
  title: string
  datasource?: { type: string, uid: string }
  targets?: Target[]
}
interface Dashboard {
  uid: string
  panels: Panel[]
  templating: {
    list: Array<{ name: string, type: string, query: string | { query: string }, datasource?: { uid: string } }>
  }
}
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard
const queryPanels = dashboard.panels.filter(panel => panel.type !== 'row')

/** The metric and label names of a live scrape after a degraded profile, then a contract failure the copy answered. */
async function liveScrape (t: Parameters<typeof buildTestApp>[0]): Promise<Map<string, Set<string>>> {
  const { app, agent, upstream } = await buildTestApp(t, {
    METRICS_API_KEY: METRICS_KEY,
    // Nothing listens there: the Redis gauges exist and say it is down.
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    REDIS_CONNECT_TIMEOUT_MS: '100'
  })
  const token = bearer(hs256())
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 500, body: { success: false } })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: fx.contractorResult })
  const degraded = await app.inject({ url: PROFILE, headers: token })
  t.equal(degraded.headers['x-degraded'], 'discount')
  // The client's copy (passport and contractor) is written after the answer has gone.
  const written = /^bff_profile_copies_written_total 1$/m
  await eventually(async () => written.test((await app.inject({ url: '/metrics', headers: scrapeKey })).body),
    'the copy is written')
  // The passport's answer breaks its schema: refused, and the copy answers instead.
  const drifted = fx.catalogCarsView.map(crumb => ({ ...crumb, data: fx.breadcrumbData }))
  respondToOperation(upstream, 'passport.get_client',
    { status: 200, body: { ...fx.passportFound, catalog_cars_view: drifted } })
  const stale = await app.inject({ url: PROFILE, headers: token })
  t.equal(stale.statusCode, 200)
  t.equal(stale.headers['x-stale'], 'passport,contractor', 'the last-known copy answered')
  agent.assertNoPendingInterceptors()
  return scrape(app)
}

async function scrape (app: TestApp['app']): Promise<Map<string, Set<string>>> {
  const res = await app.inject({ url: '/metrics', headers: scrapeKey })
  if (res.statusCode !== 200) throw new Error(`scrape answered ${res.statusCode}`)
  return exposition(res.body)
}

/** The scrape of an app verifying with a stand-in provider's key set of one key, once it has loaded. */
async function keySetScrape (t: Parameters<typeof buildTestApp>[0]): Promise<Map<string, Set<string>>> {
  const provider = await startKeySetServer(t)
  const pair = setKeyPair('ec', 'ec-metrics')
  provider.publish([pair.jwk])
  const { app } = await buildTestApp(t, {
    AUTH_JWT_SECRET: undefined, AUTH_JWKS_URL: provider.url, METRICS_API_KEY: METRICS_KEY
  })
  await app.ready()
  await eventually(async () => (await app.inject('/health/ready')).statusCode === 200, 'the key set loads')
  const res = await app.inject({ url: '/metrics', headers: scrapeKey })
  t.match(res.body, /^bff_auth_jwks_keys 1$/m, 'the loaded key is counted')
  // A token under a kid the set does not hold, within the cooldown of the load: a SIGNING_KEY_PENDING answer.
  const pending = await app.inject({ url: PROFILE, headers: bearer(withKid('ES256', 'invented', pair.privateKey)) })
  t.equal(pending.json().code, 'SIGNING_KEY_PENDING')
  return scrape(app)
}

/** Both scrapes as one: per metric, the labels either exports. */
function merged (...scrapes: Array<Map<string, Set<string>>>): Map<string, Set<string>> {
  const all = new Map<string, Set<string>>()
  for (const scraped of scrapes) {
    for (const [name, labels] of scraped) all.set(name, new Set([...(all.get(name) ?? []), ...labels]))
  }
  return all
}

t.test('the PromQL reading: names, labels, and nothing else', async t => {
  const read = promqlNames('sum by (job, le) (rate(a_bucket{route="/x",status_code=~"5.."}[5m])) / ignoring(le) b ' +
    'offset 1h or on (instance) c_total > 0.5 and histogram_quantile(0.9, d[$__rate_interval])')
  t.strictSame(Object.fromEntries([...read.metrics].map(([name, labels]) => [name, [...labels]])),
    { a_bucket: ['route', 'status_code'], b: [], c_total: [], d: [] })
  t.strictSame([...read.grouping].sort(), ['instance', 'job', 'le'])
  t.strictSame(promqlNames('job:x:rate5m{job=~"$job"} > 0.072').metrics, new Map([['job:x:rate5m', new Set(['job'])]]))
  const scraped = new Map([['bff_up', new Set(['instance'])]])
  t.strictSame(unknownNames('max by (instance) (bff_up{job="x"})', scraped, new Set()), [])
  t.strictSame(unknownNames('sum by (zone) (bff_upp{kind="y"})', scraped, new Set()), ['metric bff_upp', 'label zone'],
    'a typo is caught')
  t.strictSame(unknownNames('bff_up{route="/"}', scraped, new Set()), ['label route of bff_up'],
    'a label of another metric is caught')
})

t.test('every rule and dashboard query names only what a live scrape exports', async t => {
  const profile = await liveScrape(t)
  const keySet = await keySetScrape(t)
  t.notOk(profile.has('bff_auth_jwks_keys'), 'without AUTH_JWKS_URL no key-set metric')
  const scraped = merged(profile, keySet)
  t.ok(scraped.has('bff_upstream_contract_violations_total') &&
    scraped.get('bff_upstream_contract_violations_total')!.has('path'), 'the contract failure was counted')
  t.ok(scraped.has('bff_redis_up'), 'the Redis gauges are there')
  t.strictSame([...scraped.get('bff_profile_stale_sections_total') ?? []].sort(), ['reason', 'section'],
    'the stale answer was counted')

  for (const rule of rules) {
    const name = 'record' in rule ? rule.record : rule.alert
    t.strictSame(unknownNames(rule.expr, scraped, records), [], `rule ${name}`)
  }
  for (const panel of queryPanels) {
    for (const target of panel.targets ?? []) {
      t.strictSame(unknownNames(target.expr, scraped, records), [],
        `panel "${panel.title}": ${target.expr}`)
    }
  }
  for (const variable of dashboard.templating.list.filter(v => v.type === 'query')) {
    const query = typeof variable.query === 'string' ? variable.query : variable.query.query
    const match = /^label_values\((\w+), *(\w+)\)$/.exec(query)
    t.ok(match !== null && scraped.has(match[1]!), `variable ${variable.name} reads an exported metric: ${query}`)
  }
})

t.test('the dashboard: generated, a Prometheus data-source variable, every panel on it', async t => {
  t.equal(readFileSync(DASHBOARD_FILE, 'utf8'), dashboardJson(),
    'deploy/grafana/dealer-bff.json: run `npm run dashboard`')
  const source = dashboard.templating.list.find(v => v.type === 'datasource')
  t.match(source, { name: 'datasource', query: 'prometheus' })
  const ids = dashboard.panels.map(panel => panel.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  for (const panel of queryPanels) {
    t.equal(panel.datasource?.uid, '$' + '{datasource}', `${panel.title}: on the chosen data source`)
    t.ok((panel.targets ?? []).length > 0, `${panel.title}: has a query`)
  }
  const exprs = queryPanels.flatMap(panel => panel.targets ?? []).map(target => target.expr).join('\n')
  // What the issue asks the dashboard to show.
  for (const metric of ['bff_http_requests_total', 'bff_http_request_duration_seconds_bucket',
    'bff_upstream_requests_total', 'bff_upstream_breaker_state', 'bff_profile_degraded_sections_total',
    'bff_upstream_contract_violations_total', 'bff_redis_up', 'process_cpu_seconds_total',
    'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'bff_profile_stale_sections_total',
    'bff_auth_jwks_keys', 'bff_auth_jwks_last_load_timestamp_seconds', 'bff_app_version_requests_total']) {
    t.ok(exprs.includes(metric), `a panel shows ${metric}`)
  }
  t.match(exprs, /status_code="429"/, 'rate-limit refusals')
})
