// Typed upstream failures. Each keeps the exchange as far as it got (for the console, logs and metrics)
// and its `cause`, in the manner of fastify-reply-from: 502 bad answer, 503 unreachable, 504 too slow.
import { UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.ts'
import type { ContractError } from './contract/check.ts'
import type { WireReason, WireRecord } from './transport/exchange.ts'

/**
 * Why an exchange failed; a metric label and a log field, never shown to callers. From the wire (WireReason):
 * `timeout` (the deadline of the exchange passed), `aborted` (the caller's own signal, the profile budget, ended
 * it), `connect` (no answer: refused, reset, DNS, TLS), `redirect_refused` (to another origin; the key never
 * leaves), `redirect_loop` (more redirects than allowed), `redirect_invalid` (no usable Location, another path,
 * or a 3xx other than 307/308), `too_large` (the answer exceeded the size cap). Then:
 */
export type FailureReason =
  | WireReason
  | 'breaker_open' // the circuit breaker refused to call
  | 'status' // an HTTP status that is not an answer of the operation
  | 'content_type' // the answer is not JSON
  | 'json' // the answer claims JSON but does not parse
  | 'contract' // the JSON breaks the operation's schema
  | 'too_deep' // the JSON nests deeper than MAX_DEPTH where it is passed on (contract/depth.ts)

/** What is known of a failed exchange: always the hops so far, the status when an answer arrived. */
export interface FailedExchange extends WireRecord {
  /** What was wrong with an answer that arrived (reasons status, content_type, json, contract, too_deep). */
  contract?: { valid: boolean, errors: ContractError[] }
}

type UpstreamErrorCtor = typeof UpstreamBadResponseError | typeof UpstreamTimeoutError | typeof UpstreamUnavailableError

export type UpstreamError = InstanceType<UpstreamErrorCtor> & {
  reason: FailureReason
  exchange: FailedExchange
  /** Headers the answer carries (an open breaker's Retry-After); the error handler sends them. */
  headers?: Record<string, string>
}

const byReason: Record<FailureReason, UpstreamErrorCtor> = {
  timeout: UpstreamTimeoutError,
  aborted: UpstreamTimeoutError,
  connect: UpstreamUnavailableError,
  breaker_open: UpstreamUnavailableError,
  redirect_refused: UpstreamBadResponseError,
  redirect_loop: UpstreamBadResponseError,
  redirect_invalid: UpstreamBadResponseError,
  too_large: UpstreamBadResponseError,
  status: UpstreamBadResponseError,
  content_type: UpstreamBadResponseError,
  json: UpstreamBadResponseError,
  contract: UpstreamBadResponseError,
  too_deep: UpstreamBadResponseError
}

export function upstreamError (reason: FailureReason, exchange: FailedExchange, cause?: unknown): UpstreamError {
  const Ctor = byReason[reason]
  const error = (
    cause === undefined ? new Ctor(exchange.operation) : new Ctor(exchange.operation, { cause })
  ) as UpstreamError
  error.reason = reason
  error.exchange = exchange
  return error
}

export function isUpstreamError (error: unknown): error is UpstreamError {
  return error instanceof Error && 'reason' in error && 'exchange' in error &&
    (error instanceof UpstreamBadResponseError || error instanceof UpstreamTimeoutError ||
      error instanceof UpstreamUnavailableError)
}
