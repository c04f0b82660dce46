// Signs callers' test tokens with node:crypto alone, so a test can build exactly the token it needs,
// broken ones included (alg none, a forged header, a key of the wrong kind), without trusting the
// library under test to make them.
import { constants, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { IVANOV } from '../../schemas/fixtures.ts'
import type { PassportParams } from '../../schemas/passport.ts'
import { JWT_SECRET } from './build-app.ts'

export type Claims = Record<string, unknown>

export interface KeyPair { privateKey: KeyObject, publicPem: string }

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')
const now = () => Math.floor(Date.now() / 1000)

/** The claims of a valid token for the IVANOV fixture, valid for ten minutes. */
export function claimsFor (
  client: PassportParams = IVANOV, extra: Claims = {}
): Claims {
  return { sub: client.uid_client, login: client.login, vendor: client.vendor, iat: now(), exp: now() + 600, ...extra }
}

/** `header.payload` of a JWS with the given header fields. */
function signingInput (header: Claims, claims: Claims): string {
  return `${base64url(JSON.stringify({ typ: 'JWT', ...header }))}.${base64url(JSON.stringify(claims))}`
}

/** HS256 with a shared secret (the test secret unless told otherwise); `header` adds fields such as a kid. */
export function hs256 (
  claims: Claims = claimsFor(), secret: string | Buffer = JWT_SECRET, header: Claims = {}
): string {
  const input = signingInput({ alg: 'HS256', ...header }, claims)
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

/** RS256 or ES256 with a private key (ES256 in the JOSE r||s form, not DER). */
export function asymmetric (alg: 'RS256' | 'ES256', privateKey: KeyObject, claims: Claims = claimsFor()): string {
  const input = signingInput({ alg }, claims)
  const signature = sign('sha256', Buffer.from(input),
    alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey)
  return `${input}.${signature.toString('base64url')}`
}

/** An unsigned token (`alg: none`, empty signature part). */
export function unsigned (claims: Claims = claimsFor(), header: Claims = {}): string {
  return `${signingInput({ alg: 'none', ...header }, claims)}.`
}

/** A token as an identity provider signs it: under a key id, with RS256, PS256, ES256 or EdDSA. */
export function withKid (alg: 'RS256' | 'PS256' | 'ES256' | 'EdDSA', kid: string, privateKey: KeyObject,
  claims: Claims = claimsFor()): string {
  const input = Buffer.from(signingInput({ alg, kid }, claims))
  const signature = alg === 'EdDSA'
    ? sign(null, input, privateKey)
    : sign('sha256', input, alg === 'ES256'
      ? { key: privateKey, dsaEncoding: 'ieee-p1363' }
      : alg === 'PS256' ? { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : privateKey)
  return `${input.toString()}.${signature.toString('base64url')}`
}

/** The seconds-since-epoch of `offset` seconds from now, for `exp`/`nbf`. */
export function inSeconds (offset: number): number {
  return now() + offset
}

// Generating an RSA key costs tens of milliseconds: one pair per kind per test process.
const pairs = new Map<string, KeyPair>()

export function keyPair (kind: 'rsa' | 'ec'): KeyPair {
  let pair = pairs.get(kind)
  if (pair === undefined) {
    const { privateKey, publicKey } = kind === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ec', { namedCurve: 'P-256' })
    pair = { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
    pairs.set(kind, pair)
  }
  return pair
}

/** The `authorization` header for a token. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
