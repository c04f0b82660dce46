// A token's `iat` in the future is refused, over real HTTP and with both verifiers (the fixed key through
// @fastify/jwt, the key set through a verifier per key): AUTH_JWT_MAX_AGE_S counts from `iat`, so an `iat`
// ahead of now would make a token live as long as its issuer wished. Within the clock tolerance it is served.
import t, { type Test } from 'tap'
import { request } from 'undici'
import { IVANOV } from '../../schemas/fixtures.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import { eventually, setKeyPair, startKeySetServer } from '../helpers/key-set-server.ts'
import { bearer, claimsFor, hs256, inSeconds, withKid, type Claims } from '../helpers/tokens.ts'

const DAY = 86_400
const YEAR = 365 * DAY
const RSA = setKeyPair('rsa', 'rsa-time')

/** [what, claims, served]: the `iat` cases of the finding, and one inside the 30 s tolerance. */
const CASES: Array<[string, () => Claims, boolean]> = [
  ['iat and exp ten years ahead',
    () => claimsFor(IVANOV, { iat: inSeconds(10 * YEAR), exp: inSeconds(10 * YEAR + 600) }), false],
  ['iat one day ahead, exp two days ahead', () => claimsFor(IVANOV, { iat: inSeconds(DAY), exp: inSeconds(2 * DAY) }),
    false],
  ['iat and exp both 1e12', () => claimsFor(IVANOV, { iat: 1e12, exp: 1e12 }), false],
  ['iat 10 s ahead (an issuer clock within the tolerance)', () => claimsFor(IVANOV, { iat: inSeconds(10) }), true]
]

/** The app listening on a free local port with a probe route that answers the caller. */
async function listening (
  t: Test, env: Record<string, string | undefined>
): Promise<{ url: string, ready: () => Promise<boolean> }> {
  const { app } = await buildTestApp(t, { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000', ...env })
  app.get('/test/caller', { onRequest: app.authenticate }, async req => req.caller)
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { url, ready: async () => (await app.inject('/health/ready')).statusCode === 200 }
}

async function check (t: Test, url: string, sign: (claims: Claims) => string): Promise<void> {
  for (const [what, claims, served] of CASES) {
    const res = await request(`${url}/test/caller`, { headers: bearer(sign(claims())) })
    const body = await res.body.json() as { code?: string, message?: string, reason?: string, uid_client?: string }
    if (served) {
      t.equal(res.statusCode, 200, `${what}: served`)
      t.equal(body.uid_client, IVANOV.uid_client.toUpperCase())
      continue
    }
    t.equal(res.statusCode, 401, `${what}: refused`)
    t.equal(body.code, 'UNAUTHORIZED')
    t.equal(body.message, 'The bearer token is invalid')
    t.equal(res.headers['www-authenticate'],
      'Bearer error="invalid_token", error_description="The access token is invalid"')
    t.equal(body.reason, 'token_invalid', 'a future iat: sign in again')
  }
}

t.test('the fixed key (HS256): an iat ahead of now plus the tolerance is refused as invalid', async t => {
  const { url } = await listening(t, {})
  await check(t, url, claims => hs256(claims))
})

t.test('the key set: an iat ahead of now plus the tolerance is refused as invalid', async t => {
  const provider = await startKeySetServer(t)
  provider.publish([RSA.jwk])
  const { url, ready } = await listening(t, { AUTH_JWT_SECRET: undefined, AUTH_JWKS_URL: provider.url })
  await eventually(ready, 'the key set loads')
  await check(t, url, claims => withKid('RS256', RSA.kid, RSA.privateKey, claims))
})
