// Properties of the profile over whatever a caller can send: any Authorization (any field value,
// JWT-shaped strings with random headers, algorithms, claims and signatures, some validly signed), any
// tracing and other headers, every header the service reads at once (numbers past 2^53 included), any query
// string. Every answer has a documented status, never a 5xx, a well-formed body with a catalog code, an
// x-request-id and no secret; only a valid token of a seeded client gets a profile, always its own.
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import { seededClients } from '../../sandbox/seed.ts'
import { JWT_SECRET } from '../helpers/build-app.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import {
  assertWellFormed, fieldValue, headerName, holds, MIN_APP_VERSION, pastSafeInteger, propertyApp, stillServing
} from './responses.ts'

const { app } = await propertyApp(t)
const now = () => Math.floor(Date.now() / 1000)
const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

const alg = fc.oneof(fc.constantFrom('HS256', 'none', 'None', 'RS256', 'ES256', 'HS384', 'HS512', 'PS256', ''),
  fc.string({ maxLength: 10 }))
const jwtHeader = fc.record({
  alg,
  typ: fc.oneof(fc.constant('JWT'), fc.string({ maxLength: 8 })),
  kid: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('../../etc/passwd')),
  jku: fc.webUrl(),
  crit: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })
}, { requiredKeys: [] })

const seeded = fc.constantFrom(...seededClients.map(c => c.identity))
const namedClaims = fc.record({
  sub: fc.oneof(
    fc.uuid(), seeded.map(s => s.uid_client), seeded.map(s => s.uid_client.toLowerCase()), fc.string(), fc.integer()
  ),
  login: fc.oneof(fc.stringMatching(/^\d{1,15}$/), seeded.map(s => s.login), fc.string(), fc.constant(null)),
  vendor: fc.oneof(fc.constantFrom('kia', 'hyundai', ''), seeded.map(s => s.vendor), fc.string({ maxLength: 80 })),
  exp: fc.oneof(fc.integer({ min: -600, max: 3600 }).map(d => now() + d), fc.constant('never'), fc.double(),
    fc.constant(null)),
  nbf: fc.integer({ min: -600, max: 600 }).map(d => now() + d),
  iat: fc.integer({ min: -3600, max: 3600 }).map(d => now() + d),
  aud: fc.string({ maxLength: 20 })
}, { requiredKeys: [] })
/** The named claims, each maybe missing or of the wrong type, among random others. */
const claims = fc.tuple(
  namedClaims, fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
)
  .map(([named, extra]) => ({ ...extra, ...named }))

/** A JWS: random or garbage parts, signed with the test secret, another secret, or not at all. */
const jwt = fc.tuple(jwtHeader, claims,
  fc.constantFrom('secret', 'other', 'random', 'empty')).chain(([header, body, signer]) => {
  const input = `${b64(header)}.${b64(body)}`
  if (signer === 'secret') {
    return fc.constant(`${input}.${createHmac('sha256', JWT_SECRET).update(input).digest('base64url')}`)
  }
  if (signer === 'other') {
    const other = createHmac('sha256', 'another-secret-of-at-least-32-characters!')
    return fc.constant(`${input}.${other.update(input).digest('base64url')}`)
  }
  if (signer === 'empty') return fc.constant(`${input}.`)
  return fc.base64String({ maxLength: 120 }).map(sig => `${input}.${sig.replace(/=+$/, '')}`)
})

const jwtLike = fc.oneof(
  jwt,
  fc.tuple(fc.string(), fc.string(), fc.string()).map(parts => parts.map(b64).join('.')),
  fc.array(fc.base64String({ maxLength: 60 }), { minLength: 1, maxLength: 6 }).map(parts => parts.join('.')),
  fc.string({ maxLength: 5000 })
)

const scheme = fc.constantFrom('Bearer ', 'bearer ', 'BEARER ', 'Bearer  ', 'Bearer\t', 'Basic ', 'Token ', '',
  'Bearer')

const authorization = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(scheme, jwtLike).map(([s, token]) => `${s}${token}`) },
  { weight: 1, arbitrary: fieldValue(300) }
)

await holds(t, 'any Authorization header: a documented, well-formed answer without secrets',
  fc.asyncProperty(authorization, async header => {
    const res = await app.inject({ url: '/api/users/profile', headers: { authorization: header } })
    assertWellFormed(res, 'profile')
    if (res.statusCode === 200) {
      // Only a token that names a seeded client gets a profile, and it is that client's.
      const uid = (res.json() as { uid_client: string }).uid_client.toUpperCase()
      if (!seededClients.some(c => c.identity.uid_client.toUpperCase() === uid)) throw new Error(`a profile for ${uid}`)
      const claimsPart = header.split(' ')[1]!.split('.')[1]!
      const claimed = JSON.parse(Buffer.from(claimsPart, 'base64url').toString()) as { sub: string }
      if (claimed.sub.toUpperCase() !== uid) throw new Error(`token for ${claimed.sub} answered ${uid}`)
    }
    if (res.statusCode === 401 && typeof res.headers['www-authenticate'] !== 'string') {
      throw new Error('401 without www-authenticate')
    }
  }), 200)

await holds(t, 'validly signed tokens with random claims: 200 only for a seeded identity, 401 or 404 otherwise',
  fc.asyncProperty(claims, async body => {
    const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(body)}`
    const token = `${input}.${createHmac('sha256', JWT_SECRET).update(input).digest('base64url')}`
    const res = await app.inject({ url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } })
    assertWellFormed(res, 'profile')
    if (![200, 401, 404].includes(res.statusCode)) throw new Error(`status ${res.statusCode}: ${res.body}`)
  }), 120)

const ivanovToken = bearer(hs256())
const ivanovUid = ivanov.identity.uid_client.toUpperCase()
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/
// Headers the HTTP layer itself owns; a caller sending odd ones meets Node's parser, not the service.
const RESERVED = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'authorization', 'expect', 'upgrade', 'te', 'trailer'
])

const tracing = fc.record({
  'x-request-id': fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/), fieldValue(300)),
  traceparent: fc.oneof(fc.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/), fieldValue()),
  tracestate: fieldValue(),
  baggage: fc.oneof(fieldValue(), fc.string({ maxLength: 9000 }).map(v => encodeURIComponent(v))),
  'sentry-trace': fieldValue(),
  'x-trace-id': fieldValue()
}, { requiredKeys: [] })
const others = fc.dictionary(headerName.filter(name => !RESERVED.has(name)), fieldValue(), { maxKeys: 6 })

await holds(t, 'any tracing and other headers: the caller\'s own profile, an x-request-id that is safe to echo',
  fc.asyncProperty(tracing, others, async (trace, extra) => {
    const res = await app.inject({ url: '/api/users/profile', headers: { ...extra, ...trace, ...ivanovToken } })
    assertWellFormed(res, 'profile')
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${res.body}`)
    const { uid_client: uid } = res.json() as { uid_client: string }
    if (uid.toUpperCase() !== ivanovUid) throw new Error('another client\'s profile')
    const inbound = trace['x-request-id']
    const id = String(res.headers['x-request-id'])
    const wrong = inbound !== undefined && WELL_FORMED_ID.test(inbound)
      ? id !== inbound
      : !WELL_FORMED_ID.test(id) || id === inbound
    if (wrong) {
      throw new Error(`x-request-id ${JSON.stringify(inbound)} answered as ${JSON.stringify(id)}`)
    }
  }), 150)

const smallNumber = fc.nat({ max: 999 }).map(String)
const number = fc.oneof({ weight: 3, arbitrary: smallNumber }, { weight: 2, arbitrary: pastSafeInteger })
const appVersion = fc.oneof(
  // Well-formed versions around the minimum, and ones with a number past 2^53 in any part.
  fc.tuple(number, number, number, fc.constantFrom('', '-rc.1', '-9007199254740993', '+build.7'))
    .map(([major, minor, patch, rest]) => `${major}.${minor}.${patch}${rest}`),
  fc.constantFrom('99999999999999999.0.0', '9007199254740992.0.0', '1.99999999999999999.0', MIN_APP_VERSION),
  fieldValue(80)
)
const languageTag = fc.oneof(fc.constantFrom('ru', 'en', 'en-US', 'ru-RU', '*', 'de', 'a'), fieldValue(12))
const acceptLanguage = fc.oneof(
  fc.array(fc.tuple(languageTag, fc.oneof(fc.constant(''), fc.double({ min: -1, max: 2 }).map(q => `;q=${q}`),
    pastSafeInteger.map(q => `;q=${q}`), fieldValue(8).map(v => `;${v}`))), { maxLength: 12 })
    .map(entries => entries.map(([tag, q]) => `${tag}${q}`).join(',')),
  fc.nat({ max: 8000 }).map(n => 'a,'.repeat(n) + 'ru'),
  fieldValue(300)
)
const entityTag = fc.oneof(fc.string({ unit: fc.constantFrom(...'abcXYZ019-_'), maxLength: 30 }).map(v => `"${v}"`),
  pastSafeInteger.map(v => `"${v}"`))
const ifNoneMatch = fc.oneof(
  fc.constant('*'),
  fc.array(fc.tuple(fc.boolean(), entityTag).map(([weak, tag]) => (weak ? 'W/' : '') + tag), { maxLength: 5 })
    .map(tags => tags.join(', ')),
  fieldValue(200)
)
const address = fc.oneof(fc.ipV4(), fc.ipV6(), pastSafeInteger, fieldValue(40))
const forwardedFor = fc.array(address, { minLength: 1, maxLength: 5 }).map(list => list.join(', '))
const forwarded = fc.array(address, { minLength: 1, maxLength: 3 }).map(list => list.map(a => `for="${a}"`).join(', '))
/** Any of the values a header takes, a number past 2^53 among them. */
const anyValue = fc.oneof(fieldValue(200), pastSafeInteger)
const credentials = fc.oneof(
  fc.constant(ivanovToken.authorization),
  fc.constant(undefined),
  authorization,
  pastSafeInteger.map(n => `Bearer ${n}`)
)

/** Every header the service reads, each maybe absent; a generated value or one past 2^53. */
const readHeaders = fc.record({
  authorization: credentials,
  'x-app-version': fc.oneof(appVersion, anyValue),
  'accept-language': fc.oneof(acceptLanguage, anyValue),
  'if-none-match': fc.oneof(ifNoneMatch, anyValue),
  'x-request-id': fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/), anyValue),
  traceparent: fc.oneof(fc.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/), anyValue),
  tracestate: anyValue,
  baggage: fc.oneof(anyValue, pastSafeInteger.map(n => `key=${n}`)),
  'x-forwarded-for': fc.oneof(forwardedFor, anyValue),
  forwarded: fc.oneof(forwarded, anyValue)
}, { requiredKeys: [] })

await holds(t, 'every header the service reads, any value, GET and HEAD: a 4xx with a catalog code or ' +
  'the header ignored, never a 5xx', fc.asyncProperty(readHeaders, fc.constantFrom('GET', 'HEAD'),
  async (generated, method) => {
    const headers = Object.fromEntries(Object.entries(generated).filter(([, value]) => value !== undefined))
    const res = await app.inject({ method: method as 'GET' | 'HEAD', url: '/api/users/profile', headers })
    if (res.statusCode >= 500) throw new Error(`${method} answered ${res.statusCode}: ${res.body}`)
    if (method === 'GET') assertWellFormed(res, 'profile')
    else if (res.body !== '') throw new Error('a HEAD answer with a body')
  }), 300)

const queryChar = fc.oneof(
  fc.constantFrom(...'abcxyz019_-.~!$&\'()*+,;=:@/?%[]'),
  fc.string({ minLength: 1, maxLength: 2 }).map(v => encodeURIComponent(v))
)
const query = fc.oneof(
  fc.string({ unit: queryChar, maxLength: 300 }),
  // Parameters that try to name another client or reach into prototypes.
  fc.array(fc.tuple(
    fc.constantFrom('uid_client', 'sub', 'login', 'vendor', '__proto__', '__proto__[sub]',
      'constructor[prototype][sub]', 'uid_client[]'),
    fc.oneof(fc.uuid(), fc.string({ maxLength: 40 }))
  ), { maxLength: 5 }).map(pairs =>
    pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'))
)

await holds(t, 'any query string: the token alone names the client', fc.asyncProperty(query, async q => {
  const res = await app.inject({ url: `/api/users/profile?${q}`, headers: ivanovToken })
  assertWellFormed(res, 'profile')
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${res.body}`)
  const { uid_client: uid } = res.json() as { uid_client: string }
  if (uid.toUpperCase() !== ivanovUid) throw new Error('another client\'s profile')
}), 150)

await stillServing(t, app)
