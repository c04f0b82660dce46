// Liveness and readiness for the orchestrator.
import { Type } from 'typebox'
import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { KEY_SET_NOT_LOADED, ServiceUnavailableError } from '../../errors.ts'
import { errorResponse } from '../../plugins/app/errors/error-response.ts'
import { REDIS_STATES } from '../../shared-redis.ts'
import type { RouteModule } from '../route-module.ts'
import { documented, jsonResponse } from '../standard-responses.ts'

const Live = Type.Object({ status: Type.Literal('ok') }, { $id: 'HealthLive', description: 'The process is up.' })
const Ready = Type.Object({
  status: Type.Literal('ready'),
  redis: Type.Optional(Type.Enum(REDIS_STATES, {
    description: 'The shared Redis of the rate limits and last-known profiles, when one is configured: `up`, ' +
      '`down` (each instance limits on its own, copies are misses), or `connecting` (not reached yet). ' +
      'Informative only: readiness never fails on it.'
  }))
}, { $id: 'HealthReady', description: 'Configured and able to serve.' })

/** The probes' paths (the load balancer's and the orchestrator's). */
export const LIVE_PATH = '/health/live'
export const READY_PATH = '/health/ready'

const SHUTTING_DOWN = 'The service is shutting down'

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  // Set when shutdown starts, so the balancer stops sending traffic while in-flight requests finish.
  // Registered unencapsulated (fp) so this hook runs among the first preClose hooks.
  let closing = false
  fastify.addHook('preClose', async () => { closing = true })
  const redis = fastify.hasDecorator('redis') ? fastify.redis : null
  const keySet = fastify.hasDecorator('keySet') ? fastify.keySet : null

  fastify.get(LIVE_PATH, {
    schema: documented({
      operationId: 'getLiveness',
      tags: ['health'],
      summary: 'Liveness: the process is up',
      security: [],
      response: { 200: jsonResponse(Live) }
    }),
    logLevel: 'warn'
  }, async () => ({ status: 'ok' as const }))

  fastify.get(READY_PATH, {
    schema: documented({
      operationId: 'getReadiness',
      tags: ['health'],
      summary: 'Readiness: configured and able to serve',
      security: [],
      response: {
        200: jsonResponse(Ready),
        503: errorResponse(
          'Shutting down, or (with AUTH_JWKS_URL) no key set loaded yet to verify callers with: the balancer should ' +
          'send no traffic.',
          [new ServiceUnavailableError(SHUTTING_DOWN)])
      }
    }),
    logLevel: 'warn'
  }, async () => {
    if (closing) throw new ServiceUnavailableError(SHUTTING_DOWN)
    // Until then every caller would be refused; the key set keeps retrying with backoff meanwhile.
    if (keySet !== null && !keySet.loaded) throw new ServiceUnavailableError(KEY_SET_NOT_LOADED)
    // Reported, never a reason to be unready: Redis is best-effort (limits fail open without it), and a
    // Redis outage failing every instance's readiness at once would take the whole service out.
    return redis === null ? { status: 'ready' as const } : { status: 'ready' as const, redis: redis.state }
  })
}

/** The probes in the route registry (registry.ts). */
export default {
  plugin: fp(health, { name: 'health' }),
  schemas: [Live, Ready],
  errorCodes: { [`GET ${LIVE_PATH}`]: [], [`GET ${READY_PATH}`]: ['SERVICE_UNAVAILABLE'] }
} satisfies RouteModule
