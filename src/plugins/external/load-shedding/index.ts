// While the event loop lags or memory is past its bound, a request gets 503 at once instead of queueing behind work
// the process cannot finish. Health routes are never shed: a failed liveness would restart a process only busy.
import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../../config.ts'
import { ServiceUnavailableError } from '../../../errors.ts'
import { summarised } from '../../app/refusals/summary.ts'
import { OVERLOADED, SHED_RETRY_AFTER_S } from './shedding.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route is answered under pressure too (the metrics scrape). */
    shed?: boolean
  }
}

const MIB = 1024 * 1024
const HEALTH_PREFIX = '/health/'

export default fp<{ config: Config }>(async function loadShedding (fastify, { config }) {
  await fastify.register(underPressure, {
    // 0 turns a check off, in under-pressure as in our variables.
    maxEventLoopDelay: config.UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.UNDER_PRESSURE_MAX_HEAP_USED_MB * MIB,
    maxRssBytes: config.UNDER_PRESSURE_MAX_RSS_MB * MIB,
    sampleInterval: config.UNDER_PRESSURE_SAMPLE_INTERVAL_MS,
    exposeStatusRoute: false,
    // Called only under pressure: returning nothing lets the request through, a rejection goes to our error body.
    pressureHandler (request: FastifyRequest, reply: FastifyReply, type: string, value: number | undefined) {
      const { url, config: routeConfig } = request.routeOptions
      if (url?.startsWith(HEALTH_PREFIX) === true || routeConfig.shed === false) return
      // Registered before the metrics plugin, so read at request time; null when metrics are off.
      request.server.metrics?.shed(type)
      // One summary line per address a minute (plugins/app/refusals/): a line each would add to the load.
      request.server.refusals.count(request, { message: 'request shed', fields: { pressure: type, value } })
      reply.header('retry-after', String(SHED_RETRY_AFTER_S))
      return Promise.reject(summarised(new ServiceUnavailableError(OVERLOADED)))
    }
  })
}, { name: 'load-shedding', dependencies: ['request-id', 'security', 'refusals'] })
