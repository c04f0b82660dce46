// Rate limits per minute, in memory or in the Redis every instance shares (while it fails, each instance counts on
// its own): the profile per token `sub`, the console per address, and refused credentials per address. Credentials
// are verified first and only refused ones get 429, so no one can lock out honest callers sharing an address; nobody
// guesses a signature or a key.
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { sharedRedisConfigured, type Config } from '../../config.ts'
import { RateLimitedError } from '../../errors.ts'
import { callerOf } from '../app/auth.ts'
import { metricsOf } from '../app/metrics.ts'
import { sharedStore } from './rate-limit-store.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a refused credential against the address: `refusal` (the 401) within the limit, a 429 past it. */
    refuseCredentials: (request: FastifyRequest, reply: FastifyReply, refusal: Error) => Promise<Error>
  }
}

const WINDOW_MS = 60_000

/** The documented example of a 429's wait, in seconds. */
export const RATE_LIMITED_EXAMPLE = 42

/** The headers of a 429 on a route allowing `max` requests a minute, for its documentation. */
export function limitHeaders (max: number) {
  return {
    'retry-after': {
      type: 'string' as const,
      description: 'Seconds until the window ends and requests are counted afresh.',
      examples: ['42']
    },
    'x-ratelimit-limit': {
      type: 'string' as const, description: 'Requests allowed per window (one minute).', examples: [String(max)]
    },
    'x-ratelimit-remaining': { type: 'string' as const, description: 'Requests left in this window.', examples: ['0'] },
    'x-ratelimit-reset': { type: 'string' as const, description: 'Seconds until the window ends.', examples: ['42'] }
  }
}

/** A client's id in a shared store's key: a digest (sha256, 128 bits), so Redis holds no personal data. */
export function clientDigest (sub: string): string {
  return createHash('sha256').update(sub).digest('base64url').slice(0, 22)
}

/** The profile's route config: per client (token `sub`), after `fastify.authenticate` has set the caller. */
export function profileRateLimit (
  config: Pick<Config, 'RATE_LIMIT_PROFILE_PER_MINUTE' | 'REDIS_URL' | 'REDIS_SENTINELS'>
) {
  // In memory the id itself is the key (no hashing on the hot path); in Redis, its digest.
  const keyGenerator = !sharedRedisConfigured(config)
    ? (request: FastifyRequest) => `client:${callerOf(request).uid_client}`
    : (request: FastifyRequest) => `client:${clientDigest(callerOf(request).uid_client)}`
  return {
    rateLimit: {
      max: config.RATE_LIMIT_PROFILE_PER_MINUTE,
      timeWindow: WINDOW_MS,
      hook: 'preHandler' as const,
      keyGenerator
    }
  }
}

/** The console's route config: per client address (the real one behind a trusted balancer, TRUST_PROXY). */
export function consoleRateLimit (config: Pick<Config, 'RATE_LIMIT_CONSOLE_PER_MINUTE'>) {
  return {
    rateLimit: { max: config.RATE_LIMIT_CONSOLE_PER_MINUTE, timeWindow: WINDOW_MS }
  }
}

/** Requests refused on an instance's own count while the shared Redis could not count (a metric when on). */
function localRefusals (fastify: FastifyInstance): () => void {
  const metrics = metricsOf(fastify)
  if (metrics === null) return () => {}
  const counter = new metrics.prom.Counter({
    name: 'bff_rate_limit_local_total',
    help: 'Requests refused (429) on this instance\'s own count, while the shared Redis could not count.',
    registers: [metrics.registry]
  })
  return () => { counter.inc() }
}

export default fp<{ config: Config }>(async function rateLimits (fastify, { config }) {
  await fastify.register(rateLimit, {
    global: false,
    // Shared by every instance when Redis is configured; while it fails, each instance counts on its own.
    ...(fastify.redis === null
      ? {}
      : { store: sharedStore(fastify.redis, config.REDIS_KEY_PREFIX, localRefusals(fastify)), skipOnError: true }),
    errorResponseBuilder: (request, context) => {
      request.log.warn({ limit: request.routeOptions.url, max: context.max }, 'rate limit reached')
      return new RateLimitedError(Math.ceil(context.ttl / 1000))
    }
  })

  // The default key: the client address, an IPv6 one by its /64 (one subscriber's whole network).
  const authFailures = fastify.createRateLimit({
    max: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, timeWindow: WINDOW_MS
  })

  fastify.decorate('refuseCredentials', async function refuseCredentials (
    request: FastifyRequest, reply: FastifyReply, refusal: Error
  ): Promise<Error> {
    const state = await authFailures(request)
    if (state.isAllowed || !state.isExceeded) return refusal
    request.log.warn({ max: state.max }, 'too many refused credentials from this address')
    // The 401's challenge would invite a retry the 429 asks to hold back.
    reply.removeHeader('www-authenticate')
    reply.header('x-ratelimit-limit', state.max)
    reply.header('x-ratelimit-remaining', 0)
    reply.header('x-ratelimit-reset', state.ttlInSeconds)
    reply.header('retry-after', state.ttlInSeconds)
    return new RateLimitedError(state.ttlInSeconds)
  })
}, { name: 'rate-limit', dependencies: ['redis'] })
