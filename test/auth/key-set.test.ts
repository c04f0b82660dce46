// AUTH_JWKS_URL over real HTTP: a stand-in identity provider on a local port publishes the key set, and
// the service is asked what a caller would ask. Refresh periods are 1 s where rotation matters; every wait
// is a poll for a condition with a generous bound, never a timed assertion.
import { createPublicKey } from 'node:crypto'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { IVANOV } from '../../schemas/fixtures.ts'
import { maxAgeSeconds } from '../../src/auth/key-set.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { eventually, setKeyPair, startKeySetServer, type KeySetServer } from '../helpers/key-set-server.ts'
import { bearer, claimsFor, hs256, inSeconds, unsigned, withKid } from '../helpers/tokens.ts'

const METRICS_KEY = 'metrics-key-for-key-set-tests'
const RSA = setKeyPair('rsa', 'rsa-2025')
const EC = setKeyPair('ec', 'ec-2026')
const ED = setKeyPair('ed25519', 'ed-2026')

interface Options { refreshSeconds?: number, ready?: boolean, env?: Record<string, string> }

/** The service verifying with the key set of `provider`, a probe route echoing the caller, its warn-level logs. */
async function serviceOn (
  t: Test, provider: KeySetServer, { refreshSeconds = 1, ready = true, env = {} }: Options = {}
) {
  const lines: Array<Record<string, unknown>> = []
  const { app } = await buildTestApp(t, {
    AUTH_JWT_SECRET: undefined,
    AUTH_JWKS_URL: provider.url,
    AUTH_JWKS_REFRESH_S: String(refreshSeconds),
    METRICS_API_KEY: METRICS_KEY,
    // The polls below send refused tokens on purpose; the refusal limit is tested elsewhere.
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000',
    ...env
  }, { logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line)) } } } })
  app.get('/test/caller', { onRequest: app.authenticate }, async request => request.caller)
  await app.ready()
  const answer = async (token: string) => await app.inject({ url: '/test/caller', headers: bearer(token) })
  const status = async (token: string) => (await answer(token)).statusCode
  if (ready) {
    await eventually(async () => (await app.inject('/health/ready')).statusCode === 200,
      'the first key set loads')
  }
  return { app, answer, status, lines }
}

async function scrape (app: Awaited<ReturnType<typeof serviceOn>>['app'], name: string): Promise<number> {
  const res = await app.inject({ url: '/metrics', headers: bearer(METRICS_KEY) })
  const line = res.body.split('\n').find(l => l.startsWith(`${name} `))
  return Number(line?.split(' ')[1])
}

t.test('a token of a published RSA key is served, RS256 and PS256; the caller is its claims', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { app, status } = await serviceOn(t, provider)
  const res = await app.inject({ url: '/test/caller', headers: bearer(withKid('RS256', RSA.kid, RSA.privateKey)) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { vendor: IVANOV.vendor, login: IVANOV.login, uid_client: IVANOV.uid_client.toUpperCase() })
  t.equal(await status(withKid('PS256', RSA.kid, RSA.privateKey)), 200, 'PS256 with the same RSA key')
})

t.test('a key-set token is served for AUTH_JWT_MAX_AGE_S seconds from its iat, then refused as expired', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { app, status } = await serviceOn(t, provider, { env: { AUTH_JWT_MAX_AGE_S: '3600' } })
  const issued = (ago: number) => withKid('RS256', RSA.kid, RSA.privateKey,
    claimsFor(IVANOV, { iat: inSeconds(-ago), exp: inSeconds(10 * 365 * 86_400) }))
  // Read as milliseconds, the maximum age was 3.6 s: every user was signed out minutes after logging in.
  t.equal(await status(issued(120)), 200, 'issued two minutes ago')
  t.equal(await status(issued(1800)), 200, 'issued half an hour ago')
  const old = await app.inject({ url: '/test/caller', headers: bearer(issued(7200)) })
  t.equal(old.statusCode, 401, 'issued two hours ago: past the maximum age')
  t.equal(old.json().message, 'The bearer token has expired')
})

t.test('an EC key added later is served without a restart; a removed key is refused after a refresh', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { status } = await serviceOn(t, provider)
  const ecToken = withKid('ES256', EC.kid, EC.privateKey)
  const rsaToken = withKid('RS256', RSA.kid, RSA.privateKey)

  provider.publish([RSA.jwk, EC.jwk])
  await eventually(async () => await status(ecToken) === 200, 'the EC key is picked up')
  t.equal(await status(ecToken), 200, 'served again (and now remembered as verified)')

  provider.publish([RSA.jwk])
  await eventually(async () => await status(ecToken) === 401,
    'the removed key is refused, its verified tokens forgotten')
  t.equal(await status(rsaToken), 200, 'the key still published is served')
})

t.test('a key replaced under the same kid: tokens of the old material are refused', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { status } = await serviceOn(t, provider)
  const old = withKid('RS256', RSA.kid, RSA.privateKey)
  t.equal(await status(old), 200)
  const replacement = setKeyPair('rsa', RSA.kid)
  provider.publish([replacement.jwk])
  await eventually(async () => await status(old) === 401, 'the old material is refused')
  t.equal(await status(withKid('RS256', RSA.kid, replacement.privateKey)), 200)
})

t.test('EdDSA with an Ed25519 key is served', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([ED.jwk])
  const { status } = await serviceOn(t, provider)
  t.equal(await status(withKid('EdDSA', ED.kid, ED.privateKey)), 200)
})

t.test('100 tokens with unknown kids cost the provider at most a few fetches, and none is served', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  // The default period: no background refresh runs during the test, and the early-refresh cooldown is 30 s.
  const { answer } = await serviceOn(t, provider, { refreshSeconds: 300 })
  const before = provider.fetches
  const tokens = Array.from({ length: 100 }, (_, i) => withKid('RS256', `invented-${i}`, RSA.privateKey))
  // Half at once, half one after the other.
  const together = await Promise.all(tokens.slice(0, 50).map(answer))
  const inTurn = []
  for (const token of tokens.slice(50)) inTurn.push(await answer(token))
  // Within the cooldown of the load, a kid no refresh has looked for yet is retried, never refused nor served.
  for (const res of [...together, ...inTurn]) {
    t.equal(res.statusCode, 503)
    t.equal(res.json().code, 'SIGNING_KEY_PENDING')
    const retryAfter = Number(res.headers['retry-after'])
    t.ok(retryAfter >= 1 && retryAfter <= 30, `Retry-After ${retryAfter}: until the cooldown ends`)
  }
  t.ok(provider.fetches - before <= 2, `${provider.fetches - before} fetches for 100 unknown kids`)

  provider.failWith((_request, response) => { response.destroy() })
  for (const token of tokens.slice(0, 20)) t.equal((await answer(token)).statusCode, 503)
  t.ok(provider.fetches - before <= 2, 'nor while the provider is down')
})

t.test('invented kids: each 503 is counted apart from the error budget; they count against the address ' +
  'only once a refresh begun since they were first seen lacks them, then 429 past the limit', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { app, answer, status } = await serviceOn(t, provider,
    { refreshSeconds: 300, env: { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5' } })
  const forged = Array.from({ length: 8 }, (_, i) => withKid('RS256', `forged-${i}`, RSA.privateKey))
  const codes = async () => {
    const answers = []
    for (const token of forged) answers.push((await answer(token)).json() as { code: string, reason?: string })
    return answers
  }
  // No refresh has looked for these kids yet: each may be a key published since the last one.
  t.strictSame((await codes()).map(body => body.code), Array(8).fill('SIGNING_KEY_PENDING'),
    'pending, and not counted as refused credentials')
  // The background refresh, run now: it lacks every one of them.
  await app.keySet!.refresh()
  const again = await codes()
  t.strictSame(again.map(body => body.code),
    [...Array(5).fill('SIGNING_KEY_PENDING'), ...Array(3).fill('RATE_LIMITED')],
    'a stranger inventing kids is then refused like one guessing signatures')
  t.ok(again.every(body => body.reason === 'signing_key_pending'), 'each answer names the pending key')
  const scraped = (await app.inject({ url: '/metrics', headers: bearer(METRICS_KEY) })).body
  t.match(scraped, /^bff_auth_signing_key_pending_total\{route="\/test\/caller"\} 13$/m,
    'the 503s, counted apart (the 429s are no 5xx)')
  t.equal(await status(withKid('RS256', RSA.kid, RSA.privateKey)), 200, 'a valid token from that address is served')
})

t.test('a real rotation: apps behind one address keep their 503 (never 429) until a refresh finds the new key',
  async t => {
    const provider = await startKeySetServer(t)
    provider.publish([RSA.jwk])
    const { app, answer, status } = await serviceOn(t, provider,
      { refreshSeconds: 300, env: { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5' } })
    // The provider rotates within the cooldown of the last refresh; twelve apps behind one NAT sign in anew.
    provider.publish([RSA.jwk, EC.jwk])
    const rotated = Array.from({ length: 12 }, (_, i) =>
      withKid('ES256', EC.kid, EC.privateKey, claimsFor(IVANOV, { jti: `app-${i}` })))
    for (const token of rotated) {
      const res = await answer(token)
      t.equal(res.statusCode, 503)
      t.strictSame(res.json(), {
        statusCode: 503,
        code: 'SIGNING_KEY_PENDING',
        error: 'Service Unavailable',
        message: res.json().message,
        reason: 'signing_key_pending'
      })
      t.ok(Number(res.headers['retry-after']) >= 1, 'Retry-After: when to try the same token again')
    }
    await app.keySet!.refresh()
    for (const token of rotated) t.equal(await status(token), 200, 'served once a refresh has the key')
  })

t.test('a stranger who sends the provider\'s next kid before it is published cannot make its honest tokens ' +
  '401: pending until a refresh sees the key, then served', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { app, answer, status } = await serviceOn(t, provider, { refreshSeconds: 300 })
  const guess = withKid('ES256', EC.kid, setKeyPair('ec', EC.kid).privateKey)
  t.equal((await answer(guess)).json().code, 'SIGNING_KEY_PENDING', 'the guess, before publication')
  // A refresh begun after the guess lacks the kid (this one, or the guess's own early refresh at another moment).
  await app.keySet!.refresh()
  provider.publish([RSA.jwk, EC.jwk])
  const honest = withKid('ES256', EC.kid, EC.privateKey)
  for (let i = 0; i < 3; i++) {
    const res = await answer(honest)
    t.equal(res.statusCode, 503, 'published since the last refresh: retried, never "sign in again"')
    t.equal(res.json().code, 'SIGNING_KEY_PENDING')
  }
  await app.keySet!.refresh()
  t.equal(await status(honest), 200, 'served as soon as a refresh sees the key')
  t.equal(await status(guess), 401, 'the stranger\'s own token, under the right kid, fails its signature')
})

t.test('a token signed by a key of the set always gets 401 with its reason, however many bad tokens came ' +
  'from its address', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { answer } = await serviceOn(t, provider,
    { refreshSeconds: 300, env: { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3', AUTH_JWT_MAX_AGE_S: '3600' } })
  const foreign = setKeyPair('rsa', RSA.kid).privateKey
  for (let i = 0; i < 3; i++) t.equal((await answer(withKid('RS256', RSA.kid, foreign))).statusCode, 401)
  t.equal((await answer(withKid('RS256', RSA.kid, foreign))).statusCode, 429, 'bad signatures: past the limit')
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['expired', { exp: inSeconds(-120) }, 'token_expired'],
    ['too old', { iat: inSeconds(-7200), exp: inSeconds(86_400) }, 'token_expired'],
    ['issued in the future', { iat: inSeconds(3600), exp: inSeconds(7200) }, 'token_invalid']
  ]
  for (const [name, claims, reason] of cases) {
    const res = await answer(withKid('RS256', RSA.kid, RSA.privateKey, claimsFor(IVANOV, claims)))
    t.equal(res.statusCode, 401, `${name}: 401`)
    t.equal(res.json().reason, reason, `${name}: ${reason}`)
    t.match(res.headers['www-authenticate'], /^Bearer error="invalid_token", error_description="/)
  }
})

t.test('rotation: a token under a key published within the cooldown is retried ' +
  '(503), then served; never 401', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  // A 2 s period, so the early-refresh cooldown is 1 s.
  const { app } = await serviceOn(t, provider, { refreshSeconds: 2 })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const ask = async (token: string) => {
    const res = await request(`${url}/test/caller`, { headers: bearer(token) })
    return {
      status: res.statusCode,
      retryAfter: res.headers['retry-after'],
      body: await res.body.json() as { code?: string }
    }
  }
  // An invented kid starts the cooldown (or meets the one of the load) ...
  const invented = withKid('RS256', 'invented', RSA.privateKey)
  t.not((await ask(invented)).status, 200)
  // ... then the provider rotates and signs with its new key.
  provider.publish([RSA.jwk, EC.jwk])
  const rotated = withKid('ES256', EC.kid, EC.privateKey)
  const seen: number[] = []
  await eventually(async () => {
    const res = await ask(rotated)
    seen.push(res.status)
    if (res.status === 503) {
      t.equal(res.body.code, 'SIGNING_KEY_PENDING')
      t.match(res.retryAfter, /^[12]$/, 'Retry-After: seconds until the next refresh may run')
    }
    return res.status === 200
  }, 'the new key is picked up')
  t.notOk(seen.includes(401), `the valid token was never refused (${seen.join(', ')})`)
  t.ok(seen.every(code => code === 503 || code === 200), 'only retried, then served')

  // The invented kid ends in 401 when a refresh begun after its request lacks it; never served.
  await eventually(async () => (await ask(invented)).status === 401, 'the invented kid is refused')
  const fetches = provider.fetches
  const again = await Promise.all(Array.from({ length: 20 }, async () => (await ask(invented)).status))
  t.ok(again.every(code => code === 401 || code === 503), `refused or pending, never served (${again.join(', ')})`)
  t.ok(provider.fetches - fetches <= 2, 'asking again costs no fetch storm')
})

t.test('the provider down or answering garbage for several periods: known keys keep being served', async t => {
  const token = withKid('RS256', RSA.kid, RSA.privateKey)
  const failures: Array<[string, (p: KeySetServer) => void, RegExp]> = [
    ['down (503)', p => p.failWith((_q, r) => { r.writeHead(503).end() }), /HTTP 503/],
    ['connection dropped', p => p.failWith((_q, r) => { r.destroy() }), /could not be reached|cut short/],
    ['not JSON', p => p.publish({ body: '<html>maintenance</html>' }), /not JSON/],
    ['no keys', p => p.publish({ body: '{"issuer":"x"}' }), /no keys array/],
    ['only a broken key', p => p.publish([{ kty: 'RSA', kid: RSA.kid, n: 'AQAB', e: 'AQAB' }]), /no usable signing key/],
    ['larger than the cap', p => p.publish({ body: JSON.stringify({ keys: [RSA.jwk], pad: 'x'.repeat(300 * 1024) }) }), /larger than/]
  ]
  // Each failure against a provider and a service of its own, all at once: each lasts three refresh periods.
  await Promise.all(failures.map(async ([name, fail, reason]) => {
    const provider = await startKeySetServer(t)
    provider.publish([RSA.jwk])
    const { app, status, lines } = await serviceOn(t, provider)
    t.equal(await status(token), 200, `${name}: served before`)
    const failed = await scrape(app, 'bff_auth_jwks_refresh_failures_total')
    fail(provider)
    const from = provider.fetches
    // Refreshes run one after the other: once the fourth has reached the provider, three have ended.
    await eventually(() => provider.fetches >= from + 4, `${name}: three refreshes fail`)
    t.equal(await status(token), 200, `${name}: the last good set still serves`)
    t.ok(await scrape(app, 'bff_auth_jwks_refresh_failures_total') >= failed + 3, `${name}: each failure counted`)
    t.ok(lines.some(line => line.level === 40 && reason.test(String(line.reason))), `${name}: logged at warn with why`)
    t.equal(await scrape(app, 'bff_auth_jwks_keys'), 1, `${name}: the known key kept`)
    t.notOk(lines.some(line => JSON.stringify(line).includes('maintenance')),
      `${name}: the answer itself is never logged`)
    t.equal((await app.inject('/health/ready')).statusCode, 200, `${name}: still ready, it can verify`)
  }))
})

t.test('a malformed member is skipped, never the whole set; encryption and symmetric keys are not used', async t => {
  const provider = await startKeySetServer(t)
  const encryption = { ...setKeyPair('rsa', 'enc-1').jwk, use: 'enc', alg: 'RSA-OAEP' }
  provider.publish([
    { kty: 'RSA', kid: 'broken', n: 'not-a-modulus', e: 'AQAB' },
    RSA.jwk,
    'not an object',
    { ...EC.jwk, kid: undefined },
    encryption,
    { kty: 'oct', kid: 'hmac', k: 'c2VjcmV0' },
    EC.jwk
  ])
  const { status, lines } = await serviceOn(t, provider)
  t.equal(await status(withKid('RS256', RSA.kid, RSA.privateKey)), 200)
  t.equal(await status(withKid('ES256', EC.kid, EC.privateKey)), 200)
  // A kid the set holds no usable key for: refused once a refresh after its first use has not found it.
  await eventually(async () => await status(withKid('RS256', 'enc-1', RSA.privateKey)) === 401,
    'the encryption key verifies nothing')
  t.equal(await status(hs256(claimsFor(), Buffer.from('secret'), { kid: 'hmac' })), 401,
    'the symmetric key verifies nothing')
  t.ok(lines.some(line => line.msg === 'key set member skipped'), 'a skipped member is logged')
})

t.test('algorithm confusion and unsigned tokens are refused, without a fetch', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk, EC.jwk])
  const { status } = await serviceOn(t, provider, { refreshSeconds: 300 })
  const publicPem = createPublicKey(RSA.privateKey).export({ type: 'spki', format: 'pem' })
  const fetches = provider.fetches
  const cases: Array<[string, string]> = [
    ['HS256 signed with the RSA public key (PEM)', hs256(claimsFor(), publicPem, { kid: RSA.kid })],
    ['HS256 signed with the RSA modulus', hs256(claimsFor(), Buffer.from(String(RSA.jwk.n)), { kid: RSA.kid })],
    ['alg none under a published kid', unsigned(claimsFor(), { kid: RSA.kid })],
    ['alg none without a kid', unsigned()],
    ['ES256 under the RSA kid', withKid('ES256', RSA.kid, EC.privateKey)],
    ['RS256 under the EC kid', withKid('RS256', EC.kid, RSA.privateKey)],
    ['RS256 by another key under the published kid', withKid('RS256', RSA.kid, setKeyPair('rsa', 'x').privateKey)]
  ]
  for (const [name, token] of cases) t.equal(await status(token), 401, name)
  t.equal(provider.fetches, fetches, 'none of them made the service fetch the set')
  t.equal(await status(withKid('RS256', RSA.kid, RSA.privateKey)), 200, 'while the real key still works')
})

t.test('readiness is 503 with a reason until the first set loads, then 200; liveness stays 200', async t => {
  const provider = await startKeySetServer(t)
  provider.failWith((_request, response) => { response.writeHead(500).end() })
  const { app, status } = await serviceOn(t, provider, { ready: false })
  await eventually(() => provider.fetches >= 2, 'the first load is retried')
  const notReady = await app.inject('/health/ready')
  t.equal(notReady.statusCode, 503)
  t.match(notReady.json(), { code: 'SERVICE_UNAVAILABLE', message: /key set has not loaded/ })
  t.equal((await app.inject('/health/live')).statusCode, 200)
  t.equal(await status(withKid('RS256', RSA.kid, RSA.privateKey)), 503, 'a caller is not told its token is bad')

  provider.publish([RSA.jwk])
  await eventually(async () => (await app.inject('/health/ready')).statusCode === 200, 'ready once a set loads')
  t.equal(await status(withKid('RS256', RSA.kid, RSA.privateKey)), 200)
})

t.test('a Cache-Control max-age longer than the period makes refreshes that much rarer', async t => {
  const rare = await startKeySetServer(t)
  rare.publish([RSA.jwk], { 'cache-control': 'public, max-age=3600' })
  const control = await startKeySetServer(t)
  control.publish([RSA.jwk])
  await serviceOn(t, rare)
  await serviceOn(t, control)
  // Both run with a 1 s period: while the control refreshes three times, the other may not refresh at all.
  await eventually(() => control.fetches >= 4, 'the control refreshes')
  t.equal(rare.fetches, 1, 'the set asked to be cached for an hour')
})

t.test('maxAgeSeconds reads Cache-Control', async t => {
  t.equal(maxAgeSeconds('public, max-age=600'), 600)
  t.equal(maxAgeSeconds('max-age="30", must-revalidate'), 30)
  t.equal(maxAgeSeconds(['no-transform', 'max-age=5']), 5)
  t.equal(maxAgeSeconds('s-maxage=600'), undefined)
  t.equal(maxAgeSeconds('no-store'), undefined)
  t.equal(maxAgeSeconds(undefined), undefined)
})
