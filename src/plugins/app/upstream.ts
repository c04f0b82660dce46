// The upstream client as a decorator: one per app, its connections closed when the app closes.
import fp from 'fastify-plugin'
import type { Dispatcher } from 'undici'
import type { Config } from '../../config.ts'
import { createUpstreamClient, type UpstreamClient, type UpstreamObserver } from '../../upstream/client.ts'

declare module 'fastify' {
  interface FastifyInstance {
    upstream: UpstreamClient
  }
}

export interface UpstreamPluginOptions {
  config: Config
  /** Replaces the client's own Agent (tests pass a MockAgent); its owner closes it. */
  dispatcher?: Dispatcher
  /** Told of every exchange and breaker change (the metrics plugin's observer). */
  observer?: UpstreamObserver
  /** The circuit breakers' clock, epoch milliseconds (tests move it instead of sleeping). */
  breakerNow?: () => number
}

export default fp<UpstreamPluginOptions>(async function upstreamPlugin (
  fastify, { config, dispatcher, observer, breakerNow }
) {
  const client = createUpstreamClient({
    baseUrl: config.UPSTREAM_URL,
    keys: { passport: config.PASSPORT_API_KEY, dealer: config.DEALER_API_KEY },
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxBodyBytes: config.UPSTREAM_MAX_BODY_BYTES,
    connections: config.UPSTREAM_CONNECTIONS,
    breaker: {
      failureRatePercent: config.UPSTREAM_BREAKER_FAILURE_RATE,
      minCalls: config.UPSTREAM_BREAKER_MIN_CALLS,
      windowMs: config.UPSTREAM_BREAKER_WINDOW_MS,
      halfOpenAfterMs: config.UPSTREAM_BREAKER_HALF_OPEN_MS
    },
    ...(dispatcher === undefined ? {} : { dispatcher }),
    ...(observer === undefined ? {} : { observer }),
    ...(breakerNow === undefined ? {} : { breakerNow })
  })
  fastify.decorate('upstream', client)
  fastify.addHook('onClose', async () => { await client.close() })
}, { name: 'upstream' })
