// `fastify.refusals`: refused requests summarised at warn (summary.ts), one line per address and
// kind per minute with the count, instead of a line each: past a limit (429) and under load shedding (503).
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { RefusalSummary } from './summary.ts'
import { RATE_LIMIT_WINDOW_MS } from '../../external/rate-limit/route-limits.ts'

/** What a summary line says of its refusals, beside the address and the count. */
interface Refusal { message: string, fields?: Record<string, unknown> }

interface Refusals {
  /** Counts a refused request under its kind (`message`) and its address. */
  count (request: FastifyRequest, refusal: Refusal): void
}

declare module 'fastify' {
  interface FastifyInstance {
    refusals: Refusals
  }
}

export default fp(async function refusals (fastify) {
  const summaries = new Map<string, RefusalSummary>()
  const warn = fastify.log.warn.bind(fastify.log)
  fastify.decorate('refusals', {
    count (request, { message, fields = {} }) {
      let summary = summaries.get(message)
      if (summary === undefined) {
        summary = new RefusalSummary(warn, message, RATE_LIMIT_WINDOW_MS)
        summaries.set(message, summary)
      }
      const route = request.routeOptions.url ?? null
      summary.count(`${route ?? ''} ${request.ip}`, { ...fields, route, address: request.ip })
    }
  } satisfies Refusals)
  fastify.addHook('onClose', async () => {
    for (const summary of summaries.values()) summary.close()
  })
}, { name: 'refusals' })
