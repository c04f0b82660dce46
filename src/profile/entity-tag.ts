// The profile's entity tag: an HMAC-SHA256 of the answer's bytes under a key each instance of a deployment derives
// alike, with HKDF from the two upstream keys, so a tag validates on any instance and, without the key, no guess of a
// profile's fields can be tested against a tag (a digest alone let a leaked tag give away a low-entropy balance).
import { createHmac, createSecretKey, hkdfSync } from 'node:crypto'
import type { Config } from '../config.ts'

/** Base64url characters of the HMAC kept in a tag: 132 bits, far past any chance of two profiles colliding. */
const ETAG_HASH_CHARS = 22
const KEY_BYTES = 32
/** HKDF's info: the key is this one's alone, whatever else the upstream keys are ever derived into. */
const KEY_INFO = 'dealer-bff profile etag'

export interface EntityTags {
  /** The keyed digest of a profile's bytes: the tag's source, and the memory store's unchanged-copy check. */
  digest (body: Buffer): Buffer
  /** The strong ETag of a digest, quotes included. */
  tag (digest: Buffer): string
}

/**
 * The tags of a deployment: the key from its upstream keys, which every instance holds (AUTH_JWT_SECRET is absent
 * with a key set); rotating either upstream key changes every tag once, and apps then get a 200 in place of a 304.
 */
export function entityTags ({ PASSPORT_API_KEY, DEALER_API_KEY }: Pick<Config, 'PASSPORT_API_KEY' | 'DEALER_API_KEY'>):
EntityTags {
  // A KeyObject, made once: handed a Buffer, createHmac tells it from a KeyObject by a check whose cost grows with the
  // stack's depth (7 % of the service's CPU at `a`, docs/performance.md).
  const key = createSecretKey(Buffer.from(hkdfSync('sha256', PASSPORT_API_KEY, DEALER_API_KEY, KEY_INFO, KEY_BYTES)))
  return {
    digest: body => createHmac('sha256', key).update(body).digest(),
    tag: digest => `"${digest.toString('base64url').slice(0, ETAG_HASH_CHARS)}"`
  }
}
