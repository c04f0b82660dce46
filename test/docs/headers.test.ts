// The document declares every header the service sends (docs/api.md): each answer below, success and failure, is
// held to the headers its route's document declares for its status, security and transport headers aside; every
// operation takes x-request-id and declares it on every answer; a malformed x-request-id is replaced, never refused.
import t from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { Type } from 'typebox'
import * as fx from '../../schemas/fixtures.ts'
import type { OperationName } from '../../schemas/operations.ts'
import { deprecated } from '../../src/plugins/app/deprecation/deprecated.ts'
import { documented } from '../../src/routes/standard-responses.ts'
import { buildTestApp, CONSOLE_KEY, type TestApp } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { respondToOperation, respondToOperations } from '../helpers/upstream-mock.ts'

type Json = Record<string, any>

/** Headers every answer may carry that describe the connection, the bytes or the page's security, not the API. */
const ASIDE = new Set([
  'content-type', 'content-length', 'content-encoding', 'transfer-encoding', 'date', 'connection', 'keep-alive',
  // helmet (src/plugins/external/security.ts)
  'content-security-policy', 'cross-origin-opener-policy', 'cross-origin-resource-policy',
  'cross-origin-embedder-policy', 'origin-agent-cluster', 'referrer-policy', 'strict-transport-security',
  'x-content-type-options', 'x-dns-prefetch-control', 'x-download-options', 'x-frame-options',
  'x-permitted-cross-domain-policies', 'x-xss-protection'
])

const PROFILE = '/api/users/profile'
const CONSOLE = '/request-console'
const IVANOV = bearer(hs256())
const consoleKey = { 'x-console-key': CONSOLE_KEY }
const consoleBody = { operation: 'passport.get_client', params: fx.passportParams }

function answer (upstream: TestApp['upstream'], operation: OperationName, status: number, body: unknown) {
  respondToOperation(upstream, operation, { status, body })
}

function respondAll (upstream: TestApp['upstream']) {
  respondToOperations(upstream, {
    'passport.get_client': { status: 200, body: fx.passportFound },
    'dealer.discount': { status: 200, body: fx.discountWithBonuses },
    'dealer.client': { status: 200, body: fx.contractorResult }
  })
}

/** The headers sent that the document does not declare for this answer's route and status. */
function undeclared (doc: Json, method: string, path: string, res: LightMyRequestResponse): string[] {
  const declared = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(res.statusCode)]?.headers
  if (declared === undefined) return [`(no ${res.statusCode} documented)`]
  const names = new Set(Object.keys(declared).map(name => name.toLowerCase()))
  return Object.keys(res.headers).filter(name => !ASIDE.has(name) && !names.has(name))
}

async function documentOf (app: TestApp['app']): Promise<Json> {
  return (await app.inject('/docs/json')).json()
}

t.test('every answer of every route carries only headers its document declares for its status', async t => {
  const check = async (app: TestApp['app'], request: InjectOptions & { url: string }, status: number) => {
    const doc = await documentOf(app)
    const method = request.method ?? 'GET'
    const res: LightMyRequestResponse = await app.inject(request)
    t.equal(res.statusCode, status, `${method} ${request.url} answers ${status}`, { body: res.body })
    t.same(undeclared(doc, method, request.url, res), [], `${method} ${request.url} ${status}: every header declared`)
    return res
  }

  t.test('profile', async t => {
    const { app, upstream } = await buildTestApp(t)
    respondAll(upstream)
    const ok = await check(app, { url: PROFILE, headers: IVANOV }, 200)
    t.ok(ok.headers['cache-control'] && ok.headers.vary && ok.headers['x-ratelimit-limit'], 'the 200\'s headers')
    respondAll(upstream)
    await check(app, { url: PROFILE, headers: { ...IVANOV, 'if-none-match': String(ok.headers.etag) } }, 304)
    answer(upstream, 'passport.get_client', 200, fx.passportFound)
    answer(upstream, 'dealer.discount', 500, {})
    answer(upstream, 'dealer.client', 200, fx.contractorResult)
    const degraded = await check(app, { url: PROFILE, headers: { ...IVANOV, 'accept-encoding': 'gzip' } }, 200)
    t.ok(degraded.headers['x-degraded'], 'a degraded answer')
    await check(app, { url: PROFILE }, 401)
    await check(app, { url: PROFILE, headers: { ...IVANOV, 'x-app-version': 'two' } }, 400)
    answer(upstream, 'passport.get_client', 400, fx.passportNotFound)
    await check(app, { url: PROFILE, headers: IVANOV }, 404)
    answer(upstream, 'passport.get_client', 500, { error: 'down' })
    await check(app, { url: PROFILE, headers: bearer(hs256(claimsFor(fx.PETROVA))) }, 502)
    respondToOperation(upstream, 'passport.get_client', { error: new Error('connect ECONNREFUSED') })
    await check(app, { url: PROFILE, headers: bearer(hs256(claimsFor(fx.UNKNOWN))) }, 503)
  })

  t.test('profile: 426 and 429', async t => {
    const { app, upstream } = await buildTestApp(t, { MIN_APP_VERSION: '2.0.0', RATE_LIMIT_PROFILE_PER_MINUTE: '1' })
    await check(app, { url: PROFILE, headers: { ...IVANOV, 'x-app-version': '1.9.0' } }, 426)
    respondAll(upstream)
    await check(app, { url: PROFILE, headers: IVANOV }, 200)
    await check(app, { url: PROFILE, headers: IVANOV }, 429)
  })

  t.test('console', async t => {
    const { app, upstream } = await buildTestApp(t, { RATE_LIMIT_CONSOLE_PER_MINUTE: '5' })
    answer(upstream, 'passport.get_client', 200, fx.passportFound)
    await check(app, { method: 'POST', url: CONSOLE, headers: consoleKey, payload: consoleBody }, 200)
    await check(app, { method: 'POST', url: CONSOLE, headers: consoleKey, payload: { operation: 'x' } }, 400)
    await check(app, { method: 'POST', url: CONSOLE, payload: consoleBody }, 401)
    await check(app, {
      method: 'POST',
      url: CONSOLE,
      headers: { ...consoleKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ operation: 'x'.repeat(17 * 1024) })
    }, 413)
    await check(app, {
      method: 'POST', url: CONSOLE, headers: { ...consoleKey, 'content-type': 'text/plain' }, payload: 'x'
    }, 415)
    respondToOperation(upstream, 'passport.get_client', { error: new Error('connect ECONNREFUSED') })
    await check(app, { method: 'POST', url: CONSOLE, headers: consoleKey, payload: consoleBody }, 503)
    await check(app, { method: 'POST', url: CONSOLE, headers: consoleKey, payload: consoleBody }, 429)
  })

  t.test('health', async t => {
    const { app } = await buildTestApp(t)
    await check(app, { url: '/health/live' }, 200)
    await check(app, { url: '/health/ready' }, 200)
  })

  t.test('a deprecated route documented with documented(): Deprecation and Sunset on every answer', async t => {
    const { app } = await buildTestApp(t)
    app.get('/test/old', {
      schema: documented({
        ...deprecated({ since: '2026-11-01', sunset: '2027-05-01' }),
        tags: ['profile'],
        response: { 200: Type.Object({ ok: Type.Boolean() }) }
      })
    }, async () => ({ ok: true }))
    const res = await check(app, { url: '/test/old' }, 200)
    t.ok(res.headers.deprecation && res.headers.sunset, 'the route sends both')
    const doc = await documentOf(app)
    const declared = doc.paths['/test/old'].get.responses['200'].headers
    t.equal(declared.deprecation.schema.examples[0], res.headers.deprecation, 'the example is the value sent')
    t.equal(declared.sunset.schema.examples[0], res.headers.sunset)
  })
  t.end()
})

t.test('every operation takes x-request-id, without a pattern, and declares it on every answer', async t => {
  const { app } = await buildTestApp(t)
  const doc = await documentOf(app)
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const parameter = (op.parameters ?? []).find((p: Json) => p.in === 'header' && p.name === 'x-request-id')
      t.ok(parameter, `${method} ${path} takes x-request-id`)
      t.equal(parameter?.required, false, 'optional')
      t.equal(parameter?.schema?.pattern, undefined, 'no pattern: a malformed id is replaced, not refused')
      for (const [status, response] of Object.entries(op.responses as Json)) {
        t.ok(response.headers?.['x-request-id'], `${method} ${path} ${status} declares x-request-id`)
      }
    }
  }
})

t.test('a malformed x-request-id is replaced on every route, never refused', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondAll(upstream)
  answer(upstream, 'passport.get_client', 200, fx.passportFound)
  const malformed = 'not an id; with spaces and a semicolon'
  const requests = [
    { url: PROFILE, headers: IVANOV },
    { method: 'POST' as const, url: CONSOLE, headers: consoleKey, payload: consoleBody },
    { url: '/health/live' },
    { url: '/health/ready' }
  ]
  for (const request of requests) {
    const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': malformed } })
    t.equal(res.statusCode, 200, `${request.url} is served`)
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'with a fresh id')
    const kept = await app.inject({ url: '/health/live', headers: { 'x-request-id': 'app-7f3a.9c:1' } })
    t.equal(kept.headers['x-request-id'], 'app-7f3a.9c:1', 'a well-formed id is echoed')
  }
})
