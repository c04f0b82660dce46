// No answer of a route that needs credentials can be stored by a cache, errors included: a client's cache keys an
// answer by its URL, so a stored 404 about one account was shown to the next one offline. Every kind of answer of
// the profile, the console and the metrics scrape is judged by an RFC 9111 library (http-cache-semantics), as a
// client's private cache and as a shared one, with its own status and as if it were a 200 (the headers alone must
// forbid it: the library stores no 401 or 429 whatever they say). The document declares it on every such answer.
import CachePolicy from 'http-cache-semantics'
import type { InjectOptions } from 'fastify'
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildTestApp, CONSOLE_KEY, type TestApp } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { respondToOperation, respondToOperations } from '../helpers/upstream-mock.ts'

const PROFILE = '/api/users/profile'
const CONSOLE = '/request-console'
const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const IVANOV = bearer(hs256())

interface Request {
  method?: 'GET' | 'HEAD' | 'POST' | 'DELETE',
  url: string,
  headers?: Record<string, string>,
  payload?: InjectOptions['payload'],
  remoteAddress?: string
}
type Headers = Record<string, string>

const stringHeaders = (headers: Record<string, unknown>): Headers => Object.fromEntries(Object.entries(headers)
  .filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)]))

/** Whether a cache (a client's own: not shared) may store this answer, or any answer with its headers. */
function storable (request: Request, status: number, headers: Headers, shared: boolean): boolean {
  const req = { method: request.method ?? 'GET', url: request.url, headers: request.headers ?? {} }
  return new CachePolicy(req, { status, headers }, { shared }).storable()
}

/** Sends `request`, asserts its status, judges the answer; the statuses judged are collected in `seen`. */
async function judged (t: Test, app: TestApp['app'], request: Request, status: number, seen: Set<string>) {
  const res = await app.inject(request as InjectOptions)
  const what = `${request.method ?? 'GET'} ${request.url} ${res.statusCode}`
  t.equal(res.statusCode, status, `${what}: the answer meant`)
  const headers = stringHeaders(res.headers)
  for (const shared of [false, true]) {
    t.notOk(storable(request, res.statusCode, headers, shared), `${what}: not storable (shared: ${shared})`)
    t.notOk(storable(request, 200, headers, shared), `${what}: its headers alone forbid storing (shared: ${shared})`)
  }
  t.match(headers['cache-control'], /(^|,\s*)no-store(\s*,|$)/, `${what}: says no-store`)
  seen.add(`${request.url} ${res.statusCode}`)
  return res
}

const fine = (upstream: TestApp['upstream'], times = 1) => respondToOperations(upstream, {
  'passport.get_client': { status: 200, body: fx.passportFound, times },
  'dealer.discount': { status: 200, body: fx.discountWithBonuses, times },
  'dealer.client': { status: 200, body: fx.contractorResult, times }
})

t.test('every kind of answer of the authenticated routes says no-store', async t => {
  const seen = new Set<string>()
  const env = {
    METRICS_API_KEY: METRICS_KEY,
    MIN_APP_VERSION: '2.0.0',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2',
    RATE_LIMIT_PROFILE_PER_MINUTE: '3',
    RATE_LIMIT_CONSOLE_PER_MINUTE: '5',
    UPSTREAM_TIMEOUT_MS: '300'
  }

  await t.test('the profile: 200, 304, 400, 401, 404, 405, 426, 429', async t => {
    const { app, upstream } = await buildTestApp(t, env)
    fine(upstream, 3)
    const ok = await judged(t, app, { url: PROFILE, headers: IVANOV }, 200, seen)
    t.equal(ok.headers['cache-control'], 'private, no-store', 'the profile\'s own, as before')
    const etag = String(ok.headers.etag)
    await judged(t, app, { url: PROFILE, headers: { ...IVANOV, 'if-none-match': etag } }, 304, seen)
    await judged(t, app, { method: 'HEAD', url: PROFILE, headers: IVANOV }, 200, seen)
    await judged(t, app, { url: PROFILE, headers: { ...IVANOV, 'x-app-version': 'not-a-version' } }, 400, seen)
    await judged(t, app, { url: PROFILE, headers: { ...IVANOV, 'x-app-version': '1.0.0' } }, 426, seen)
    await judged(t, app, { method: 'DELETE', url: PROFILE, headers: IVANOV }, 405, seen)
    await judged(t, app, { url: PROFILE }, 401, seen)
    // Refused tokens from one address, until their limit answers 429.
    let refused = 401
    for (let i = 0; i < 10 && refused === 401; i++) {
      const res = await app.inject({ url: PROFILE, headers: bearer('not-a-token') })
      refused = res.statusCode
      if (refused === 429) await judged(t, app, { url: PROFILE, headers: bearer('not-a-token') }, 429, seen)
    }
    t.equal(refused, 429, 'the refused-credential limit reached')
    // The client's own limit: three a minute, all spent (200, 304, HEAD).
    respondToOperation(upstream, 'passport.get_client', { status: 400, body: fx.passportNotFound })
    const unknown = bearer(hs256(claimsFor(fx.UNKNOWN)))
    await judged(t, app, { url: PROFILE, headers: unknown }, 404, seen)
    await judged(t, app, { url: PROFILE, headers: IVANOV }, 429, seen)
  })

  await t.test('the profile: 502, 503 and 504 of the upstream; a 500', async t => {
    const { app, upstream } = await buildTestApp(t, { ...env, UPSTREAM_BREAKER_MIN_CALLS: '1000' })
    app.get('/test/private-failure', { schema: { security: [{ bearerAuth: [] }] } }, async () => {
      throw new Error('a failure the catalog does not know')
    })
    respondToOperation(upstream, 'passport.get_client',
      { status: 200, body: 'not json', headers: { 'content-type': 'text/plain' } })
    await judged(t, app, { url: PROFILE, headers: IVANOV }, 502, seen)
    respondToOperation(upstream, 'passport.get_client', { error: new Error('connection refused') })
    await judged(t, app, { url: PROFILE, headers: IVANOV }, 503, seen)
    respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound, delay: 5000 })
    await judged(t, app, { url: PROFILE, headers: IVANOV }, 504, seen)
    await judged(t, app, { url: '/test/private-failure', headers: IVANOV }, 500, seen)
  })

  await t.test('load shedding\'s 503 on the profile, the console and a path that does not exist', async t => {
    const { app } = await buildTestApp(t, { UNDER_PRESSURE_MAX_RSS_MB: '1', UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '10' })
    for (let i = 0; i < 500 && !app.isUnderPressure(); i++) await new Promise(resolve => setTimeout(resolve, 10))
    t.ok(app.isUnderPressure(), 'the RSS bound is exceeded')
    await judged(t, app, { url: PROFILE, headers: IVANOV }, 503, seen)
    await judged(t, app, { method: 'POST', url: CONSOLE, headers: { 'x-console-key': CONSOLE_KEY }, payload: {} },
      503, seen)
    await judged(t, app, { url: '/no/such/route' }, 503, seen)
  })

  await t.test('the console: 200, 400, 401, 413, 415, 429, and its upstream failures', async t => {
    const { app, upstream } = await buildTestApp(t, env)
    const key = { 'x-console-key': CONSOLE_KEY }
    respondToOperation(upstream, 'dealer.discount', { status: 200, body: fx.discountWithBonuses })
    const run = { operation: 'dealer.discount', params: fx.dealerParams }
    await judged(t, app, { method: 'POST', url: CONSOLE, headers: key, payload: run }, 200, seen)
    await judged(t, app, { method: 'POST', url: CONSOLE, headers: key, payload: {} }, 400, seen)
    await judged(t, app, {
      method: 'POST',
      url: CONSOLE,
      headers: { ...key, 'content-type': 'text/plain' },
      payload: 'text'
    }, 415, seen)
    await judged(t, app, {
      method: 'POST',
      url: CONSOLE,
      headers: { ...key, 'content-type': 'application/json' },
      payload: JSON.stringify({ pad: 'x'.repeat(20_000) })
    }, 413, seen)
    respondToOperation(upstream, 'dealer.discount', { error: new Error('connection refused') })
    await judged(t, app, { method: 'POST', url: CONSOLE, headers: key, payload: run }, 503, seen)
    await judged(t, app, { method: 'POST', url: CONSOLE, headers: key, payload: run }, 429, seen)
    await judged(t, app, { method: 'POST', url: CONSOLE, payload: run, remoteAddress: '198.51.100.9' },
      401, seen)
  })

  await t.test('the metrics scrape with its key: 200, 401, 429', async t => {
    const { app } = await buildTestApp(t, env)
    await judged(t, app, { url: '/metrics', headers: bearer(METRICS_KEY) }, 200, seen)
    await judged(t, app, { method: 'HEAD', url: '/metrics', headers: bearer(METRICS_KEY) }, 200, seen)
    await judged(t, app, { url: '/metrics', headers: bearer('a-guess') }, 401, seen)
    for (let i = 0; i < 10 && (await app.inject({ url: '/metrics', headers: bearer('a-guess') })).statusCode === 401;
      i++);
    await judged(t, app, { url: '/metrics', headers: bearer('a-guess') }, 429, seen)
  })

  t.strictSame([...seen].filter(answer => answer.startsWith(PROFILE)).map(answer => answer.split(' ')[1]).sort(),
    ['200', '304', '400', '401', '404', '405', '426', '429', '502', '503', '504'], 'every kind of profile answer')
})

t.test('public answers keep their own caching; only their errors say no-store', async t => {
  const { app } = await buildTestApp(t)
  for (const url of ['/health/live', '/docs/json']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200)
    t.notOk(String(res.headers['cache-control'] ?? '').includes('no-store'), `${url}: as before`)
  }
  const missing = await app.inject('/no/such/route')
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers['cache-control'], 'no-store', 'an error answer of no route')
})

t.test('the document declares no-store on every answer of every operation that needs credentials', async t => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/docs/json')).json() as {
    paths: Record<string, Record<string, {
      security?: unknown[],
      responses: Record<string, { headers?: Record<string, { schema?: { examples?: string[] } }> }>
    }>>
  }
  let judgedResponses = 0
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (operation.security === undefined || operation.security.length === 0) continue
      for (const [status, answer] of Object.entries(operation.responses)) {
        const declared = answer.headers?.['cache-control']?.schema?.examples?.[0]
        t.ok(declared, `${method} ${path} ${status} declares Cache-Control`)
        const headers = { 'cache-control': declared ?? '' }
        t.notOk(storable({ url: path }, 200, headers, false), `${method} ${path} ${status}: ${declared}`)
        judgedResponses++
      }
    }
  }
  t.ok(judgedResponses >= 20, `${judgedResponses} answers judged`)
})
