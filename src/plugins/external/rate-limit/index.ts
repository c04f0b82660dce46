// Rate limits per minute, in memory or in the Redis every instance shares (while it fails, each instance counts on
// its own): the profile per token `sub`, the console per address, and refused credentials per address. Credentials
// are verified first and only those that fail verification count and get 429 (a token whose signature verified is
// always a 401), so no one can lock out honest callers sharing an address; nobody guesses a signature or a key.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../../config.ts'
import { RateLimitedError, reasonOf, withReason } from '../../../errors.ts'
import { localStore, sharedStore } from './store.ts'
import { RATE_LIMIT_WINDOW_MS } from './route-limits.ts'
import { summarised } from '../../app/refusals/summary.ts'
import { metricsOf } from '../../../metrics/registry.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Counts a credential that failed verification against the address: `refusal` (the 401) within the limit, a 429
     * past it (with the refusal's token reason, so that an app knows it will never be served with that token).
     */
    refuseCredentials: (request: FastifyRequest, reply: FastifyReply, refusal: Error) => Promise<Error>
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
    // Shared by every instance when Redis is configured; while it fails, each instance counts on its own. Either
    // way one counter per path, which GET and HEAD share.
    ...(fastify.redis === null
      ? { store: localStore() }
      : { store: sharedStore(fastify.redis, config.REDIS_KEY_PREFIX, localRefusals(fastify)), skipOnError: true }),
    // Past the limit a client sends about a thousand a second: one summary line per address a minute, not one each.
    errorResponseBuilder: (request, context) => {
      fastify.refusals.count(request, { message: 'rate limit reached', fields: { max: context.max } })
      return summarised(new RateLimitedError(Math.ceil(context.ttl / 1000)))
    }
  })

  // The default key: the client address, an IPv6 one by its /64 (one subscriber's whole network).
  const authFailures = fastify.createRateLimit({
    max: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE, timeWindow: RATE_LIMIT_WINDOW_MS
  })

  fastify.decorate('refuseCredentials', async function refuseCredentials (
    request: FastifyRequest, reply: FastifyReply, refusal: Error
  ): Promise<Error> {
    const state = await authFailures(request)
    if (state.isAllowed || !state.isExceeded) return refusal
    fastify.refusals.count(request,
      { message: 'too many refused credentials from this address', fields: { max: state.max } })
    // The 401's challenge would invite a retry the 429 asks to hold back.
    reply.removeHeader('www-authenticate')
    reply.header('x-ratelimit-limit', state.max)
    reply.header('x-ratelimit-remaining', 0)
    reply.header('x-ratelimit-reset', state.ttlInSeconds)
    reply.header('retry-after', state.ttlInSeconds)
    const limited = summarised(new RateLimitedError(state.ttlInSeconds))
    const reason = reasonOf(refusal)
    return reason === undefined ? limited : withReason(limited, reason)
  })
}, { name: 'rate-limit', dependencies: ['metrics', 'redis', 'refusals'] })
