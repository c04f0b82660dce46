// The tracer of this process: null until tracing starts (src/tracing/sdk.ts), and then for good. Code on
// the request path reads it once, when the app is built, and keeps `null` to mean "do nothing": with
// tracing off no span, context or closure is made per request, not even OpenTelemetry's no-op ones.
import type { Tracer } from '@opentelemetry/api'

let current: Tracer | null = null

export function activeTracer (): Tracer | null {
  return current
}

/** Set by registerTracing(); tests that build an app without tracing after one with it reset it to null. */
export function setActiveTracer (tracer: Tracer | null): void {
  current = tracer
}

/** Our own span attributes, beside the semantic conventions' `http.*`, `url.*` and `server.*` ones. */
export const ATTR = {
  REQUEST_ID: 'bff.request_id',
  OPERATION: 'bff.upstream.operation',
  OUTCOME: 'bff.upstream.outcome',
  REDIRECTS: 'bff.upstream.redirects',
  HOP: 'bff.upstream.hop',
  BREAKER_STATE: 'bff.upstream.breaker.state',
  SINGLE_FLIGHT: 'bff.profile.single_flight',
  SHARED_WITH: 'bff.profile.shared_with',
  DEGRADED: 'bff.profile.degraded',
  PROFILE_OUTCOME: 'bff.profile.outcome',
  /** `fresh` (all from the upstream), `stale` (a section from the last-known copy) or `cached` (PROFILE_FRESH_S). */
  FRESHNESS: 'bff.profile.freshness',
  STALE: 'bff.profile.stale'
} as const
