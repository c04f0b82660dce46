// The upstream client as a decorator: one per app, its connections closed when the app closes. With metrics on,
// the client reports its exchanges to the upstream metrics and its breakers are read at each scrape.
import fp from 'fastify-plugin'
import type { Dispatcher } from 'undici'
import type { Config } from '../../config.ts'
import { breakerMetrics } from '../../upstream/breaker.ts'
import { createUpstreamClient, type UpstreamClient } from '../../upstream/client.ts'
import { upstreamMetrics } from '../../upstream/metrics.ts'
import { metricsOf } from '../../metrics/registry.ts'

declare module 'fastify' {
  interface FastifyInstance {
    upstream: UpstreamClient
  }
}

interface UpstreamPluginOptions {
  config: Config
  /** Replaces the client's own Agent (tests pass a MockAgent); its owner closes it. */
  dispatcher?: Dispatcher
  /** The circuit breakers' clock, epoch milliseconds (tests move it instead of sleeping). */
  breakerNow?: () => number
}

export default fp<UpstreamPluginOptions>(async function upstreamPlugin (fastify, { config, dispatcher, breakerNow }) {
  const metrics = metricsOf(fastify)
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
    ...(metrics === null ? {} : { observer: upstreamMetrics(metrics.prom, metrics.registry) }),
    ...(breakerNow === undefined ? {} : { breakerNow })
  })
  fastify.decorate('upstream', client)
  if (metrics !== null) breakerMetrics(metrics.prom, metrics.registry, client.breakerStates)
  fastify.addHook('onClose', async () => { await client.close() })
}, { name: 'upstream', dependencies: ['metrics'] })
