// Rate limits through the whole app: the profile per client (token `sub`), the console per client
// address (the real one behind a trusted balancer), refused credentials per address, and every refusal
// as 429 RATE_LIMITED in the error body with Retry-After.
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildTestApp, configProblems, CONSOLE_KEY, testConfig, type TestApp } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256, inSeconds } from '../helpers/tokens.ts'
import { respondToOperation } from '../helpers/upstream-mock.ts'

const PROFILE = '/api/users/profile'
const CONSOLE = '/request-console'
const IVANOV_TOKEN = hs256()
const PETROVA_TOKEN = hs256(claimsFor(fx.PETROVA))

interface Answer { statusCode: number, headers: Record<string, unknown>, body: string, json (): any }

/** The passport answers "not found" `times` times: a profile request that reaches the upstream is a 404. */
function passportNotFound (upstream: TestApp['upstream'], times: number) {
  respondToOperation(upstream, 'passport.get_client', { status: 400, body: fx.passportNotFound, times })
}

/**
 * The 429 every limit answers: the error body (with the refused token's `reason` on the refused-credential limit,
 * none elsewhere), Retry-After within the minute, the x-ratelimit-* headers.
 */
function assertLimited (tt: Test, res: Answer, limit: number, reason?: string) {
  tt.equal(res.statusCode, 429)
  tt.strictSame(res.json(), {
    statusCode: 429,
    code: 'RATE_LIMITED',
    error: 'Too Many Requests',
    message: res.json().message,
    ...(reason === undefined ? {} : { reason })
  })
  tt.match(res.json().message, /^Too many requests; retry in \d+ seconds?$/)
  const retryAfter = Number(res.headers['retry-after'])
  tt.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    'Retry-After: whole seconds within the minute')
  tt.equal(res.headers['x-ratelimit-limit'], String(limit))
  tt.equal(res.headers['x-ratelimit-remaining'], '0')
  tt.ok(res.headers['x-request-id'], 'x-request-id on the refusal')
}

t.test('profile: limited per client (token sub), another client unaffected', async t => {
  const { app, upstream, agent } = await buildTestApp(t, { RATE_LIMIT_PROFILE_PER_MINUTE: '2' })
  passportNotFound(upstream, 3)
  // Different addresses: the key is the client, not where it calls from.
  for (const [i, remoteAddress] of ['198.51.100.1', '198.51.100.2'].entries()) {
    const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN), remoteAddress })
    t.equal(res.statusCode, 404, `request ${i + 1} reaches the upstream`)
    t.equal(res.headers['x-ratelimit-remaining'], String(1 - i))
  }
  // Another token of the same client shares its budget.
  const sameClient = hs256(claimsFor(fx.IVANOV, { iat: inSeconds(-5) }))
  assertLimited(t, await app.inject({ url: PROFILE, headers: bearer(sameClient), remoteAddress: '198.51.100.3' }), 2)
  assertLimited(t, await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) }), 2)

  const other = await app.inject({ url: PROFILE, headers: bearer(PETROVA_TOKEN), remoteAddress: '198.51.100.1' })
  t.equal(other.statusCode, 404, 'another client from the same address is served')
  agent.assertNoPendingInterceptors()
})

t.test('profile: refused tokens do not use up the client budget', async t => {
  const { app, upstream } = await buildTestApp(t,
    { RATE_LIMIT_PROFILE_PER_MINUTE: '1', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100' })
  passportNotFound(upstream, 1)
  const forged = hs256(claimsFor(), 'another-secret-that-is-at-least-32-characters')
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: PROFILE, headers: bearer(forged) })).statusCode, 401)
  t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })).statusCode, 404)
})

t.test('console: limited per client address', async t => {
  const { app } = await buildTestApp(t, { RATE_LIMIT_CONSOLE_PER_MINUTE: '2' })
  // An invalid body is answered without the upstream, and still counts: the limit comes first.
  const send = (remoteAddress: string) =>
    app.inject({ method: 'POST', url: CONSOLE, headers: { 'x-console-key': CONSOLE_KEY }, payload: {}, remoteAddress })
  for (let i = 0; i < 2; i++) t.equal((await send('198.51.100.7')).statusCode, 400)
  assertLimited(t, await send('198.51.100.7'), 2)
  t.equal((await send('198.51.100.8')).statusCode, 400, 'another address is served')
  // IPv6: one subscriber's /64 is one client.
  for (let i = 0; i < 2; i++) t.equal((await send(`2001:db8:1:2::${i + 1}`)).statusCode, 400)
  assertLimited(t, await send('2001:db8:1:2::99'), 2)
})

t.test('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot pick its own key', async t => {
  const { app } = await buildTestApp(t, { RATE_LIMIT_CONSOLE_PER_MINUTE: '2' })
  const send = (forwarded: string) => app.inject({
    method: 'POST',
    url: CONSOLE,
    payload: {},
    remoteAddress: '198.51.100.7',
    headers: { 'x-console-key': CONSOLE_KEY, 'x-forwarded-for': forwarded }
  })
  t.equal((await send('203.0.113.1')).statusCode, 400)
  t.equal((await send('203.0.113.2')).statusCode, 400)
  assertLimited(t, await send('203.0.113.3'), 2)
})

t.test('with TRUST_PROXY, the client behind a trusted balancer is the key, and only a ' +
  'trusted balancer is believed', async t => {
  const { app } = await buildTestApp(t, { RATE_LIMIT_CONSOLE_PER_MINUTE: '2', TRUST_PROXY: '10.0.0.0/8, 192.0.2.10' })
  const send = (remoteAddress: string, forwarded: string) => app.inject({
    method: 'POST',
    url: CONSOLE,
    payload: {},
    remoteAddress,
    headers: { 'x-console-key': CONSOLE_KEY, 'x-forwarded-for': forwarded }
  })
  t.equal((await send('10.1.2.3', '203.0.113.1')).statusCode, 400)
  t.equal((await send('192.0.2.10', '203.0.113.1')).statusCode, 400, 'through the other balancer')
  assertLimited(t, await send('10.9.9.9', '203.0.113.1'), 2)
  t.equal((await send('10.1.2.3', '203.0.113.2')).statusCode, 400, 'another client behind the balancer is served')
  // A forged header from the client itself (three hops claimed) names the client, not the forgery.
  t.equal((await send('10.1.2.3', '198.51.100.66, 203.0.113.3')).statusCode, 400)
  t.equal((await send('10.1.2.3', '198.51.100.77, 203.0.113.3')).statusCode, 400)
  assertLimited(t, await send('10.1.2.3', '198.51.100.88, 203.0.113.3'), 2)

  // A peer that is not a trusted balancer is the client, whatever it forwards.
  t.equal((await send('198.51.100.5', '203.0.113.50')).statusCode, 400)
  t.equal((await send('198.51.100.5', '203.0.113.51')).statusCode, 400)
  assertLimited(t, await send('198.51.100.5', '203.0.113.52'), 2)
})

t.test('refused credentials per address: past the limit, 429 only to refused ' +
  'credentials, never to a valid token', async t => {
  const { app, upstream, agent } = await buildTestApp(t, { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' })
  const shared = '198.51.100.20'
  const forged = hs256(claimsFor(), 'another-secret-that-is-at-least-32-characters')
  const refusals = [{}, bearer('not-a-jwt'), bearer(forged)]
  for (const headers of refusals) {
    t.equal((await app.inject({ url: PROFILE, headers, remoteAddress: shared })).statusCode, 401)
  }

  // 40 more bad tokens (expired apps retrying behind one NAT address): every one past the limit is 429.
  for (let i = 0; i < 40; i++) {
    const res = await app.inject({ url: PROFILE, headers: i % 2 === 0 ? bearer(forged) : {}, remoteAddress: shared })
    assertLimited(t, res, 3, i % 2 === 0 ? 'token_invalid' : 'token_missing')
    t.notOk(res.headers['www-authenticate'], 'no challenge on a 429')
  }
  // A valid token from the same address is verified and served: nobody can lock it out.
  passportNotFound(upstream, 2)
  t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN), remoteAddress: shared })).statusCode, 404,
    'a valid token is served')
  t.equal((await app.inject({
    method: 'POST',
    url: CONSOLE,
    headers: { 'x-console-key': CONSOLE_KEY },
    payload: {},
    remoteAddress: shared
  })).statusCode, 400,
  'a valid console key is served')
  const badKey = await app.inject({
    method: 'POST',
    url: CONSOLE,
    headers: { 'x-console-key': 'wrong-key-0123456789' },
    payload: {},
    remoteAddress: shared
  })
  assertLimited(t, badKey, 3)

  t.equal((await app.inject({ url: PROFILE, headers: bearer(forged), remoteAddress: '198.51.100.21' })).statusCode, 401,
    'another address is counted on its own')
  t.equal((await app.inject({
    url: PROFILE,
    headers: bearer(PETROVA_TOKEN),
    remoteAddress: '198.51.100.21'
  })).statusCode, 404)
  t.equal((await app.inject('/health/live')).statusCode, 200, 'routes without credentials are not affected')
  agent.assertNoPendingInterceptors()
})

t.test('a token whose signature verifies always gets 401 with its reason and challenge, however many bad ' +
  'tokens came from its address; only tokens that fail verification count', async t => {
  const { app } = await buildTestApp(t, {
    AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'dealer-app', AUTH_JWT_MAX_AGE_S: '3600'
  })
  const nat = '198.51.100.50'
  const ours = (extra: Record<string, unknown> = {}) =>
    claimsFor(fx.IVANOV, { iss: 'https://id.example', aud: 'dealer-app', ...extra })
  const forged = hs256(ours(), 'another-secret-that-is-at-least-32-characters')
  const send = (headers: Record<string, string>, remoteAddress = nat) =>
    app.inject({ url: PROFILE, headers, remoteAddress })
  const expiredChallenge = 'Bearer error="invalid_token", error_description="The access token expired"'
  const invalidChallenge = 'Bearer error="invalid_token", error_description="The access token is invalid"'

  // A stranger behind the same carrier NAT: 31 bad tokens in a minute, one past the default limit of 30.
  for (let i = 0; i < 30; i++) t.equal((await send(bearer(i % 2 === 0 ? forged : `garbage-${i}`))).statusCode, 401)
  assertLimited(t, await send(bearer(forged)), 30, 'token_invalid')

  // Tokens our key signed, each refused for what it says: the app must learn to refresh, or to sign in again.
  const verified: Array<[string, string, 'token_expired' | 'token_invalid']> = [
    ['expired', hs256(ours({ exp: inSeconds(-120) })), 'token_expired'],
    ['older than AUTH_JWT_MAX_AGE_S', hs256(ours({ iat: inSeconds(-7200), exp: inSeconds(86_400) })), 'token_expired'],
    ['issued in the future', hs256(ours({ iat: inSeconds(3600), exp: inSeconds(7200) })), 'token_invalid'],
    ['not valid yet', hs256(ours({ nbf: inSeconds(600) })), 'token_invalid'],
    ['another audience', hs256(ours({ aud: 'some-other-client' })), 'token_invalid'],
    ['another issuer', hs256(ours({ iss: 'https://other.example' })), 'token_invalid'],
    ['without the client claims', hs256(ours({ sub: 'not-a-uuid' })), 'token_invalid']
  ]
  for (const [name, token, reason] of verified) {
    const res = await send(bearer(token))
    t.equal(res.statusCode, 401, `${name}: 401, not 429`)
    t.equal(res.json().code, 'UNAUTHORIZED', `${name}: the code apps branch on is unchanged`)
    t.equal(res.json().reason, reason, `${name}: ${reason}`)
    t.equal(res.headers['www-authenticate'], reason === 'token_expired' ? expiredChallenge : invalidChallenge,
      `${name}: the challenge says the same`)
  }

  // What fails verification is still limited, a forged token that claims to be merely expired included; the 429
  // says that this token will never be served.
  const forgedExpired = hs256(ours({ exp: inSeconds(-120) }), 'another-secret-that-is-at-least-32-characters')
  for (const token of [forged, forgedExpired]) {
    assertLimited(t, await send(bearer(token)), 30, 'token_invalid')
  }
  assertLimited(t, await send({}), 30, 'token_missing')

  // Tokens that verify never count: a busy NAT's own expired tokens do not bring its address to the limit.
  const office = '198.51.100.51'
  const expired = hs256(ours({ exp: inSeconds(-120) }))
  for (let i = 0; i < 40; i++) t.equal((await send(bearer(expired), office)).statusCode, 401)
  for (let i = 0; i < 30; i++) t.equal((await send(bearer(forged), office)).statusCode, 401, 'the count starts at 0')
  assertLimited(t, await send(bearer(forged), office), 30, 'token_invalid')
})

t.test('refused console keys count too; accepted credentials never do', async t => {
  const { app } = await buildTestApp(t,
    { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2', RATE_LIMIT_CONSOLE_PER_MINUTE: '100' })
  const send = (key: string, remoteAddress: string) =>
    app.inject({ method: 'POST', url: CONSOLE, headers: { 'x-console-key': key }, payload: {}, remoteAddress })
  // Accepted keys (answered 400 for the body) from one address, many more than the failure limit.
  for (let i = 0; i < 4; i++) t.equal((await send(CONSOLE_KEY, '198.51.100.30')).statusCode, 400)
  t.equal((await send('wrong-key-0-0123456789', '198.51.100.30')).statusCode, 401, 'accepted keys did not count')

  const guesser = '198.51.100.31'
  for (let i = 0; i < 2; i++) t.equal((await send(`wrong-key-${i}-0123456789`, guesser)).statusCode, 401)
  assertLimited(t, await send('wrong-key-2-0123456789', guesser), 2)
  t.equal((await send(CONSOLE_KEY, guesser)).statusCode, 400, 'the right key is still served from the guessing address')
})

t.test('refused metrics keys count with the others and are logged at warn below the limit', async t => {
  const lines: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => { lines.push(JSON.parse(line)) } }
  const METRICS_KEY = 'metrics-key-for-tests-0123456789'
  const { app } = await buildTestApp(t,
    { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2', METRICS_API_KEY: METRICS_KEY, LOG_LEVEL: 'info' },
    { logger: { level: 'info', stream } })
  const scrape = (key: string) =>
    app.inject({ url: '/metrics', headers: { authorization: `Bearer ${key}` }, remoteAddress: '198.51.100.40' })
  for (let i = 0; i < 2; i++) t.equal((await scrape(`guess-${i}-0123456789abcdef`)).statusCode, 401)
  assertLimited(t, await scrape('guess-2-0123456789abcdef'), 2)
  t.equal((await scrape(METRICS_KEY)).statusCode, 200, 'the right key is still served')
  const warnings = lines.filter(line => line.level === 40 && line.msg === 'refused metrics scrape')
  t.equal(warnings.length, 2, 'every guess below the limit is logged at warn; past it, a summary counts them')
  t.notOk(JSON.stringify(lines).includes('guess-'), 'no guessed key in the logs')
})

t.test('the 429 is documented on both routes with its headers', async t => {
  const { app } = await buildTestApp(t)
  const doc = (await app.inject('/docs/json')).json()
  for (const op of [doc.paths[PROFILE].get, doc.paths[CONSOLE].post]) {
    const limited = op.responses['429']
    t.equal(limited.content['application/json'].examples.RATE_LIMITED.value.code, 'RATE_LIMITED')
    for (const header of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      t.ok(limited.headers[header], header)
    }
  }
})

t.test('config: the limits are positive whole numbers per minute, named when bad', async t => {
  const config = testConfig()
  t.equal(config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, 30, 'refused credentials: 30 per minute by default')
  t.equal(testConfig({ RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5' }).RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, 5)
  for (const value of ['0', '-1', '2.5', 'many']) {
    t.match(configProblems({ RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: value }), [/^RATE_LIMIT_AUTH_FAILURES_PER_MINUTE /], value)
  }
})
