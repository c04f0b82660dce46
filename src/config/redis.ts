// The shared Redis's variables: where it is, the prefix of the rate-limit keys, and how long anything waits for it.
import { Type } from 'typebox'
import { Millis } from './kinds.ts'

export const RedisConfigSchema = Type.Object({
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    description: 'Redis shared by every instance (redis:// or rediss://) for the rate-limit counters and, with ' +
      'PROFILE_CACHE_KEY, the last-known profiles; unset, each instance counts and keeps copies in memory.'
  })),
  REDIS_KEY_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    default: 'dealer-bff:rl:',
    description: 'Prefix of every rate-limit key in Redis (letters, digits, `:_.-`), so several services can share ' +
      'one Redis.'
  }),
  REDIS_TIMEOUT_MS: Type.Integer({
    minimum: 10,
    maximum: 5000,
    default: 100,
    description: 'Longest wait for one Redis command; past it the limit fails open and the request is served.'
  }),
  REDIS_CONNECT_TIMEOUT_MS: Millis(1000, 'Longest wait for a connection to Redis, at start-up too, before retrying ' +
    'in the background (requests never wait for it).')
})
