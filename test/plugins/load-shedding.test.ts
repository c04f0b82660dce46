// Load shedding through the whole app. The pressure is real, not timed: an RSS bound of 1 MiB is always
// exceeded, so once under-pressure has taken its first sample the process stays "under pressure".
import t from 'tap'
import { ConfigError } from '../../src/config.ts'
import { OVERLOADED, SHED_RETRY_AFTER_S } from '../../src/plugins/external/load-shedding/shedding.ts'
import { buildTestApp, CONSOLE_KEY, testConfig } from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'

const PRESSURE = { UNDER_PRESSURE_MAX_RSS_MB: '1', UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '10' }

/** Waits (bounded) until the app's load check has seen the pressure. */
async function underPressure (app: { isUnderPressure (): boolean }): Promise<boolean> {
  for (let i = 0; i < 500 && !app.isUnderPressure(); i++) await new Promise(resolve => setTimeout(resolve, 10))
  return app.isUnderPressure()
}

t.test('under pressure: 503 SERVICE_UNAVAILABLE in the error body with Retry-After, before any work', async t => {
  const { app, agent } = await buildTestApp(t, PRESSURE)
  t.ok(await underPressure(app), 'the RSS bound is exceeded')

  // No upstream interceptor: a request that got past the shedding would not be this 503.
  const requests = [
    { url: '/api/users/profile', headers: bearer(hs256()) },
    {
      method: 'POST' as const,
      url: '/request-console',
      headers: { 'x-console-key': CONSOLE_KEY },
      payload: { operation: 'dealer.discount', params: {} }
    },
    { url: '/docs/json' },
    { url: '/no/such/route' }
  ]
  for (const request of requests) {
    const res = await app.inject(request)
    t.equal(res.statusCode, 503, request.url)
    t.same(res.json(),
      { statusCode: 503, code: 'SERVICE_UNAVAILABLE', error: 'Service Unavailable', message: OVERLOADED })
    t.equal(res.headers['retry-after'], String(SHED_RETRY_AFTER_S))
    t.ok(res.headers['x-request-id'], 'x-request-id on the shed answer')
    t.equal(res.headers['x-content-type-options'], 'nosniff', 'security headers on the shed answer')
  }
  agent.assertNoPendingInterceptors()
})

t.test('under pressure, the health routes still answer: a busy process is neither dead nor draining', async t => {
  const { app } = await buildTestApp(t, PRESSURE)
  t.ok(await underPressure(app))
  const live = await app.inject('/health/live')
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  const ready = await app.inject('/health/ready')
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready' })
})

t.test('without pressure nothing is shed, and the shed 503 is documented on both routes', async t => {
  const { app } = await buildTestApp(t)
  t.notOk(app.isUnderPressure())
  t.equal((await app.inject({ url: '/api/users/profile' })).statusCode, 401, 'the profile is reached')
  const doc = (await app.inject('/docs/json')).json()
  for (const op of [doc.paths['/api/users/profile'].get, doc.paths['/request-console'].post]) {
    const unavailable = op.responses['503']
    t.same(unavailable.content['application/json'].examples.SERVICE_UNAVAILABLE.value,
      { statusCode: 503, code: 'SERVICE_UNAVAILABLE', error: 'Service Unavailable', message: OVERLOADED })
    t.ok(unavailable.headers['retry-after'])
  }
  t.notOk(doc.paths['/status'], 'no status route of under-pressure')
})

t.test('config: defaults and bad values named', async t => {
  const config = testConfig({ UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: undefined })
  t.equal(config.UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS, 1000)
  t.equal(config.UNDER_PRESSURE_MAX_HEAP_USED_MB, 0, 'heap bound off by default')
  t.equal(config.UNDER_PRESSURE_MAX_RSS_MB, 0, 'RSS bound off by default')
  t.equal(config.UNDER_PRESSURE_SAMPLE_INTERVAL_MS, 1000)
  t.equal(testConfig({ UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' }).UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS, 0,
    '0 turns the check off')

  const bad = {
    UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '-1',
    UNDER_PRESSURE_MAX_HEAP_USED_MB: '1.5',
    UNDER_PRESSURE_MAX_RSS_MB: 'lots',
    UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '5'
  }
  try {
    testConfig(bad)
    t.fail('the bad values were accepted')
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    for (const name of Object.keys(bad)) t.equal(error.problems.filter(p => p.startsWith(`${name} `)).length, 1, name)
    t.equal(error.problems.length, 4)
  }
})

t.test('under pressure, the metrics scrape still answers and counts each shed request by its bound', async t => {
  const key = 'metrics-key-for-tests-0123456789'
  // Only the RSS bound on: a slow machine's start-up could otherwise trip the event-loop bound first.
  const { app } = await buildTestApp(t,
    { ...PRESSURE, UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', METRICS_API_KEY: key })
  t.ok(await underPressure(app))
  t.equal((await app.inject({ url: '/api/users/profile', headers: bearer(hs256()) })).statusCode, 503)
  t.equal((await app.inject({ url: '/no/such/route' })).statusCode, 503)
  const scrape = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${key}` } })
  t.equal(scrape.statusCode, 200, 'not shed')
  t.match(scrape.body, /^bff_load_shed_requests_total\{pressure="rss"\} 2$/m)
  t.match(scrape.body, /^bff_load_shed_requests_total\{pressure="event_loop_delay"\} 0$/m, 'known bounds start at zero')
  t.match(scrape.body, /^bff_http_requests_total\{route="\/api\/users\/profile",method="GET",status_code="503"\} 1$/m)
})
