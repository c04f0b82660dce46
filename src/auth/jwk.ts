// One member of an identity provider's key set (RFC 7517) -> a public key and the asymmetric algorithms
// it admits. The key's type decides the algorithms, never the token: RSA -> RS256/PS256, EC P-256 ->
// ES256, OKP Ed25519 -> EdDSA. Keys for encryption, symmetric keys and private keys are never used.
import { KeyObject } from 'node:crypto'
import type { JWK } from 'jose'

export type KeyAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA'

/** Every algorithm a key of the set can admit: anything else (none, HS*, RS384...) is refused up front. */
export const KEY_SET_ALGORITHMS: readonly KeyAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA']

/** RSA keys shorter than this are refused, as for AUTH_JWT_PUBLIC_KEY. */
const MIN_RSA_BITS = 2048

export interface PublicKeyOfSet {
  kid: string
  algorithms: KeyAlgorithm[]
  /** SubjectPublicKeyInfo in PEM: what fast-jwt verifies with. */
  pem: string
  /** RFC 7638 thumbprint: the same kid with other key material is another key. */
  thumbprint: string
}

/** A member of the set this service does not use and need not report (an encryption key, say). */
export class IgnoredKey extends Error {}
/** A member meant for signatures that cannot be used: reported, then skipped. */
class MalformedKey extends Error {}

type Member = Record<string, unknown>

/** The algorithms of a signing key's type and curve, narrowed to the member's own `alg` when it names one. */
function algorithmsOf (member: Member): KeyAlgorithm[] {
  const { kty, crv, alg } = member
  let admitted: KeyAlgorithm[]
  if (kty === 'RSA') admitted = ['RS256', 'PS256']
  else if (kty === 'EC' && crv === 'P-256') admitted = ['ES256']
  else if (kty === 'OKP' && crv === 'Ed25519') admitted = ['EdDSA']
  else throw new IgnoredKey(`key type ${String(kty)}${crv === undefined ? '' : ` ${String(crv)}`} is not used`)
  if (alg === undefined) return admitted
  // RFC 8037 names the EdDSA algorithm; newer sets may write the curve's name (RFC 9864).
  const named = alg === 'Ed25519' ? 'EdDSA' : alg
  if (typeof named !== 'string' || !admitted.includes(named as KeyAlgorithm)) {
    throw new IgnoredKey(`algorithm ${String(alg)} is not used`)
  }
  return [named as KeyAlgorithm]
}

/** The usable public key of one member; throws IgnoredKey or MalformedKey. */
export async function publicKeyOfSet (member: unknown): Promise<PublicKeyOfSet> {
  if (typeof member !== 'object' || member === null || Array.isArray(member)) {
    throw new MalformedKey('a member is not an object')
  }
  const jwk = member as Member
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new IgnoredKey('not a signature key (use)')
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) {
    throw new IgnoredKey('not a verification key (key_ops)')
  }
  if (jwk.kty === 'oct') throw new IgnoredKey('symmetric keys are never used')
  const algorithms = algorithmsOf(jwk)
  if (typeof jwk.kid !== 'string' || jwk.kid.length === 0) throw new MalformedKey('a signing key has no kid')
  // A private member is the provider's mistake: its secret part is never read, and the key is not used.
  if (jwk.d !== undefined) throw new MalformedKey('a signing key carries private material')
  // Imported only with a key set: a service on a fixed secret or key never loads jose.
  const { calculateJwkThumbprint, importJWK } = await import('jose')
  let key: KeyObject
  try {
    const imported = await importJWK(jwk as JWK, jwk.kty === 'OKP' ? 'Ed25519' : algorithms[0])
    if (imported instanceof Uint8Array) throw new TypeError('a secret, not a key')
    key = KeyObject.from(imported)
  } catch {
    throw new MalformedKey('a signing key cannot be imported')
  }
  if (key.type !== 'public') throw new MalformedKey('a signing key is not a public key')
  if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
    throw new MalformedKey(`an RSA key is shorter than ${MIN_RSA_BITS} bits`)
  }
  return {
    kid: jwk.kid,
    algorithms,
    pem: key.export({ type: 'spki', format: 'pem' }).toString(),
    thumbprint: await calculateJwkThumbprint(jwk as JWK)
  }
}
