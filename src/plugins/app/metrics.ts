// Prometheus metrics at GET /metrics, for operators only. One Registry per app (tests build many apps in
// one process; the global registry would make their metrics clash). Every label value comes from a small
// known set (route patterns, operation names, outcomes, sections): never a user id, login, token or key.
// Off unless METRICS_API_KEY is set; a scrape then needs `Authorization: Bearer <METRICS_API_KEY>`.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Registry } from 'prom-client'
import { keySetMetrics } from '../../auth/key-set.ts'
import type { Config } from '../../config.ts'
import { UnauthorizedError } from '../../errors.ts'
import { consoleKeyCheck } from '../../auth/key-check.ts'
import type { BreakerState, ExchangeEvent, UpstreamObserver } from '../../upstream/client.ts'
import { passThroughPaths, passThroughValues, type SchemaPath } from '../../upstream/contract/depth.ts'
import { operationNames, operations, type OperationName } from '../../../schemas/operations.ts'
import type { SharedRedis } from './redis.ts'
import type { LastKnownObserver } from '../../profile/last-known/observer.ts'

export const METRICS_PATH = '/metrics'

// A BFF answers in milliseconds to a few seconds; the top buckets frame the 5 s upstream and 8 s profile
// deadlines so a request that ran into one shows up where it belongs.
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 8, 10]

/** At most this many distinct contract-violation paths are kept; later ones count under OTHER_PATH. */
export const MAX_CONTRACT_PATHS = 100
export const OTHER_PATH = '(other)'
const MAX_PATH_LENGTH = 120

/** At most this many distinct pass-through key paths are remembered per operation; later ones are not counted. */
export const MAX_PASSTHROUGH_PATHS = 200

/** Key paths seen so far under one pass-through part, as a tree: no string is built unless a path is new. */
interface SeenTree { children: Map<string, SeenTree> }

/**
 * Counts key paths never seen before in the parts of an operation's answers that the schema passes on
 * undescribed (schemas/dealer.ts DiscountData, last_dealer, contact_persons; the passport's cookies).
 * The schemas' examples count as seen, so a rise means the upstream sends a field nobody has described.
 */
export function createDriftTracker (operation: OperationName, onNew: (path: string) => void) {
  const parts: SchemaPath[] = passThroughPaths(operations[operation].response)
  const roots = parts.map((): SeenTree => ({ children: new Map() }))
  let size = 0

  function walk (value: unknown, tree: SeenTree, path: string, report: boolean): void {
    if (typeof value !== 'object' || value === null) return
    if (Array.isArray(value)) {
      for (const item of value) visit(item, tree, '*', path, report)
      return
    }
    for (const key in value) visit((value as Record<string, unknown>)[key], tree, key, path, report)
  }

  function visit (value: unknown, tree: SeenTree, key: string, path: string, report: boolean): void {
    let child = tree.children.get(key)
    if (child === undefined) {
      if (size >= MAX_PASSTHROUGH_PATHS) return
      child = { children: new Map() }
      tree.children.set(key, child)
      size++
      if (report) onNew(`${path}/${key}`)
    }
    walk(value, child, `${path}/${key}`, report)
  }

  /** Records the key paths of an answer's pass-through parts ([path index, value]); reports new ones when `report`. */
  function observe (found: ReadonlyArray<readonly [number, unknown]>, report = true): void {
    for (const [index, value] of found) {
      const root = roots[index]
      if (root !== undefined) walk(value, root, `/${parts[index]!.join('/')}`, report)
    }
  }

  // The documented examples are known fields.
  const examples = (operations[operation].response as { examples?: unknown[] }).examples ?? []
  for (const example of examples) observe(passThroughValues(example, parts), false)
  return { observe }
}

/** Breaker states as the gauge reports them: 0 closed, 1 half-open, 2 open. */
export const BREAKER_STATE_VALUES: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 }

/** The upstream observer with the breaker callback the client reports state changes to. */
export interface MetricsObserver extends UpstreamObserver {
  exchange (event: ExchangeEvent): void
  breaker (operation: OperationName, state: BreakerState): void
}

export interface Metrics {
  registry: Registry
  /** Passed to the upstream client: every ended exchange and breaker change becomes a sample. */
  observer: MetricsObserver
  /** The onResponse hook's work: one sample per answered front request. */
  recordResponse (request: FastifyRequest, reply: FastifyReply): void
  /** One request refused by load shedding, by under-pressure's name of the bound it found exceeded. */
  shed (pressure: string): void
  /** Passed to the last-known store: copies served, written, evicted, and its failures. */
  lastKnown: LastKnownObserver
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when metrics are off (METRICS_API_KEY unset). */
    metrics: Metrics | null
  }
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
/** under-pressure's names of the bounds we configure, as label values. */
const SHED_PRESSURES: Record<string, string> = { eventLoopDelay: 'event_loop_delay', heapUsedBytes: 'heap_used', rssBytes: 'rss' }
const DEGRADED_SECTIONS = new Set(['discount', 'contractor'])

/**
 * A contract-violation path as a label: array indexes become `*` (one series per field, not per item),
 * anything but plain pointer characters becomes `_`, and the length is bounded.
 */
export function normalizeContractPath (path: string): string {
  const normal = path
    .replace(/\/\d+(?=\/|$)/g, '/*')
    .replace(/[^A-Za-z0-9_/*~.-]/g, '_')
  return normal.slice(0, MAX_PATH_LENGTH)
}

/** prom-client, imported only when metrics are on: unused, it would cost every instance about 2 MiB of heap. */
export type PromClient = typeof import('prom-client')

export function createMetrics ({ collectDefaultMetrics, Counter, Gauge, Histogram, Registry }: PromClient): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
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
  const upstreamRequests = new Counter({
    name: 'bff_upstream_requests_total',
    help: 'Upstream exchanges ended, by operation and outcome (ok, not_found, or why it failed).',
    labelNames: ['operation', 'outcome'] as const,
    registers
  })
  const upstreamDuration = new Histogram({
    name: 'bff_upstream_request_duration_seconds',
    help: 'Upstream exchange latency, redirects included, by operation and outcome.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers
  })
  const upstreamRedirects = new Counter({
    name: 'bff_upstream_redirects_total',
    help: 'Redirect hops followed by upstream exchanges, by operation. Steady growth means a learned location keeps moving.',
    labelNames: ['operation'] as const,
    registers
  })
  const contractViolations = new Counter({
    name: 'bff_upstream_contract_violations_total',
    help: `Upstream answers that broke the operation's schema, by operation and JSON-pointer path (array indexes as *; at most ${MAX_CONTRACT_PATHS} paths).`,
    labelNames: ['operation', 'path'] as const,
    registers
  })
  const breakerState = new Gauge({
    name: 'bff_upstream_breaker_state',
    help: 'Circuit breaker state per upstream operation: 0 closed, 1 half-open, 2 open.',
    labelNames: ['operation'] as const,
    registers
  })
  const degradedSections = new Counter({
    name: 'bff_profile_degraded_sections_total',
    help: 'Profile answers sent without a section because its dealer lookup failed, by section.',
    labelNames: ['section'] as const,
    registers
  })
  const staleSections = new Counter({
    name: 'bff_profile_stale_sections_total',
    help: 'Profile sections answered from the client\'s last-known copy, by section and reason (the failure\'s reason, ' +
      'or fresh_window within PROFILE_FRESH_S). Counted once per load; a single-flight burst shares one.',
    labelNames: ['section', 'reason'] as const,
    registers
  })
  const copiesWritten = new Counter({
    name: 'bff_profile_copies_written_total',
    help: 'Last-known profile copies written (after fresh answers).',
    registers
  })
  const copiesEvicted = new Counter({
    name: 'bff_profile_copies_evicted_total',
    help: 'Last-known profile copies pushed out of the in-process store by PROFILE_CACHE_MAX_BYTES (least recently used first).',
    registers
  })
  const copyDecryptFailures = new Counter({
    name: 'bff_profile_copy_decrypt_failures_total',
    help: 'Last-known copies in Redis that no PROFILE_CACHE_KEY opened (a removed key, or tampering); each was a miss.',
    registers
  })
  const copyStoreFailures = new Counter({
    name: 'bff_profile_copy_store_failures_total',
    help: 'Redis commands of the last-known store that failed or timed out, by operation (read, write, delete); the request went on without them.',
    labelNames: ['operation'] as const,
    registers
  })
  const lastKnown: LastKnownObserver = {
    served (section, reason) { staleSections.inc({ section, reason }) },
    written () { copiesWritten.inc() },
    evicted () { copiesEvicted.inc() },
    decryptFailed () { copyDecryptFailures.inc() },
    storeFailed (operation) { copyStoreFailures.inc({ operation }) }
  }

  const shedRequests = new Counter({
    name: 'bff_load_shed_requests_total',
    help: 'Requests refused with 503 by load shedding, by the bound found exceeded (event_loop_delay, heap_used, rss).',
    labelNames: ['pressure'] as const,
    registers
  })

  const passThroughDrift = new Counter({
    name: 'bff_upstream_passthrough_new_paths_total',
    help: 'Key paths seen for the first time since start in the parts of upstream answers passed on undescribed ' +
      `(discount data, last_dealer, contact_persons, cookies), the schemas' examples excepted; at most ${MAX_PASSTHROUGH_PATHS} per operation. ` +
      'A rise means the upstream sends a field no schema describes, which reaches the app unchecked.',
    labelNames: ['operation'] as const,
    registers
  })
  const drift = Object.fromEntries(operationNames.map(operation =>
    [operation, createDriftTracker(operation, () => passThroughDrift.inc({ operation }))])) as
    Record<OperationName, ReturnType<typeof createDriftTracker>>

  // Known series start at zero, so rate() and alerts see them before the first event.
  for (const operation of operationNames) {
    upstreamRedirects.labels(operation).inc(0)
    passThroughDrift.labels(operation).inc(0)
    breakerState.labels(operation).set(BREAKER_STATE_VALUES.closed)
  }
  for (const section of DEGRADED_SECTIONS) degradedSections.labels(section).inc(0)
  for (const pressure of Object.values(SHED_PRESSURES)) shedRequests.labels(pressure).inc(0)

  const seenPaths = new Set<string>()
  function pathLabel (operation: string, path: string): string {
    const normal = normalizeContractPath(path)
    const key = `${operation} ${normal}`
    if (seenPaths.has(key)) return normal
    if (seenPaths.size >= MAX_CONTRACT_PATHS) return OTHER_PATH
    seenPaths.add(key)
    return normal
  }

  // Label objects built once per combination and reused: every value comes from a small known set
  // (see above), so these maps stay small, and a request costs no label object of its own.
  const exchangeLabels = new Map<string, Map<string, { operation: string, outcome: string }>>()
  function labelsOfExchange (operation: string, outcome: string) {
    let byOutcome = exchangeLabels.get(operation)
    if (byOutcome === undefined) exchangeLabels.set(operation, byOutcome = new Map())
    let labels = byOutcome.get(outcome)
    if (labels === undefined) byOutcome.set(outcome, labels = { operation, outcome })
    return labels
  }
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

  const observer: MetricsObserver = {
    exchange (event) {
      const labels = labelsOfExchange(event.operation, event.outcome)
      upstreamRequests.inc(labels)
      upstreamDuration.observe(labels, event.duration_ms / 1000)
      if (event.hops > 0) upstreamRedirects.inc({ operation: event.operation }, event.hops)
      if (event.passThrough !== undefined) drift[event.operation].observe(event.passThrough)
      // Only a schema check names fields; status, content type and JSON failures count by outcome.
      if (event.outcome === 'contract') {
        for (const error of event.contractErrors) {
          contractViolations.inc({ operation: event.operation, path: pathLabel(event.operation, error.path) })
        }
      }
    },
    breaker (operation, state) {
      breakerState.set({ operation }, BREAKER_STATE_VALUES[state])
    }
  }

  // Hot path: Fastify already times every reply (`elapsedTime`), so a request costs two samples under
  // one cached label object.
  function recordResponse (request: FastifyRequest, reply: FastifyReply): void {
    const labels = labelsOfResponse(
      // The pattern, never the raw URL: ids in paths and query strings stay out of the labels.
      request.is404 ? 'not_found' : (request.routeOptions.url ?? 'unmatched'),
      KNOWN_METHODS.has(request.method) ? request.method : 'other',
      reply.statusCode
    )
    httpRequests.inc(labels)
    httpDuration.observe(labels, reply.elapsedTime / 1000)
    // The profile names its missing sections in x-degraded; reading it keeps the route unaware of metrics.
    const degraded = reply.getHeader('x-degraded')
    if (typeof degraded === 'string') {
      for (const section of degraded.split(',')) {
        degradedSections.inc({ section: DEGRADED_SECTIONS.has(section) ? section : 'other' })
      }
    }
  }

  function shed (pressure: string): void {
    shedRequests.inc({ pressure: SHED_PRESSURES[pressure] ?? 'other' })
  }

  return { registry, observer, recordResponse, shed, lastKnown }
}

/** Redis's gauges for /metrics, read when scraped. */
export function redisMetrics ({ Counter, Gauge }: PromClient, registry: Registry, redis: SharedRedis): void {
  const registers = [registry]
  /* eslint-disable no-new -- prom-client metrics live in the registry they are given */
  new Gauge({
    name: 'bff_redis_up',
    help: 'Whether the shared Redis of the rate limits answers (1) or not (0: limits fail open).',
    registers,
    collect () { this.set(redis.state === 'up' ? 1 : 0) }
  })
  new Counter({
    name: 'bff_rate_limit_store_failures_total',
    help: 'Rate-limit checks that failed open because Redis was unreachable, slow or bypassed while down.',
    registers,
    collect () {
      this.reset()
      this.inc(redis.failures)
    }
  })
  /* eslint-enable no-new */
}

export default fp<{ config: Pick<Config, 'METRICS_API_KEY'> }>(async function metricsPlugin (fastify, { config }) {
  if (config.METRICS_API_KEY === undefined) {
    fastify.decorate('metrics', null)
    return
  }
  const prom = await import('prom-client')
  const metrics = createMetrics(prom)
  fastify.decorate('metrics', metrics)
  if (fastify.hasDecorator('redis') && fastify.redis !== null) redisMetrics(prom, metrics.registry, fastify.redis)
  if (fastify.hasDecorator('keySet') && fastify.keySet !== null) keySetMetrics(prom, metrics.registry, fastify.keySet)
  fastify.addHook('onResponse', function recordResponse (request, reply, done) {
    metrics.recordResponse(request, reply)
    done()
  })

  const keyMatches = consoleKeyCheck(config.METRICS_API_KEY)
  fastify.get(METRICS_PATH, {
    // An operator endpoint: not part of the API the mobile app reads about.
    schema: { hide: true },
    // Answered under load shedding too: an overloaded instance is when its operator most needs to see it.
    config: { shed: false },
    logLevel: 'warn'
  }, async function scrape (request, reply) {
    const header = request.headers.authorization
    const presented = typeof header === 'string' && header.slice(0, 7).toLowerCase() === 'bearer ' ? header.slice(7).trim() : undefined
    if (!keyMatches(presented)) {
      // At warn: the route logs at warn only, and a guess at the key is what an operator must see.
      request.log.warn({ credential: 'metrics key' }, 'refused metrics scrape')
      reply.header('www-authenticate', 'Bearer realm="metrics"')
      throw await fastify.refuseCredentials(request, reply, new UnauthorizedError('Metrics need Authorization: Bearer <METRICS_API_KEY>'))
    }
    reply.header('cache-control', 'no-store')
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
  })
}, { name: 'metrics', dependencies: ['rate-limit'] })
