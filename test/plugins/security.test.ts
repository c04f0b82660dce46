// Security headers on every answer (a strict CSP for the API, one Swagger UI runs under for /docs), CORS
// off unless CORS_ORIGINS names origins, the front server's limits, and their configuration.
import { connect } from 'node:net'
import t from 'tap'
import { EXPOSED_HEADERS } from '../../src/plugins/external/security.ts'
import { buildTestApp, configProblems } from '../helpers/build-app.ts'
import { bearer } from '../helpers/tokens.ts'

const APP_ORIGIN = 'https://app.dealer.example'
const ADMIN_ORIGIN = 'http://localhost:5173'

// The policies written out here, not imported: loosening the code's policy must fail this test.
const API_CSP = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"]
}
const DOCS_CSP = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"]
}

/** A CSP header as directive -> sources. */
function parseCsp (header: unknown): Record<string, string[]> {
  const policy: Record<string, string[]> = {}
  for (const directive of String(header).split(';').map(d => d.trim()).filter(d => d.length > 0)) {
    const [name = '', ...sources] = directive.split(/\s+/)
    policy[name] = sources
  }
  return policy
}

t.test('API answers, errors included, carry helmet\'s headers and a CSP that allows nothing', async t => {
  const { app } = await buildTestApp(t)
  for (const url of ['/health/live', '/api/users/profile', '/no/such/route']) {
    const res = await app.inject(url)
    t.same(parseCsp(res.headers['content-security-policy']), API_CSP, `${url}: CSP`)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['x-frame-options'], 'DENY')
    t.match(res.headers['strict-transport-security'], /^max-age=\d+/)
    t.equal(res.headers['referrer-policy'], 'no-referrer')
    t.equal(res.headers['cross-origin-opener-policy'], 'same-origin')
    t.notOk(res.headers['x-powered-by'])
  }
})

t.test('/docs gets a CSP Swagger UI works under, and no more', async t => {
  const { app } = await buildTestApp(t)
  const page = await app.inject('/docs')
  t.equal(page.statusCode, 200)
  const csp = parseCsp(page.headers['content-security-policy'])
  t.same(csp, DOCS_CSP)
  t.same(csp['script-src'], ["'self'"], 'scripts only from files of this origin: no inline script, no eval')
  t.ok(csp['style-src']?.includes("'unsafe-inline'"), 'Swagger UI sets style attributes')
  t.ok(csp['img-src']?.includes('data:'), 'Swagger UI draws icons from data: URIs')
  t.same(csp['connect-src'], ["'self'"], 'the document and "try it out" from this origin')
  t.same(csp['frame-ancestors'], ["'none'"])
  t.notOk('upgrade-insecure-requests' in csp, '/docs keeps working over plain http (npm run dev)')

  // Everything the page loads is a file of this origin, served under the same policy.
  const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map(match => match[1]!)
  t.ok(sources.length > 0)
  for (const source of sources) {
    t.notMatch(source, /^(https?:)?\/\//, `${source} is same-origin`)
    const asset = await app.inject(new URL(source, 'http://localhost/docs').pathname)
    t.equal(asset.statusCode, 200, source)
    t.same(parseCsp(asset.headers['content-security-policy']), DOCS_CSP, `${source}: the docs policy`)
  }
  t.same(parseCsp((await app.inject('/docs/json')).headers['content-security-policy']), DOCS_CSP)
})

t.test('CORS is off by default: no CORS header, a preflight gets no CORS permission', async t => {
  const { app } = await buildTestApp(t)
  const res = await app.inject({ url: '/health/live', headers: { origin: APP_ORIGIN } })
  t.equal(res.statusCode, 200)
  t.notOk(res.headers['access-control-allow-origin'])
  t.notOk(res.headers['access-control-expose-headers'])
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/users/profile',
    headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET' }
  })
  // A plain OPTIONS answer (its Allow), nothing a browser would take as permission.
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers.allow, 'GET, HEAD, OPTIONS')
  t.notOk(preflight.headers['access-control-allow-origin'])
  t.notOk(preflight.headers['access-control-allow-methods'])
})

t.test('CORS_ORIGINS: the listed origins exactly, our headers exposed, errors readable', async t => {
  const { app } = await buildTestApp(t, { CORS_ORIGINS: `${APP_ORIGIN}, ${ADMIN_ORIGIN}` })
  for (const origin of [APP_ORIGIN, ADMIN_ORIGIN]) {
    const res = await app.inject({ url: '/health/live', headers: { origin } })
    t.equal(res.headers['access-control-allow-origin'], origin)
    t.match(res.headers.vary, /origin/i, 'caches keep answers per origin')
    t.same(String(res.headers['access-control-expose-headers']).split(/,\s*/), EXPOSED_HEADERS)
    t.notOk(res.headers['access-control-allow-credentials'], 'bearer tokens, no cookies')
  }
  t.ok(EXPOSED_HEADERS.includes('x-request-id') && EXPOSED_HEADERS.includes('x-degraded') &&
    EXPOSED_HEADERS.includes('retry-after'))

  const strangers = ['https://evil.example', `${APP_ORIGIN}.evil.example`, 'https://dealer.example', 'null',
    APP_ORIGIN.replace('https', 'http')]
  for (const origin of strangers) {
    const res = await app.inject({ url: '/health/live', headers: { origin } })
    t.notOk(res.headers['access-control-allow-origin'], `${origin} is not allowed`)
  }

  // A refusal must reach the page's script, or the app cannot tell a 401 from a network failure.
  const refused =
    await app.inject({ url: '/api/users/profile', headers: { origin: APP_ORIGIN, ...bearer('not-a-jwt') } })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['access-control-allow-origin'], APP_ORIGIN)
})

t.test('CORS preflight: answered before authentication, for allowed origins only', async t => {
  const { app } = await buildTestApp(t, { CORS_ORIGINS: APP_ORIGIN })
  const preflight = (origin: string) => app.inject({
    method: 'OPTIONS',
    url: '/api/users/profile',
    headers: {
      origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization,x-request-id'
    }
  })
  const ok = await preflight(APP_ORIGIN)
  t.equal(ok.statusCode, 204)
  t.equal(ok.headers['access-control-allow-origin'], APP_ORIGIN)
  t.match(ok.headers['access-control-allow-methods'], /\bGET\b/)
  const allowed = String(ok.headers['access-control-allow-headers']).split(/,\s*/)
  for (const header of ['authorization', 'x-request-id', 'content-type', 'x-console-key']) {
    t.ok(allowed.includes(header), header)
  }
  t.equal(ok.headers['access-control-max-age'], '600')

  const consolePreflight = await app.inject({
    method: 'OPTIONS',
    url: '/request-console',
    headers: {
      origin: APP_ORIGIN,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,x-console-key'
    }
  })
  t.equal(consolePreflight.statusCode, 204, 'no console key needed to ask')

  const refused = await preflight('https://evil.example')
  t.notOk(refused.headers['access-control-allow-origin'], 'the browser will refuse the request')
})

t.test('front server limits reach the Node server', async t => {
  const { app } = await buildTestApp(t, {
    SERVER_HEADERS_TIMEOUT_MS: '4000',
    SERVER_REQUEST_TIMEOUT_MS: '6000',
    SERVER_CONNECTION_TIMEOUT_MS: '12000',
    SERVER_KEEP_ALIVE_TIMEOUT_MS: '65000',
    SERVER_MAX_REQUESTS_PER_SOCKET: '1000',
    SERVER_BODY_LIMIT_BYTES: '2048'
  })
  t.equal(app.server.headersTimeout, 4000)
  t.equal(app.server.requestTimeout, 6000)
  t.equal(app.server.timeout, 12_000)
  t.equal(app.server.keepAliveTimeout, 65000)
  t.equal(app.server.maxRequestsPerSocket, 1000)
  t.equal(app.initialConfig.bodyLimit, 2048)

  // An inactivity timeout shorter than a handling budget would cut answers off: it is raised past both.
  const short = await buildTestApp(t,
    { SERVER_CONNECTION_TIMEOUT_MS: '3000', PROFILE_TIMEOUT_MS: '9000', UPSTREAM_TIMEOUT_MS: '4000' })
  t.equal(short.app.server.timeout, 11_000, 'past PROFILE_TIMEOUT_MS')
  const consoleBound = await buildTestApp(t,
    { SERVER_CONNECTION_TIMEOUT_MS: '3000', PROFILE_TIMEOUT_MS: '2000', UPSTREAM_TIMEOUT_MS: '7000' })
  t.equal(consoleBound.app.server.timeout, 9000, 'past UPSTREAM_TIMEOUT_MS, which the console waits')

  const defaults = await buildTestApp(t)
  t.equal(defaults.app.server.headersTimeout, 10_000)
  t.equal(defaults.app.server.requestTimeout, 15_000)
  t.equal(defaults.app.server.timeout, 20_000)
  t.equal(defaults.app.server.keepAliveTimeout, 72_000, 'longer than a balancer\'s usual 60 s idle timeout')
  t.equal(defaults.app.initialConfig.bodyLimit, 16 * 1024)
})

t.test('a client that never finishes its headers is answered 408 and disconnected', async t => {
  const { app } = await buildTestApp(t, { SERVER_HEADERS_TIMEOUT_MS: '200', SERVER_REQUEST_TIMEOUT_MS: '200' })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  let received = ''
  socket.on('data', chunk => { received += String(chunk) })
  socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ')
  // The test's own limit (tap's timeout) is the only clock: the server must close first.
  await new Promise(resolve => socket.once('close', resolve))
  t.match(received, /^HTTP\/1\.1 408 /)
})

t.test('config: server limits, TRUST_PROXY and CORS_ORIGINS, bad values named', async t => {
  for (const value of ['true', 'false', '10.0.0.0/8', '10.0.0.0/8, 192.0.2.10', 'loopback,uniquelocal', '::1',
    '2001:db8::/32']) {
    t.same(configProblems({ TRUST_PROXY: value }), [], `TRUST_PROXY=${value}`)
  }
  for (const value of ['1', '2', 'yes', '10.0.0.0/33', '10.0.0.0/8/1', '300.1.1.1', '10.0.0.0/8,,', 'example.com']) {
    t.same(configProblems({ TRUST_PROXY: value }),
      ['TRUST_PROXY must be true, false, or a comma list of addresses, CIDRs or loopback/linklocal/uniquelocal'],
        `TRUST_PROXY=${value}`)
  }

  for (const value of [APP_ORIGIN, `${APP_ORIGIN},${ADMIN_ORIGIN}`, 'http://127.0.0.1:8080']) {
    t.same(configProblems({ CORS_ORIGINS: value }), [], `CORS_ORIGINS=${value}`)
  }
  for (const value of ['*', 'app.dealer.example', `${APP_ORIGIN}/`, `${APP_ORIGIN}/path`, `${APP_ORIGIN},`,
    'ftp://x.example']) {
    t.same(configProblems({ CORS_ORIGINS: value }), ['CORS_ORIGINS has an invalid value'], `CORS_ORIGINS=${value}`)
  }

  t.same(configProblems({ SERVER_HEADERS_TIMEOUT_MS: '20000', SERVER_REQUEST_TIMEOUT_MS: '10000' }),
    ['SERVER_HEADERS_TIMEOUT_MS must not exceed SERVER_REQUEST_TIMEOUT_MS'])

  const bad = {
    SERVER_HEADERS_TIMEOUT_MS: '0',
    SERVER_REQUEST_TIMEOUT_MS: 'soon',
    SERVER_CONNECTION_TIMEOUT_MS: '-5',
    SERVER_KEEP_ALIVE_TIMEOUT_MS: '1.5',
    SERVER_MAX_REQUESTS_PER_SOCKET: '-1',
    SERVER_BODY_LIMIT_BYTES: '100'
  }
  const problems = configProblems(bad)
  for (const name of Object.keys(bad)) t.equal(problems.filter(p => p.startsWith(`${name} `)).length, 1, name)
  t.equal(problems.length, Object.keys(bad).length)
})
