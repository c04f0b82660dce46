// How upstream calls survive a failing upstream: a circuit breaker per operation (cockatiel), so a
// broken operation is refused at once instead of costing every caller its deadline, and one retry of a
// connection that failed before any byte of an answer (a pooled keep-alive socket the upstream had
// just closed). Nothing else is retried: after a timeout or an answer, a second try only adds load.
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel'
import { upstreamError, type FailureReason } from './errors.ts'
import { failedBeforeAnswer } from './exchange.ts'
import { operationNames, type OperationName } from './operations.ts'

export type BreakerState = 'closed' | 'open' | 'half_open'

export interface BreakerOptions {
  /** Consecutive failures that open an operation's breaker. */
  threshold: number
  /** How long an open breaker refuses calls before one probe may go through. */
  halfOpenAfterMs: number
}

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = { threshold: 5, halfOpenAfterMs: 10_000 }

type Verdict = 'success' | 'failure' | 'neutral'

/**
 * What an ended call says about the upstream's health. Whatever is not the operation's answer (an error
 * status, not JSON, a broken contract, a bad redirect, too large) means the upstream is broken as surely
 * as silence does. `aborted` is the caller's own limit (the profile budget, a caller that left) and says
 * nothing about the upstream.
 */
const VERDICTS: Record<'ok' | 'not_found' | FailureReason, Verdict> = {
  ok: 'success',
  not_found: 'success',
  timeout: 'failure',
  connect: 'failure',
  status: 'failure',
  content_type: 'failure',
  json: 'failure',
  contract: 'failure',
  too_large: 'failure',
  redirect_refused: 'failure',
  redirect_loop: 'failure',
  redirect_invalid: 'failure',
  aborted: 'neutral',
  breaker_open: 'neutral',
  // One client's record nested absurdly deep (a hostile value in a pass-through field) says nothing of the upstream's health.
  too_deep: 'neutral'
}

/**
 * A failure's verdict. A timeout counts only when the call had the client's full deadline: one cut short
 * by the caller's remaining budget (the dealers get what the passport left) is the budget, like `aborted`.
 */
function verdictOf (error: unknown, budgeted: boolean): Verdict {
  const reason = (error as { reason?: unknown }).reason
  if (typeof reason !== 'string' || !(reason in VERDICTS)) return 'neutral'
  if (reason === 'timeout' && budgeted) return 'neutral'
  return VERDICTS[reason as FailureReason]
}

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'open'
}

export interface Breakers {
  /**
   * Runs one call through its operation's breaker. While the breaker is open, or its probe is out,
   * it throws `breaker_open` (503 UPSTREAM_UNAVAILABLE) without calling `attempt`. `budgeted`: the
   * call's deadline was cut short by the caller's budget.
   */
  guard<T extends { outcome: 'ok' | 'not_found' | FailureReason }> (operation: OperationName, budgeted: boolean, attempt: () => Promise<T>): Promise<T>
  /** Every operation's state now (an open breaker stays `open` until a call comes to probe it). */
  states (): Record<OperationName, BreakerState>
}

export function createBreakers (options: BreakerOptions, onChange?: (operation: OperationName, state: BreakerState) => void): Breakers {
  // The failures this breaker counts: marked by guard(), which alone knows the call's budget.
  const counted = new WeakSet<object>()
  // Answers are never cut short by a budget: their outcome alone decides.
  const policy = handleWhen(error => typeof error === 'object' && error !== null && counted.has(error))
    .orWhenResult(result => VERDICTS[(result as { outcome: 'ok' | 'not_found' | FailureReason }).outcome] === 'failure')
  const breakers = new Map<OperationName, CircuitBreakerPolicy>()
  for (const operation of operationNames) {
    const breaker = circuitBreaker(policy, { breaker: new ConsecutiveBreaker(options.threshold), halfOpenAfter: options.halfOpenAfterMs })
    if (onChange !== undefined) breaker.onStateChange(state => { onChange(operation, STATE_NAMES[state]) })
    breakers.set(operation, breaker)
  }

  const refused = (operation: OperationName) =>
    upstreamError('breaker_open', { operation, status: null, redirects: [], duration_ms: 0 })

  async function guard<T extends { outcome: 'ok' | 'not_found' | FailureReason }> (operation: OperationName, budgeted: boolean, attempt: () => Promise<T>): Promise<T> {
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
          // Uncounted, an error leaves a closed breaker as it was, but would close a half-open one (cockatiel
          // takes an error it does not handle for a success): a probe that proved nothing counts as failed.
          if (typeof error === 'object' && error !== null && (probe || verdictOf(error, budgeted) === 'failure')) counted.add(error)
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
