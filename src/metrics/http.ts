// The front's metrics: every answered request by route pattern, method and status, its latency, and the
// requests load shedding refused. Labels never carry a raw URL: ids in paths and query strings stay out.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Registry } from 'prom-client'
import { LATENCY_BUCKETS_SECONDS, type PromClient } from '../prom.ts'

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
/** under-pressure's names of the bounds we configure, as label values. */
const SHED_PRESSURES: Record<string, string> = {
  eventLoopDelay: 'event_loop_delay', heapUsedBytes: 'heap_used', rssBytes: 'rss'
}

export interface HttpMetrics {
  /** The onResponse hook's work: one sample per answered front request. */
  recordResponse (request: FastifyRequest, reply: FastifyReply): void
  /** One request refused by load shedding, by under-pressure's name of the bound it found exceeded. */
  shed (pressure: string): void
}

export function httpMetrics ({ Counter, Histogram }: Pick<PromClient, 'Counter' | 'Histogram'>,
  registry: Registry): HttpMetrics {
  const registers = [registry]
  const httpRequests = new Counter({
    name: 'bff_http_requests_total',
    help: 'Front requests answered, by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status_code'] as const,
    registers
  })
  const httpDuration = new Histogram({
    name: 'bff_http_request_duration_seconds',
    help: 'Front request latency from arrival to the last byte sent, by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status_code'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers
  })
  const shedRequests = new Counter({
    name: 'bff_load_shed_requests_total',
    help: 'Requests refused with 503 by load shedding, by the bound found exceeded (event_loop_delay, heap_used, rss).',
    labelNames: ['pressure'] as const,
    registers
  })
  // Known series start at zero, so rate() and alerts see them before the first event.
  for (const pressure of Object.values(SHED_PRESSURES)) shedRequests.labels(pressure).inc(0)

  // Label objects built once per combination and reused: every value comes from a small known set, so this
  // map stays small, and a request costs no label object of its own.
  type ResponseLabels = { route: string, method: string, status_code: number }
  const responseLabels = new Map<string, Map<string, Map<number, ResponseLabels>>>()
  function labelsOfResponse (route: string, method: string, status: number): ResponseLabels {
    let byMethod = responseLabels.get(route)
    if (byMethod === undefined) responseLabels.set(route, byMethod = new Map())
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
    let labels = byStatus.get(status)
    if (labels === undefined) byStatus.set(status, labels = { route, method, status_code: status })
    return labels
  }

  return {
    // Hot path: Fastify already times every reply (`elapsedTime`), so a request costs two samples under
    // one cached label object.
    recordResponse (request, reply) {
      const labels = labelsOfResponse(
        // The pattern, never the raw URL.
        request.is404 ? 'not_found' : (request.routeOptions.url ?? 'unmatched'),
        KNOWN_METHODS.has(request.method) ? request.method : 'other',
        reply.statusCode
      )
      httpRequests.inc(labels)
      httpDuration.observe(labels, reply.elapsedTime / 1000)
    },
    shed (pressure) {
      shedRequests.inc({ pressure: SHED_PRESSURES[pressure] ?? 'other' })
    }
  }
}
