// Refused requests leave bounded logs: past a limit (429) and under load shedding (503), a refused request writes no
// line or audit record of its own; each kind writes one summary line per address (per operator for the console's
// audit) and per minute, with the count, when the window ends or the app closes. Below the limit, refusals are
// logged as before, and every accepted console call keeps its audit record. At `info` each request keeps its one
// access line. 512 refused requests of each kind, the lines counted.
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { RefusalSummary } from '../../src/plugins/app/refusals/summary.ts'
import { buildTestApp, CONSOLE_KEY, type TestApp } from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import { respondToOperation } from '../helpers/upstream-mock.ts'

const PROFILE = '/api/users/profile'
const CONSOLE = '/request-console'
const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const FLOOD = 512
const ADDRESS = '198.51.100.77'

type Line = Record<string, unknown>

async function loggedApp (t: Test, env: Record<string, string>, level = 'warn') {
  const lines: Line[] = []
  const stream = { write: (line: string) => { lines.push(JSON.parse(line) as Line) } }
  const built = await buildTestApp(t, { LOG_LEVEL: level, METRICS_API_KEY: METRICS_KEY, ...env },
    { logger: { level, stream } })
  return { ...built, lines }
}

/** Sends `request` FLOOD times from ADDRESS, each answered `status`. */
async function flood (t: Test, app: TestApp['app'], request: Record<string, unknown>, status: number) {
  let answered = 0
  for (let i = 0; i < FLOOD; i++) {
    const res = await app.inject({ remoteAddress: ADDRESS, ...request })
    if (res.statusCode === status) answered++
  }
  t.equal(answered, FLOOD, `${FLOOD} answered ${status}`)
}

const warnings = (lines: Line[]) => lines.filter(line => Number(line.level) >= 40)

t.test('past the profile\'s limit: one summary line with the count, not a line each', async t => {
  const { app, upstream, lines } = await loggedApp(t, { RATE_LIMIT_PROFILE_PER_MINUTE: '1' })
  respondToOperation(upstream, 'passport.get_client', { status: 400, body: fx.passportNotFound })
  const token = bearer(hs256())
  t.equal((await app.inject({ url: PROFILE, headers: token, remoteAddress: ADDRESS })).statusCode, 404)
  await flood(t, app, { url: PROFILE, headers: token }, 429)
  t.equal(warnings(lines).length, 0, 'nothing yet: the summary is written when its window ends')
  await app.close()
  t.match(warnings(lines), [{ msg: 'rate limit reached', route: PROFILE, address: ADDRESS, count: FLOOD, max: 1 }])
  t.equal(warnings(lines).length, 1, 'one line for 512 refusals')
})

t.test('past the refused-credential limit: the 401s below it as before, one summary line past it', async t => {
  const { app, lines } = await loggedApp(t, { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2' })
  for (let i = 0; i < 2; i++) {
    t.equal((await app.inject({ url: PROFILE, headers: bearer('not-a-token'), remoteAddress: ADDRESS })).statusCode,
      401)
  }
  await flood(t, app, { url: PROFILE, headers: bearer('not-a-token') }, 429)
  await app.close()
  const summary = warnings(lines).filter(line => line.msg === 'too many refused credentials from this address')
  t.match(summary, [{ address: ADDRESS, count: FLOOD, max: 2 }])
  t.equal(warnings(lines).length, 1, `one warn line for ${FLOOD + 2} refused tokens: the summary`)
})

t.test('metrics key guesses: each below the limit at warn, one summary past it (it was two lines each)',
  async t => {
    const { app, lines } = await loggedApp(t, { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2' })
    for (let i = 0; i < 2; i++) {
      t.equal((await app.inject({ url: '/metrics', headers: bearer(`guess-${i}`), remoteAddress: ADDRESS }))
        .statusCode, 401)
    }
    await flood(t, app, { url: '/metrics', headers: bearer('guess-again') }, 429)
    t.equal((await app.inject({ url: '/metrics', headers: bearer(METRICS_KEY), remoteAddress: ADDRESS })).statusCode,
      200, 'the right key is still served')
    await app.close()
    t.equal(warnings(lines).filter(line => line.msg === 'refused metrics scrape').length, 2, 'the guesses below it')
    t.match(warnings(lines).filter(line => line.msg === 'too many refused credentials from this address'),
      [{ route: '/metrics', address: ADDRESS, count: FLOOD }])
    t.equal(warnings(lines).length, 3)
    t.notOk(JSON.stringify(lines).includes('guess-'), 'no guessed key in the logs')
  })

t.test('the console\'s audit: every accepted call and refused key below the limits keeps its record; past them, ' +
  'one summary record per operator and per address', async t => {
  const { app, lines } = await loggedApp(t,
    { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2', RATE_LIMIT_CONSOLE_PER_MINUTE: '3' })
  const audits = () => lines.filter(line => line.audit === 'console')
  const post = (key: string, remoteAddress = ADDRESS) =>
    app.inject({ method: 'POST', url: CONSOLE, headers: { 'x-console-key': key }, payload: {}, remoteAddress })
  for (let i = 0; i < 2; i++) t.equal((await post('not-the-console-key-0123')).statusCode, 401)
  await flood(t, app, {
    method: 'POST',
    url: CONSOLE,
    headers: { 'x-console-key': 'not-the-console-key-0123' },
    payload: {}
  }, 429)
  const operator = '198.51.100.78'
  for (let i = 0; i < 3; i++) t.equal((await post(CONSOLE_KEY, operator)).statusCode, 400, 'accepted, a bad body')
  await flood(t, app, {
    method: 'POST',
    url: CONSOLE,
    headers: { 'x-console-key': CONSOLE_KEY },
    payload: {},
    remoteAddress: operator
  }, 429)
  t.equal(audits().length, 5, 'before the window ends: the 2 refused keys and the 3 accepted calls')
  await app.close()
  t.match(audits().slice(0, 5), [
    { operator: null, outcome: 'http_401' }, { operator: null, outcome: 'http_401' },
    { operator: 'console', outcome: 'http_400' }, { operator: 'console', outcome: 'http_400' },
    { operator: 'console', outcome: 'http_400' }
  ])
  const summaries = audits().slice(5)
  t.equal(summaries.length, 2, 'then one summary record per key')
  t.match(summaries.find(line => line.operator === null),
    { msg: 'console calls refused past a limit', address: ADDRESS, count: FLOOD, status_code: 429 })
  t.match(summaries.find(line => line.operator === 'console'),
    { msg: 'console calls refused past a limit', address: null, count: FLOOD, status_code: 429 })
  t.equal(warnings(lines).length, 2, 'and a summary warn line per limit')
  t.notOk(JSON.stringify(lines).includes('not-the-console-key'), 'no key in the logs')
})

t.test('shed requests: one summary line, not an error line each', async t => {
  const { app, lines } = await loggedApp(t, { UNDER_PRESSURE_MAX_RSS_MB: '1', UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '10' })
  for (let i = 0; i < 500 && !app.isUnderPressure(); i++) await new Promise(resolve => setTimeout(resolve, 10))
  t.ok(app.isUnderPressure(), 'the RSS bound is exceeded')
  await flood(t, app, { url: PROFILE, headers: bearer(hs256()) }, 503)
  await app.close()
  t.match(warnings(lines), [{ msg: 'request shed', route: PROFILE, address: ADDRESS, count: FLOOD, pressure: String }])
  t.equal(warnings(lines).length, 1)
})

t.test('at info, each refused request keeps its one access line and no other', async t => {
  const { app, lines } = await loggedApp(t, { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2' }, 'info')
  for (let i = 0; i < 2; i++) await app.inject({ url: PROFILE, headers: bearer('not-a-token'), remoteAddress: ADDRESS })
  const before = lines.length
  await flood(t, app, { url: PROFILE, headers: bearer('not-a-token') }, 429)
  const written = lines.slice(before)
  t.equal(written.filter(line => line.msg === 'request completed').length, FLOOD, 'one access line each')
  t.equal(written.length, FLOOD, 'and nothing else')
})

t.test('a window keeps a bounded number of keys; the rest are summed in one line', async t => {
  const written: Array<{ fields: Record<string, unknown>, message: string }> = []
  const summary = new RefusalSummary((fields, message) => { written.push({ fields, message }) }, 'refused', 60_000, 3)
  for (let i = 0; i < 5; i++) for (let n = 0; n <= i; n++) summary.count(`key-${i}`, { address: `key-${i}` })
  summary.close()
  t.strictSame(written.map(line => line.fields), [
    { address: 'key-0', count: 1, window_s: 60 },
    { address: 'key-1', count: 2, window_s: 60 },
    { address: 'key-2', count: 3, window_s: 60 },
    { others: true, count: 4 + 5, window_s: 60 }
  ])
  summary.close()
  t.equal(written.length, 4, 'an empty window writes nothing')
})
