// Caller authentication: who may call, and that the caller is whoever the verified token says.
// Refusals are checked on the real profile route (no upstream interceptor is set, so any upstream call
// would fail the test); acceptances on a probe route that echoes request.caller.
import { createHmac, generateKeyPairSync } from 'node:crypto'
import t, { type Test } from 'tap'
import { IVANOV } from '../../schemas/fixtures.ts'
import { callerOf } from '../../src/auth/caller.ts'
import { verificationKey } from '../../src/auth/verification-key.ts'
import { buildTestApp, JWT_SECRET } from '../helpers/build-app.ts'
import { asymmetric, bearer, claimsFor, hs256, inSeconds, keyPair, unsigned, type Claims } from '../helpers/tokens.ts'

const PROFILE = '/api/users/profile'

/** A test app with a probe route that answers with the authenticated caller. */
async function appWithProbe (tt: Test, env: Record<string, string | undefined> = {}) {
  const built = await buildTestApp(tt, env)
  built.app.get('/test/caller', { onRequest: built.app.authenticate }, async (request) => request.caller)
  tt.teardown(() => built.agent.assertNoPendingInterceptors())
  return built
}

type Reason = 'token_missing' | 'token_expired' | 'token_invalid'

/** What the app reads to choose between signing in and refreshing: RFC 6750's challenge, and the body's reason. */
const CHALLENGES: Record<Reason, string> = {
  token_missing: 'Bearer',
  token_expired: 'Bearer error="invalid_token", error_description="The access token expired"',
  token_invalid: 'Bearer error="invalid_token", error_description="The access token is invalid"'
}

/** The standard 401: body with its reason, the matching challenge, request id, and nothing of the token in it. */
function assertRefused (
  tt: Test,
  res: { statusCode: number, headers: Record<string, unknown>, body: string },
  reason: Reason,
  token?: string
) {
  tt.equal(res.statusCode, 401)
  tt.equal(res.headers['www-authenticate'], CHALLENGES[reason])
  tt.ok(res.headers['x-request-id'], 'x-request-id on the refusal')
  const body = JSON.parse(res.body)
  tt.same(Object.keys(body).sort(), ['code', 'error', 'message', 'reason', 'statusCode'])
  tt.match(body, { statusCode: 401, code: 'UNAUTHORIZED', error: 'Unauthorized', message: String, reason })
  if (token !== undefined) {
    for (const part of token.split('.').filter(p => p.length > 0)) {
      tt.notOk(res.body.includes(part),
        'no part of the token in the body')
    }
  }
}

const INVALID = 'token_invalid'
const EXPIRED = 'token_expired'

t.test('no bearer token: 401 with a bare Bearer challenge', async t => {
  const { app } = await appWithProbe(t)
  const token = hs256()
  for (const headers of [{}, { authorization: '' }, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    { authorization: `Token ${token}` }, { authorization: token }]) {
    const res = await app.inject({ url: PROFILE, headers })
    assertRefused(t, res, 'token_missing')
  }
})

t.test('malformed bearer tokens: 401 invalid_token', async t => {
  const { app } = await appWithProbe(t)
  for (const token of ['', 'abc', 'not.a.jwt', `${hs256()}.extra`, 'x'.repeat(5000)]) {
    const res = await app.inject({ url: PROFILE, headers: { authorization: `Bearer ${token}` } })
    assertRefused(t, res, INVALID)
  }
})

t.test('expired, unexpired-but-missing-exp and future-nbf tokens are refused', async t => {
  const { app } = await appWithProbe(t)
  const cases: Array<[string, Claims, Reason]> = [
    ['expired beyond the clock tolerance', claimsFor(IVANOV, { exp: inSeconds(-120) }), EXPIRED],
    ['no exp at all', (({ exp, ...rest }) => rest)(claimsFor()), INVALID],
    ['exp that is not a number', claimsFor(IVANOV, { exp: 'tomorrow' }), INVALID],
    ['not valid before a minute from now', claimsFor(IVANOV, { nbf: inSeconds(120) }), INVALID]
  ]
  for (const [name, claims, reason] of cases) {
    const token = hs256(claims)
    const res = await app.inject({ url: PROFILE, headers: bearer(token) })
    t.test(name, async t => assertRefused(t, res, reason, token))
  }
  const expired = await app.inject({
    url: PROFILE, headers: bearer(hs256(claimsFor(IVANOV, { exp: inSeconds(-120) })))
  })
  t.equal(JSON.parse(expired.body).message, 'The bearer token has expired')
})

t.test('a token just past exp, within the 30 s clock tolerance, is accepted', async t => {
  const { app } = await appWithProbe(t)
  const res = await app.inject({
    url: '/test/caller',
    headers: bearer(hs256(claimsFor(IVANOV, { exp: inSeconds(-10) })))
  })
  t.equal(res.statusCode, 200)
})

t.test('wrong signatures and algorithms are refused with a secret configured', async t => {
  const { app } = await appWithProbe(t)
  const good = hs256()
  const [header, payload] = good.split('.') as [string, string]
  const hs512Input = `${Buffer.from(JSON.stringify({ alg: 'HS512', typ: 'JWT' })).toString('base64url')}.${payload}`
  const cases: Array<[string, string]> = [
    ['signed with another secret', hs256(claimsFor(), 'another-secret-that-is-at-least-32-characters')],
    ['payload swapped under a valid signature',
      `${header}.${Buffer.from(JSON.stringify(claimsFor(IVANOV, { login: '70000000000' }))).toString('base64url')}` +
        `.${good.split('.')[2]}`],
    ['alg none, unsigned', unsigned()],
    ['alg none carrying the valid signature', `${unsigned().slice(0, -1)}.${good.split('.')[2]}`],
    ['HS512 with the right secret (not on the allowlist)',
      `${hs512Input}.${createHmac('sha512', JWT_SECRET).update(hs512Input).digest('base64url')}`],
    ['RS256 while a secret is configured', asymmetric('RS256', keyPair('rsa').privateKey)]
  ]
  for (const [name, token] of cases) {
    const res = await app.inject({ url: PROFILE, headers: bearer(token) })
    t.test(name, async t => assertRefused(t, res, INVALID, token))
  }
})

t.test('claims that do not name a client are refused', async t => {
  const { app } = await appWithProbe(t)
  const cases: Array<[string, Claims]> = [
    ['sub not a UUID', claimsFor(IVANOV, { sub: 'ivanov' })],
    ['sub missing', (({ sub, ...rest }) => rest)(claimsFor())],
    ['login with letters', claimsFor(IVANOV, { login: '7916abc' })],
    ['login as a number', claimsFor(IVANOV, { login: 79161234567 })],
    ['login missing', (({ login, ...rest }) => rest)(claimsFor())],
    ['vendor with a space', claimsFor(IVANOV, { vendor: 'kia motors' })],
    ['vendor missing', (({ vendor, ...rest }) => rest)(claimsFor())]
  ]
  for (const [name, claims] of cases) {
    const token = hs256(claims)
    const res = await app.inject({ url: PROFILE, headers: bearer(token) })
    t.test(name, async t => assertRefused(t, res, INVALID, token))
  }
})

t.test('the caller comes from the verified claims only, uid_client upper-cased', async t => {
  const { app } = await appWithProbe(t)
  const token =
    hs256(claimsFor({ ...IVANOV, uid_client: IVANOV.uid_client.toLowerCase() },
      { role: 'admin', uid_client: '00000000-0000-4000-8000-000000000001' }))
  const res = await app.inject({
    url: '/test/caller?uid_client=00000000-0000-4000-8000-000000000002',
    headers: { authorization: `bearer ${token}`, 'x-uid-client': '00000000-0000-4000-8000-000000000003' }
  })
  t.equal(res.statusCode, 200, 'the scheme is case-insensitive')
  t.strictSame(res.json(), { vendor: IVANOV.vendor, login: IVANOV.login, uid_client: IVANOV.uid_client })
})

t.test('a route that forgets authenticate fails closed', async t => {
  const { app } = await buildTestApp(t)
  app.get('/test/forgot', async (request) => callerOf(request))
  const res = await app.inject({ url: '/test/forgot', headers: bearer(hs256()) })
  t.equal(res.statusCode, 401)
})

t.test('with a public key configured', async t => {
  const rsa = keyPair('rsa')
  const ec = keyPair('ec')

  t.test('RSA key: RS256 accepted; HS256 signed with the public key, ES256 and alg none refused', async t => {
    const { app } = await appWithProbe(t, { AUTH_JWT_SECRET: undefined, AUTH_JWT_PUBLIC_KEY: rsa.publicPem })
    const ok = await app.inject({ url: '/test/caller', headers: bearer(asymmetric('RS256', rsa.privateKey)) })
    t.equal(ok.statusCode, 200)
    t.equal(ok.json().uid_client, IVANOV.uid_client)
    for (const token of [hs256(claimsFor(), rsa.publicPem), asymmetric('ES256', ec.privateKey), unsigned(),
      asymmetric('RS256', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)]) {
      assertRefused(t, await app.inject({ url: PROFILE, headers: bearer(token) }), INVALID, token)
    }
  })

  t.test('EC P-256 key: ES256 accepted; HS256 with the public key and RS256 refused', async t => {
    const { app } = await appWithProbe(t, { AUTH_JWT_SECRET: undefined, AUTH_JWT_PUBLIC_KEY: ec.publicPem })
    const ok = await app.inject({ url: '/test/caller', headers: bearer(asymmetric('ES256', ec.privateKey)) })
    t.equal(ok.statusCode, 200)
    t.equal(ok.json().login, IVANOV.login)
    for (const token of [hs256(claimsFor(), ec.publicPem), asymmetric('RS256', rsa.privateKey), unsigned()]) {
      assertRefused(t, await app.inject({ url: PROFILE, headers: bearer(token) }), INVALID, token)
    }
  })
})

t.test('verificationKey picks one algorithm from the key and refuses unusable keys', async t => {
  t.same(verificationKey({ AUTH_JWT_SECRET: JWT_SECRET }), { key: JWT_SECRET, algorithm: 'HS256' })
  t.equal(verificationKey({ AUTH_JWT_PUBLIC_KEY: keyPair('rsa').publicPem }).algorithm, 'RS256')
  t.equal(verificationKey({ AUTH_JWT_PUBLIC_KEY: keyPair('ec').publicPem }).algorithm, 'ES256')
  const pem = (pair: { publicKey: { export (o: object): string | Buffer } }) =>
    pair.publicKey.export({ type: 'spki', format: 'pem' }).toString()
  t.throws(() => verificationKey({ AUTH_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----' }), /not a readable public key/)
  t.throws(() => verificationKey({ AUTH_JWT_PUBLIC_KEY: pem(generateKeyPairSync('ec', { namedCurve: 'P-384' })) }), /RSA .* or P-256/)
  t.throws(() => verificationKey({ AUTH_JWT_PUBLIC_KEY: pem(generateKeyPairSync('rsa', { modulusLength: 1024 })) }), /2048 bits/)
  t.throws(() => verificationKey({ AUTH_JWT_PUBLIC_KEY: pem(generateKeyPairSync('ed25519')) }), /RSA .* or P-256/)
})

t.test('iat is required, and a token older than AUTH_JWT_MAX_AGE_S is refused whatever its exp', async t => {
  const { app } = await appWithProbe(t, { AUTH_JWT_MAX_AGE_S: '3600' })
  const noIat = hs256((({ iat, ...rest }) => rest)(claimsFor()))
  assertRefused(t, await app.inject({ url: PROFILE, headers: bearer(noIat) }), INVALID, noIat)
  // Issued two hours ago, valid for ten years by its exp: past the one-hour maximum age.
  const old = hs256(claimsFor(IVANOV, { iat: inSeconds(-7200), exp: inSeconds(10 * 365 * 86_400) }))
  const res = await app.inject({ url: PROFILE, headers: bearer(old) })
  assertRefused(t, res, EXPIRED, old)
  t.equal(res.json().message, 'The bearer token has expired')
  const young = hs256(claimsFor(IVANOV, { iat: inSeconds(-1800), exp: inSeconds(10 * 365 * 86_400) }))
  t.equal((await app.inject({ url: '/test/caller', headers: bearer(young) })).statusCode, 200, 'within the maximum age')
})

t.test('the maximum age defaults to one day', async t => {
  const { app, config } = await appWithProbe(t)
  t.equal(config.AUTH_JWT_MAX_AGE_S, 86_400)
  const tenYears = hs256(claimsFor(IVANOV, { iat: inSeconds(-86_400 - 60), exp: inSeconds(10 * 365 * 86_400) }))
  assertRefused(t, await app.inject({ url: PROFILE, headers: bearer(tenYears) }), EXPIRED, tenYears)
})

t.test('AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE: tokens without them or with other values are refused', async t => {
  const { app } = await appWithProbe(t, { AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'dealer-app' })
  const good = hs256(claimsFor(IVANOV, { iss: 'https://id.example', aud: 'dealer-app' }))
  t.equal((await app.inject({ url: '/test/caller', headers: bearer(good) })).statusCode, 200)
  const inList = hs256(claimsFor(IVANOV, { iss: 'https://id.example', aud: ['other-api', 'dealer-app'] }))
  t.equal((await app.inject({ url: '/test/caller', headers: bearer(inList) })).statusCode, 200,
    'aud as a list that holds ours')
  const cases: Array<[string, Claims]> = [
    ['no iss', claimsFor(IVANOV, { aud: 'dealer-app' })],
    ['no aud', claimsFor(IVANOV, { iss: 'https://id.example' })],
    ['another issuer', claimsFor(IVANOV, { iss: 'https://other.example', aud: 'dealer-app' })],
    ['another audience (an ID token of the same issuer)',
      claimsFor(IVANOV, { iss: 'https://id.example', aud: 'some-client-id' })]
  ]
  for (const [name, claims] of cases) {
    const token = hs256(claims)
    const res = await app.inject({ url: PROFILE, headers: bearer(token) })
    t.test(name, async t => assertRefused(t, res, INVALID, token))
  }
})

t.test('without AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE, iss and aud are not checked', async t => {
  const { app } = await appWithProbe(t)
  const any = hs256(claimsFor(IVANOV, { iss: 'https://anyone.example', aud: 'anything' }))
  t.equal((await app.inject({ url: '/test/caller', headers: bearer(any) })).statusCode, 200)
})

t.test('a token refused for its nbf is accepted as soon as it becomes valid, not a cache lifetime later', async t => {
  const { app } = await appWithProbe(t)
  const realNow = Date.now
  t.teardown(() => { Date.now = realNow })
  // Valid from 40 s on: refused now (beyond the 30 s tolerance), accepted 11 s later.
  const token = hs256(claimsFor(IVANOV, { nbf: inSeconds(40) }))
  assertRefused(t, await app.inject({ url: '/test/caller', headers: bearer(token) }), INVALID, token)
  const start = realNow()
  Date.now = () => start + 11_000
  t.equal((await app.inject({ url: '/test/caller', headers: bearer(token) })).statusCode, 200)
})

t.test('a forged token stays refused (its refusal may be cached)', async t => {
  const { app } = await appWithProbe(t)
  const forged = hs256(claimsFor(), 'another-secret-that-is-at-least-32-characters')
  for (let i = 0; i < 2; i++) {
    assertRefused(t, await app.inject({ url: PROFILE, headers: bearer(forged) }), INVALID, forged)
  }
})
