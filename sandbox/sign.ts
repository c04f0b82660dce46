// Mints caller tokens: HS256 with a secret, or RS256/PS256/ES256/EdDSA with a private JWK under its `kid`
// (as an identity provider signs for AUTH_JWKS_URL). For the sandbox (`npm run dev`), for trying a
// service (`npm run token`) and for tests. The service itself only verifies tokens
// (src/plugins/app/auth.ts); the claims are checked here against the same CallerClaims schema it verifies with,
// so a token minted here is one the service accepts.
import { constants, createHmac, createPrivateKey, sign, type JsonWebKey, type KeyObject } from 'node:crypto'
import { Type, type Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { ConfigSchema } from '../src/config.ts'
import { CallerClaims } from '../src/auth/caller.ts'

/** Who the token names: `sub` is the client's uid_client. */
export const TokenSubject = Type.Pick(CallerClaims, ['sub', 'login', 'vendor'])
export type TokenSubject = Static<typeof TokenSubject>

/** The service refuses a shorter AUTH_JWT_SECRET, so a token signed with one could never be verified. */
export const MIN_SECRET_LENGTH: number =
  (ConfigSchema.properties.AUTH_JWT_SECRET as { minLength?: number }).minLength ?? 32
/** A token for trying things out, not a session: longer lifetimes are refused. */
export const MAX_TTL_SECONDS = 30 * 24 * 3600

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** Readable reasons, per claim, instead of the schema's pattern text. */
const CLAIM_RULES: Record<keyof TokenSubject, string> = {
  sub: "must be a UUID (the client's uid_client)",
  login: 'must be digits only (the client\'s login, e.g. 79161234567)',
  vendor: 'must be a vendor code: 1 to 64 letters, digits, "_", "." or "-" (e.g. kia)'
}

const subjectCheck = Compile(TokenSubject)

/** One problem per bad claim, as `{ claim, message }`; empty when the subject is valid. */
export function subjectProblems (
  subject: Record<keyof TokenSubject, unknown>
): Array<{ claim: keyof TokenSubject, message: string }> {
  const bad = new Set<keyof TokenSubject>()
  for (const error of subjectCheck.Errors(subject)) {
    const claim = error.instancePath.slice(1)
    // A missing claim is reported at '' with params.requiredProperties.
    const missing = (error.params as { requiredProperties?: string[] }).requiredProperties ?? []
    for (const name of claim === '' ? missing : [claim]) {
      if (name in CLAIM_RULES) bad.add(name as keyof TokenSubject)
    }
  }
  return [...bad].map(claim => ({ claim, message: CLAIM_RULES[claim] }))
}

/**
 * A lifetime as `90`, `90s`, `15m`, `1h` or `7d`, in seconds; at least one second and at most
 * MAX_TTL_SECONDS. Throws a RangeError that says what is accepted.
 */
export function parseTtl (text: string): number {
  const match = /^(\d{1,7})([smhd]?)$/.exec(text.trim())
  const seconds = match === null ? NaN : Number(match[1]) * UNIT_SECONDS[match[2] || 's']!
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > MAX_TTL_SECONDS) {
    throw new RangeError(`must be a duration such as 90s, 15m, 1h or 7d, from 1s to ${MAX_TTL_SECONDS / 86_400}d`)
  }
  return seconds
}

export interface SignOptions {
  /** Lifetime in seconds (default one hour). */
  ttlSeconds?: number
  /** Milliseconds since the epoch the token is issued at (tests). */
  now?: number
  /** `iss`, for a service configured with AUTH_JWT_ISSUER. */
  issuer?: string
  /** `aud`, for a service configured with AUTH_JWT_AUDIENCE. */
  audience?: string
}

const base64url = (value: string) => Buffer.from(value).toString('base64url')

/** A private JSON Web Key (RSA of 2048 bits or more, EC P-256 or OKP Ed25519) and the kid of its public half. */
export type PrivateJwk = JsonWebKey & { kid: string }

type JwkAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA'

interface JwkSigner { alg: JwkAlgorithm, kid: string, sign (input: Buffer): Buffer }

/** The algorithm of a private key: its own `alg` when it names one its type admits, else the type's default. */
function algorithmOf (jwk: PrivateJwk, key: KeyObject): JwkAlgorithm {
  const type = key.asymmetricKeyType
  const details = key.asymmetricKeyDetails
  let admitted: JwkAlgorithm[]
  if (type === 'rsa' && (details?.modulusLength ?? 0) >= 2048) admitted = ['RS256', 'PS256']
  else if (type === 'ec' && details?.namedCurve === 'prime256v1') admitted = ['ES256']
  else if (type === 'ed25519') admitted = ['EdDSA']
  else throw new TypeError('the JWK must be an RSA key of 2048 bits or more, an EC P-256 key or an Ed25519 key')
  if (jwk.alg === undefined) return admitted[0]!
  const alg = jwk.alg === 'Ed25519' ? 'EdDSA' : jwk.alg
  if (!admitted.includes(alg as JwkAlgorithm)) {
    throw new TypeError(`the JWK's alg must be one of ${admitted.join(', ')} for its key type`)
  }
  return alg as JwkAlgorithm
}

/** Signs with a private JWK; a TypeError says what is wrong with it, never any part of the key. */
export function jwkSigner (jwk: PrivateJwk): JwkSigner {
  if (typeof jwk !== 'object' || jwk === null) throw new TypeError('the JWK must be a JSON object')
  if (typeof jwk.kid !== 'string' || jwk.kid.length === 0) {
    throw new TypeError('the JWK needs a kid: the service finds its public key by it')
  }
  if (jwk.d === undefined) throw new TypeError('the JWK is a public key; signing needs the private one (with "d")')
  let key: KeyObject
  try {
    key = createPrivateKey({ key: jwk, format: 'jwk' })
  } catch {
    throw new TypeError('the JWK is not a readable private key')
  }
  const alg = algorithmOf(jwk, key)
  const options = alg === 'ES256'
    ? { key, dsaEncoding: 'ieee-p1363' as const }
    : alg === 'PS256' ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : key
  return { alg, kid: jwk.kid, sign: input => sign(alg === 'EdDSA' ? null : 'sha256', input, options) }
}

/**
 * A JWT with claims sub, login, vendor, iat, exp (and iss, aud when given): HS256 with a secret, or with a
 * private JWK under its kid. Throws a TypeError naming bad input, never the secret or key.
 */
export function signToken (
  subject: TokenSubject,
  key: string | PrivateJwk,
  { ttlSeconds = 3600, now = Date.now(), issuer, audience }: SignOptions = {}
): string {
  const problems = subjectProblems(subject)
  if (problems.length > 0) throw new TypeError(problems.map(p => `${p.claim} ${p.message}`).join('; '))
  const signer = typeof key === 'string' ? undefined : jwkSigner(key)
  if (signer === undefined && (typeof key !== 'string' || key.length < MIN_SECRET_LENGTH)) {
    throw new TypeError(`the secret must be at least ${MIN_SECRET_LENGTH} characters`)
  }
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_TTL_SECONDS}`)
  }
  const iat = Math.floor(now / 1000)
  const claims = {
    sub: subject.sub,
    login: subject.login,
    vendor: subject.vendor,
    ...(issuer === undefined ? {} : { iss: issuer }),
    ...(audience === undefined ? {} : { aud: audience }),
    iat,
    exp: iat + ttlSeconds
  }
  const header = signer === undefined ? { alg: 'HS256', typ: 'JWT' } : { alg: signer.alg, typ: 'JWT', kid: signer.kid }
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`
  const signature = signer === undefined
    ? createHmac('sha256', key as string).update(input).digest()
    : signer.sign(Buffer.from(input))
  return `${input}.${signature.toString('base64url')}`
}
