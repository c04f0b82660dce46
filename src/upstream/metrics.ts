// The upstream client's metrics: every ended exchange by operation and outcome, its latency, its redirect hops,
// the fields of the answers that broke their schema, and the drift of what the schemas pass on undescribed
// (contract/drift.ts). Every label value comes from a small known set; a contract path is normalized and capped.
import type { Registry } from 'prom-client'
import { operationNames } from '../../schemas/operations.ts'
import { LATENCY_BUCKETS_SECONDS, type PromClient } from '../prom.ts'
import type { ExchangeEvent, UpstreamObserver } from './client.ts'
import { driftMetrics } from './contract/drift.ts'

/** At most this many distinct contract-violation paths are kept; later ones count under OTHER_PATH. */
export const MAX_CONTRACT_PATHS = 100
export const OTHER_PATH = '(other)'
const MAX_PATH_LENGTH = 120

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

/** The exchange metrics; returns the observer the client reports every ended exchange to. */
export function upstreamMetrics (prom: Pick<PromClient, 'Counter' | 'Histogram'>,
  registry: Registry): Required<Pick<UpstreamObserver, 'exchange'>> {
  const { Counter, Histogram } = prom
  const registers = [registry]
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
    help: 'Redirect hops followed by upstream exchanges, by operation. ' +
      'Steady growth means a learned location keeps moving.',
    labelNames: ['operation'] as const,
    registers
  })
  const contractViolations = new Counter({
    name: 'bff_upstream_contract_violations_total',
    help: 'Upstream answers that broke the operation\'s schema, by operation and JSON-pointer path ' +
      `(array indexes as *; at most ${MAX_CONTRACT_PATHS} paths).`,
    labelNames: ['operation', 'path'] as const,
    registers
  })
  // Known series start at zero, so rate() and alerts see them before the first event.
  for (const operation of operationNames) upstreamRedirects.labels(operation).inc(0)
  const observeDrift = driftMetrics(prom, registry)

  const seenPaths = new Set<string>()
  function pathLabel (operation: string, path: string): string {
    const normal = normalizeContractPath(path)
    const key = `${operation} ${normal}`
    if (seenPaths.has(key)) return normal
    if (seenPaths.size >= MAX_CONTRACT_PATHS) return OTHER_PATH
    seenPaths.add(key)
    return normal
  }

  // Label objects built once per combination and reused: every value comes from a small known set, so this
  // map stays small, and an exchange costs no label object of its own.
  const exchangeLabels = new Map<string, Map<string, { operation: string, outcome: string }>>()
  function labelsOfExchange (operation: string, outcome: string) {
    let byOutcome = exchangeLabels.get(operation)
    if (byOutcome === undefined) exchangeLabels.set(operation, byOutcome = new Map())
    let labels = byOutcome.get(outcome)
    if (labels === undefined) byOutcome.set(outcome, labels = { operation, outcome })
    return labels
  }

  return {
    exchange (event: ExchangeEvent) {
      const labels = labelsOfExchange(event.operation, event.outcome)
      upstreamRequests.inc(labels)
      upstreamDuration.observe(labels, event.duration_ms / 1000)
      if (event.hops > 0) upstreamRedirects.inc({ operation: event.operation }, event.hops)
      if (event.passThrough !== undefined) observeDrift(event.operation, event.passThrough)
      // Only a schema check names fields; status, content type and JSON failures count by outcome.
      if (event.outcome === 'contract') {
        for (const error of event.contractErrors) {
          contractViolations.inc({ operation: event.operation, path: pathLabel(event.operation, error.path) })
        }
      }
    }
  }
}
