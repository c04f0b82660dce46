// The fixed key callers' tokens are verified with (AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY), and the one algorithm it
// admits: the algorithm follows the configured key, never the token.
import { createPublicKey } from 'node:crypto'
import type { Config } from '../config.ts'
import type { KeyAlgorithm } from './jwk.ts'

export type JwtAlgorithm = 'HS256' | KeyAlgorithm

/** The verification key and the one algorithm it admits, from the configuration. Throws on an unusable key. */
export function verificationKey (
  config: Pick<Config, 'AUTH_JWT_SECRET' | 'AUTH_JWT_PUBLIC_KEY'>
): { key: string, algorithm: JwtAlgorithm } {
  if (config.AUTH_JWT_SECRET !== undefined) return { key: config.AUTH_JWT_SECRET, algorithm: 'HS256' }
  if (config.AUTH_JWT_PUBLIC_KEY === undefined) throw new Error('AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY is required')
  let key
  try {
    key = createPublicKey(config.AUTH_JWT_PUBLIC_KEY)
  } catch {
    throw new Error('AUTH_JWT_PUBLIC_KEY is not a readable public key in PEM')
  }
  const details = key.asymmetricKeyDetails
  if (key.asymmetricKeyType === 'rsa' && (details?.modulusLength ?? 0) >= 2048) {
    return { key: config.AUTH_JWT_PUBLIC_KEY, algorithm: 'RS256' }
  }
  if (key.asymmetricKeyType === 'ec' && details?.namedCurve === 'prime256v1') {
    return { key: config.AUTH_JWT_PUBLIC_KEY, algorithm: 'ES256' }
  }
  throw new Error('AUTH_JWT_PUBLIC_KEY must be an RSA (2048 bits or more, RS256) or P-256 EC (ES256) public key')
}
