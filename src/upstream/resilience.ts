// How upstream calls survive a failing upstream: a circuit breaker per operation (cockatiel), so an
// operation that is down for everyone is refused at once instead of costing every caller its deadline,
// and one retry of a connection that failed before any byte of an answer (a pooled keep-alive socket the
// upstream had just closed). Nothing else is retried: after a timeout or an answer, a second try only
// adds load.
import { BrokenCircuitError, CircuitState, SamplingBreaker, circuitBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel'
import { isUpstreamError, upstreamError, type FailureReason, type UpstreamError } from './errors.ts'
import { failedBeforeAnswer } from './exchange.ts'
import { operationNames, type OperationName } from './operations.ts'

export type BreakerState = 'closed' | 'open' | 'half_open'

export interface BreakerOptions {
  /** Percent of the calls in the window that must fail, more than which the breaker opens (1-99). */
  failureRatePercent: number
  /** Calls the window must hold before any failure rate opens the breaker. */
  minCalls: number
  /** The sliding window the rate is measured over. */
  windowMs: number
  /** How long an open breaker refuses calls before one probe may go through. */
  halfOpenAfterMs: number
}

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = { failureRatePercent: 50, minCalls: 20, windowMs: 10_000, halfOpenAfterMs: 10_000 }

/**
 * What an ended call says about the operation, for every caller:
 * - `failure`: the operation is unavailable. No answer (refused or reset connection, a timeout that had
 *   the full deadline), a 5xx, or a redirect we cannot follow (to another origin, a loop, no usable
 *   Location). Redirects count because the upstream chooses them by path, never by record: a bad one
 *   is a misconfiguration every caller meets, exactly like a 5xx.
 * - `answered`: the upstream answered, even when the answer is unusable for this record (an undocumented
 *   4xx, not JSON, the wrong content type, a contract break, too large, or any record-specific reason
 *   added later). The caller gets its 502, the metrics count it by reason and the log names it, but one
 *   client's broken record must never become everyone's outage. It proves the operation is reachable, so
 *   a probe that meets one closes the breaker, and an answer that arrived whole counts in the window as
 *   an answered (successful) call: the breaker measures failures among the calls that reached the
 *   upstream, and these did. (One cut off at the size cap, thrown before it was whole, counts neither way.)
 * - `neutral`: the caller's own limit (`aborted`, a timeout cut short by the profile budget), or the
 *   breaker's own refusal; says nothing about the upstream.
 */
type Verdict = 'failure' | 'answered' | 'neutral'

/** Reasons that say the operation is unavailable; `status` is decided by the status (5xx) instead. */
const UNAVAILABLE = new Set<string>(['connect', 'timeout', 'redirect_refused', 'redirect_loop', 'redirect_invalid'] satisfies FailureReason[])
const NEUTRAL = new Set<string>(['aborted', 'breaker_open'] satisfies FailureReason[])

/** A 5xx says the operation is down; any other status that is not an answer (a 4xx) is about the record. */
const isServerError = (status: number | null) => status !== null && status >= 500

/** A thrown failure's verdict; `budgeted`: the call's deadline was cut short by the caller's budget. */
function verdictOf (error: unknown, budgeted: boolean): Verdict {
  if (!isUpstreamError(error)) return 'neutral'
  const { reason } = error
  if (reason === 'timeout') return budgeted ? 'neutral' : 'failure'
  if (reason === 'status') return isServerError(error.exchange.status) ? 'failure' : 'answered'
  if (UNAVAILABLE.has(reason)) return 'failure'
  if (NEUTRAL.has(reason)) return 'neutral'
  return 'answered'
}

/** An answer that arrived: a failure only when it is a 5xx (undocumented statuses come back as results). */
const failedAnswer = (result: { outcome: string, status: number }) => result.outcome === 'status' && isServerError(result.status)

/**
 * cockatiel's SamplingBreaker (v4) splits `duration` into max(5, ceil(duration / 1 s)) buckets of a rounded
 * size, and opens only when `total >= bucketsDuration * minimumRps / 1000`. Asking for half a call less
 * than `minCalls` over the duration it really uses makes that exactly "at least minCalls calls", free of
 * rounding and floating point.
 */
function samplingBreaker ({ failureRatePercent, minCalls, windowMs }: BreakerOptions): SamplingBreaker {
  const buckets = Math.max(5, Math.ceil(windowMs / 1000))
  const duration = Math.round(windowMs / buckets) * buckets
  return new SamplingBreaker({ threshold: failureRatePercent / 100, duration: windowMs, minimumRps: (minCalls - 0.5) * 1000 / duration })
}

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open'
}

/** A `breaker_open` refusal, with the seconds until a probe may go through (its answer's Retry-After). */
export type BreakerRefusal = UpstreamError & { retryAfterS: number }

/** The Retry-After of a refusal by an open breaker; undefined for any other error. */
export function retryAfterOf (error: unknown): number | undefined {
  return isUpstreamError(error) && error.reason === 'breaker_open' ? (error as Partial<BreakerRefusal>).retryAfterS : undefined
}

export interface Breakers {
  /**
   * Runs one call through its operation's breaker. While the breaker is open, or its probe is out,
   * it throws `breaker_open` (503 UPSTREAM_UNAVAILABLE, a BreakerRefusal) without calling `attempt`.
   * `budgeted`: the call's deadline was cut short by the caller's budget.
   */
  guard<T extends { outcome: string, status: number }> (operation: OperationName, budgeted: boolean, attempt: () => Promise<T>): Promise<T>
  /** Every operation's state now (an open breaker stays `open` until a call comes to probe it). */
  states (): Record<OperationName, BreakerState>
}

export function createBreakers (options: BreakerOptions, onChange?: (operation: OperationName, state: BreakerState) => void): Breakers {
  // The failures this breaker counts: marked by guard(), which alone knows the call's budget.
  const counted = new WeakSet<object>()
  // Answers are never cut short by a budget: their outcome alone decides.
  const policy = handleWhen(error => typeof error === 'object' && error !== null && counted.has(error))
    .orWhenResult(result => failedAnswer(result as { outcome: string, status: number }))
  const breakers = new Map<OperationName, CircuitBreakerPolicy>()
  // When each breaker last opened, for Retry-After; written only on a state change, off the hot path.
  const openedAt = new Map<OperationName, number>()
  for (const operation of operationNames) {
    const breaker = circuitBreaker(policy, { breaker: samplingBreaker(options), halfOpenAfter: options.halfOpenAfterMs })
    breaker.onStateChange(state => {
      if (state === CircuitState.Open) openedAt.set(operation, Date.now())
      onChange?.(operation, STATE_NAMES[state])
    })
    breakers.set(operation, breaker)
  }

  function refused (operation: OperationName): BreakerRefusal {
    const error = upstreamError('breaker_open', { operation, status: null, redirects: [], duration_ms: 0 }) as BreakerRefusal
    // Open: until the half-open delay ends. Half-open: the probe is out and decides soon.
    const left = (openedAt.get(operation) ?? 0) + options.halfOpenAfterMs - Date.now()
    error.retryAfterS = Math.max(1, Math.ceil(left / 1000))
    return error
  }

  async function guard<T extends { outcome: string, status: number }> (operation: OperationName, budgeted: boolean, attempt: () => Promise<T>): Promise<T> {
    const breaker = breakers.get(operation)!
    // While the probe is out, others are refused as by an open breaker: cockatiel would queue them
    // behind the probe, deaf to their own deadlines.
    if (breaker.state === CircuitState.HalfOpen) throw refused(operation)
    // Not closed: this call is the probe, if the breaker lets it through at all.
    const probe = breaker.state !== CircuitState.Closed
    try {
      return await breaker.execute(async () => {
        try {
          return await attempt()
        } catch (error) {
          // An uncounted error leaves a closed breaker as it was, but would close a half-open one (cockatiel
          // takes an error it does not handle for a success): only a probe the upstream answered closes it;
          // one that proved nothing (the caller's limit) counts as failed.
          if (typeof error === 'object' && error !== null) {
            const verdict = verdictOf(error, budgeted)
            if (verdict === 'failure' || (probe && verdict === 'neutral')) counted.add(error)
          }
          throw error
        }
      })
    } catch (error) {
      if (error instanceof BrokenCircuitError) throw refused(operation)
      throw error
    }
  }

  function states (): Record<OperationName, BreakerState> {
    const out = {} as Record<OperationName, BreakerState>
    for (const [operation, breaker] of breakers) out[operation] = STATE_NAMES[breaker.state]
    return out
  }

  return { guard, states }
}

/**
 * Sends once more, at once and within the same deadline, when the first try failed before any byte of
 * an answer (see failedBeforeAnswer). The upstream operations are lookups: a second send of a request
 * the upstream may have seen changes nothing there.
 */
export async function retryBeforeAnswer<T> (send: () => Promise<T>): Promise<T> {
  try {
    return await send()
  } catch (error) {
    if (!failedBeforeAnswer(error)) throw error
    return await send()
  }
}
