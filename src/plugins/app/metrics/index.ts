// Prometheus metrics at GET /metrics, for operators only: the registry and the scrape route. One Registry per
// app (tests build many apps in one process; the global registry would make their metrics clash). Each owner puts
// its own metrics on it (src/prom.ts): the plugin owning a source calls the owner's `<owner>Metrics` with
// `metricsOf(fastify)` (src/metrics/registry.ts); so this plugin comes before them. Every label value comes from a
// small known set (route patterns, operation names, outcomes, sections): never a user id, login, token or key.
// Off unless METRICS_API_KEY is set; a scrape then needs `Authorization: Bearer <METRICS_API_KEY>`.
import fp from 'fastify-plugin'
import { consoleKeyCheck } from '../../../auth/key-check.ts'
import type { Config } from '../../../config.ts'
import { UnauthorizedError } from '../../../errors.ts'
import { METRICS_PATH } from './path.ts'
import { httpMetrics } from '../../../metrics/http.ts'
import type { Metrics } from '../../../metrics/registry.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when metrics are off (METRICS_API_KEY unset). */
    metrics: Metrics | null
  }
}

export default fp<{ config: Pick<Config, 'METRICS_API_KEY'> }>(async function metricsPlugin (fastify, { config }) {
  if (config.METRICS_API_KEY === undefined) {
    fastify.decorate('metrics', null)
    return
  }
  const prom = await import('prom-client')
  const registry = new prom.Registry()
  prom.collectDefaultMetrics({ register: registry })
  const http = httpMetrics(prom, registry)
  fastify.decorate('metrics', { prom, registry, shed: http.shed })
  fastify.addHook('onResponse', function recordResponse (request, reply, done) {
    http.recordResponse(request, reply)
    done()
  })

  const keyMatches = consoleKeyCheck(config.METRICS_API_KEY)
  fastify.get(METRICS_PATH, {
    // An operator endpoint: not part of the API the mobile app reads about.
    schema: { hide: true },
    // Answered under load shedding too: an overloaded instance is when its operator most needs to see it.
    config: { shed: false, private: true },
    logLevel: 'warn'
  }, async function scrape (request, reply) {
    const header = request.headers.authorization
    const presented = typeof header === 'string' && header.slice(0, 7).toLowerCase() === 'bearer '
      ? header.slice(7).trim()
      : undefined
    if (!keyMatches(presented)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"')
      const refusal = new UnauthorizedError('Metrics need Authorization: Bearer <METRICS_API_KEY>')
      const thrown = await fastify.refuseCredentials(request, reply, refusal)
      // At warn: the route logs at warn only, and a guess at the key is what an operator must see. Past the limit
      // (a 429), the refused-credential summary counts it instead.
      if (thrown === refusal) request.log.warn({ credential: 'metrics key' }, 'refused metrics scrape')
      throw thrown
    }
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}, { name: 'metrics' })
