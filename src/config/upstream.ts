// The upstream's variables: where it is, its keys, the limits of one exchange, and its circuit breakers.
import { Type, type Static } from 'typebox'
import { isLoopback } from './loopback.ts'
import { Millis, Secret } from './kinds.ts'

export const UpstreamConfigSchema = Type.Object({
  UPSTREAM_URL: Type.String({
    pattern: '^https?://[^\\s/?#]+[^\\s?#]*$',
    description: 'Base URL of the upstream operations (https, no query; http only to the loopback or with ' +
      'UPSTREAM_ALLOW_HTTP).'
  }),
  UPSTREAM_ALLOW_HTTP: Type.Boolean({
    default: false,
    description: 'Allows an http:// UPSTREAM_URL to a host other than the loopback, sending the upstream keys in ' +
      'clear text (only for a network that encrypts on its own, such as a service mesh).'
  }),
  PASSPORT_API_KEY: Secret('x-authorization value for /bc_passport/*.'),
  DEALER_API_KEY: Secret('x-authorization value for /bc_api_web_service/*.'),
  UPSTREAM_TIMEOUT_MS: Millis(5000, 'One upstream exchange, redirects included.'),
  UPSTREAM_MAX_BODY_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
    default: 1024 * 1024,
    description: 'Largest upstream answer read; a larger one is a bad response.'
  }),
  UPSTREAM_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 1024,
    default: 128,
    description: 'Keep-alive connections per upstream origin.'
  }),
  UPSTREAM_BREAKER_FAILURE_RATE: Type.Integer({
    minimum: 1,
    maximum: 99,
    default: 50,
    description: 'Percent of one upstream operation\'s calls in the window that must fail (no answer, a ' +
      'full-deadline timeout, 5xx, a bad redirect), more than which its circuit breaker opens; while open, calls ' +
      'fail at once with 503.'
  }),
  UPSTREAM_BREAKER_MIN_CALLS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 20,
    description: 'Calls of one upstream operation the window must hold before its failure rate can open the breaker; ' +
      'a caller the operation served counts for at most the failure rate of half of them (5 by default), one it ' +
      'never served for one failure.'
  }),
  UPSTREAM_BREAKER_WINDOW_MS: Type.Integer({
    minimum: 1000,
    maximum: 600_000,
    default: 10_000,
    description: 'The sliding window over which an upstream operation\'s failure rate is measured.'
  }),
  UPSTREAM_BREAKER_HALF_OPEN_MS: Millis(10_000, 'How long an open circuit breaker refuses calls before probe calls ' +
    '(one at a time, one per caller a round) may close it; failed probes of two callers the operation served open ' +
    'it again.')
})

type UpstreamConfig = Static<typeof UpstreamConfigSchema>

/** Upstream variables whose meaning is gone, with what replaces them. */
export const RETIRED_UPSTREAM_VARIABLES: Record<string, string> = {
  UPSTREAM_BREAKER_THRESHOLD: 'the breaker opens on a failure rate: set UPSTREAM_BREAKER_FAILURE_RATE, ' +
    'UPSTREAM_BREAKER_MIN_CALLS and UPSTREAM_BREAKER_WINDOW_MS'
}

/** The keys travel in a header of every upstream call: in clear text only on the loopback, or when told. */
export function upstreamUrlProblems (config: UpstreamConfig): string[] {
  let url: URL
  try {
    url = new URL(config.UPSTREAM_URL)
  } catch {
    return ['UPSTREAM_URL has an invalid value']
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !config.UPSTREAM_ALLOW_HTTP) {
    return ['UPSTREAM_URL must be https:// (the upstream keys would travel in clear text); http:// is accepted for ' +
      'the loopback, or with UPSTREAM_ALLOW_HTTP=true']
  }
  return []
}
