// The profile's variables: its time budget and the client's last-known copies (their age, bound, key and prefix).
import { Type, type Static } from 'typebox'
import { Millis } from './kinds.ts'

export const ProfileConfigSchema = Type.Object({
  PROFILE_TIMEOUT_MS: Millis(8000, 'The whole profile request, all upstream calls included.'),
  PROFILE_STALE_IF_ERROR_S: Type.Integer({
    minimum: 0,
    maximum: 30 * 86_400,
    default: 86_400,
    description: 'How old (seconds) a client\'s last good profile may be and still be answered when fresh data ' +
      'cannot be had (passport failure other than not-found, a dealer section failing); 0 turns last-known profiles ' +
      'off.'
  }),
  PROFILE_FRESH_S: Type.Integer({
    minimum: 0,
    maximum: 86_400,
    default: 0,
    description: 'A last-known profile younger than this (seconds) is answered without calling the upstream (bursts ' +
      'at app start); 0 is off. Each client then sees changes up to this late.'
  }),
  PROFILE_CACHE_MAX_BYTES: Type.Integer({
    minimum: 65_536,
    maximum: 1024 * 1024 * 1024,
    default: 16 * 1024 * 1024,
    description: 'Bound of the in-process store of last-known profiles (compressed bytes; least recently used out ' +
      'first).'
  }),
  PROFILE_CACHE_KEY: Type.Optional(Type.String({
    pattern: '^\\s*[A-Za-z0-9+/=_-]{43,44}\\s*(,\\s*[A-Za-z0-9+/=_-]{43,44}\\s*)*$',
    description: '32 random bytes in base64 (a comma list rotates: the first encrypts and names, all decrypt); with ' +
      'REDIS_URL, last-known profiles live in Redis, AES-256-GCM encrypted, under HMAC key names.'
  })),
  PROFILE_CACHE_REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    default: 'dealer-bff:lk:',
    description: 'Prefix of every last-known profile key in Redis (letters, digits, `:_.-`).'
  })
})

type ProfileConfig = Static<typeof ProfileConfigSchema>

/** PROFILE_CACHE_KEY's keys as bytes, the encrypting one first. */
export function profileCacheKeys (value: string): Buffer[] {
  return value.split(',').map(entry => Buffer.from(entry.trim(), 'base64'))
}

/** Each PROFILE_CACHE_KEY entry must be 32 bytes, or AES-256 and the key names cannot use it. */
export function profileCacheKeyProblems (config: ProfileConfig): string[] {
  if (config.PROFILE_CACHE_KEY === undefined) return []
  const keys = profileCacheKeys(config.PROFILE_CACHE_KEY)
  if (keys.some(key => key.length !== 32)) {
    return ['PROFILE_CACHE_KEY must be a comma list of 32-byte keys in base64 (openssl rand -base64 32)']
  }
  if (new Set(keys.map(key => key.toString('hex'))).size !== keys.length) return ['PROFILE_CACHE_KEY lists a key twice']
  return []
}
