// The keys of the last-known store: a name per client identity that says nothing of it (HMAC-SHA256), and
// the AES-256-GCM seal of the bytes kept in Redis. PROFILE_CACHE_KEY rotates as a list: the first key
// names and encrypts new copies; every key still names and opens the copies written under it.
import {
  createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject
} from 'node:crypto'
import type { Caller } from '../../auth/caller.ts'

const VERSION = 1
const ID_BYTES = 4
const IV_BYTES = 12
const TAG_BYTES = 16
const HEADER_BYTES = 1 + ID_BYTES + IV_BYTES

export interface CacheKey {
  /**
   * Names identities (HMAC), derived apart from the encryption key so neither use weakens the other; a
   * KeyObject made once, since a Buffer key makes one per HMAC.
   */
  readonly naming: KeyObject
  readonly encryption: Buffer
  /** Carried in each sealed value, so the right key is tried first; says nothing of the key itself. */
  readonly id: Buffer
}

export function cacheKey (secret: Buffer): CacheKey {
  return {
    naming: createSecretKey(
      Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'dealer-bff last-known names', 32))),
    encryption: secret,
    id: createHash('sha256').update('dealer-bff last-known key id').update(secret).digest().subarray(0, ID_BYTES)
  }
}

/** A key of this process alone: copies kept in memory are unreadable by name to anyone else. */
export function processKey (): CacheKey {
  return cacheKey(randomBytes(32))
}

/** The HMAC-SHA256 hex of the identity the verified token names: the same caller, the same name. */
export function identityName (key: CacheKey, caller: Caller): string {
  // None of the three parts can hold a newline (UUID, digits, vendor code): the input is unambiguous.
  return createHmac('sha256', key.naming)
    .update(`${caller.uid_client}\n${caller.login}\n${caller.vendor}`)
    .digest('hex')
}

/** version | key id | IV | ciphertext | tag; the name is authenticated too, so a value moved to another name fails. */
export function seal (key: CacheKey, name: string, plain: Buffer | readonly Buffer[]): Buffer {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key.encryption, iv)
  cipher.setAAD(Buffer.from(name))
  const header = Buffer.allocUnsafe(HEADER_BYTES)
  header[0] = VERSION
  key.id.copy(header, 1)
  iv.copy(header, 1 + ID_BYTES)
  const parts = [header]
  for (const chunk of Buffer.isBuffer(plain) ? [plain] : plain) parts.push(cipher.update(chunk))
  parts.push(cipher.final(), cipher.getAuthTag())
  return Buffer.concat(parts)
}

/** The plain bytes, or undefined when no key opens them (unknown key, tampered, another name). */
export function open (keys: readonly CacheKey[], name: string, sealed: Buffer): Buffer | undefined {
  if (sealed.length < HEADER_BYTES + TAG_BYTES || sealed[0] !== VERSION) return undefined
  const id = sealed.subarray(1, 1 + ID_BYTES)
  const iv = sealed.subarray(1 + ID_BYTES, HEADER_BYTES)
  const body = sealed.subarray(HEADER_BYTES, sealed.length - TAG_BYTES)
  const tag = sealed.subarray(sealed.length - TAG_BYTES)
  for (const key of keys) {
    if (!key.id.equals(id)) continue
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.encryption, iv)
      decipher.setAAD(Buffer.from(name))
      decipher.setAuthTag(tag)
      return Buffer.concat([decipher.update(body), decipher.final()])
    } catch {}
  }
  return undefined
}
