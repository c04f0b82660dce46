// The rate limits a route declares (plugins/external/rate-limit/ enforces them): personal routes per token `sub`, the
// console per address; the keys they count under, and the headers of a 429 for the route's documentation.
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { callerOf } from '../../../auth/caller.ts'
import { sharedRedisConfigured, type Config } from '../../../config.ts'

/** Every limit counts per minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000

/** The documented example of a 429's wait, in seconds. */
export const RATE_LIMITED_EXAMPLE = 42

/** The headers of a 429 on a route allowing `max` requests a minute, for its documentation. */
export function limitHeaders (max: number) {
  return {
    'retry-after': {
      type: 'string' as const,
      description: 'Seconds until the window ends and requests are counted afresh.',
      examples: [String(RATE_LIMITED_EXAMPLE)]
    },
    'x-ratelimit-limit': {
      type: 'string' as const, description: 'Requests allowed per window (one minute).', examples: [String(max)]
    },
    'x-ratelimit-remaining': { type: 'string' as const, description: 'Requests left in this window.', examples: ['0'] },
    'x-ratelimit-reset': {
      type: 'string' as const, description: 'Seconds until the window ends.', examples: [String(RATE_LIMITED_EXAMPLE)]
    }
  }
}

/** A client's id in a shared store's key: a digest (sha256, 128 bits), so Redis holds no personal data. */
export function clientDigest (sub: string): string {
  return createHash('sha256').update(sub).digest('base64url').slice(0, 22)
}

/**
 * A personal route's limit (routes/personal.ts): per client (token `sub`), after `fastify.authenticate` has set the
 * caller; each route counts on its own path (store.ts), so the profile's counter is the profile's alone.
 */
export function perClientRateLimit (
  config: Pick<Config, 'RATE_LIMIT_PROFILE_PER_MINUTE' | 'REDIS_URL' | 'REDIS_SENTINELS'>
) {
  // In memory the id itself is the key (no hashing on the hot path); in Redis, its digest.
  const keyGenerator = !sharedRedisConfigured(config)
    ? (request: FastifyRequest) => `client:${callerOf(request).uid_client}`
    : (request: FastifyRequest) => `client:${clientDigest(callerOf(request).uid_client)}`
  return {
    rateLimit: {
      max: config.RATE_LIMIT_PROFILE_PER_MINUTE,
      timeWindow: RATE_LIMIT_WINDOW_MS,
      hook: 'preHandler' as const,
      keyGenerator
    }
  }
}

/** The console's route config: per client address (the real one behind a trusted balancer, TRUST_PROXY). */
export function consoleRateLimit (config: Pick<Config, 'RATE_LIMIT_CONSOLE_PER_MINUTE'>) {
  return {
    rateLimit: { max: config.RATE_LIMIT_CONSOLE_PER_MINUTE, timeWindow: RATE_LIMIT_WINDOW_MS }
  }
}
