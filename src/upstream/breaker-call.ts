// The call through the breaker: admitted by the operation's circuit breaker (unless the call goes past it), under
// its deadline (a probe under the client's own, its caller waiting at most its limit), its outcome settled with the
// breaker and told to the observer.
import type { OperationName, ParamsOf } from '../../schemas/operations.ts'
import { callerKey, NOT_PROBE, type Admission, type createBreakers } from './breaker.ts'
import type { CallOptions, Exchange, UpstreamObserver } from './call-types.ts'
import type { OperationContracts } from './contract/check.ts'
import { passThroughValues } from './contract/depth.ts'
import { isUpstreamError, upstreamError } from './errors.ts'
import { redacted, upstreamFailure } from './redacted-failure.ts'
import { startDeadline, waitWithin, type Deadline } from './transport/deadline.ts'
import { elapsed, WireFailure } from './transport/exchange.ts'

interface BreakerCallOptions {
  breakers: ReturnType<typeof createBreakers>
  /** The client's deadline of one exchange. */
  timeoutMs: number
  contracts: Record<OperationName, OperationContracts>
  observer: UpstreamObserver | undefined
  /** What of a failure's texts is redacted for this call. */
  redactFor: (call: CallOptions, params: unknown) => (text: string) => string
  /** The exchange itself, within the deadline. */
  post: <N extends OperationName>(name: N, params: ParamsOf<N>, call: CallOptions, limit: Deadline) => Promise<Exchange>
}

/** The breakers' key of the call's caller: the one it carries (the profile's calls share one), else made now. */
const keyOfCaller = ({ caller }: CallOptions): string | undefined =>
  caller === undefined ? undefined : caller.key ?? callerKey(caller.id)

export function createBreakerCall ({ breakers, timeoutMs, contracts, observer, redactFor, post }: BreakerCallOptions) {
  // The breaker admitted around one call. An ordinary call is one async function (every layer of promises here is
  // paid three times per profile, npm run bench); a probe runs to the upstream's answer under the client's own
  // deadline, its caller waiting at most its own limit: no caller can end a probe and so decide the breaker.
  function throughBreaker<N extends OperationName> (name: N, params: ParamsOf<N>,
    call: CallOptions): Promise<Exchange> {
    let admission: Admission | null = null
    try {
      if (call.breaker !== false) admission = breakers.admit(name, keyOfCaller(call))
    } catch (error) {
      observeFailure(name, error)
      return Promise.reject(error)
    }
    const limitMs = deadlineMs(call.timeoutMs, timeoutMs)
    if (admission === null || admission === NOT_PROBE) {
      return settled(name, params, call, admission, limitMs, call.signal)
    }
    const started = performance.now()
    const probe = settled(name, params, call, admission, timeoutMs, undefined)
    if (limitMs >= timeoutMs && call.signal === undefined) return probe
    return waitWithin(probe, limitMs, call.signal, timedOut => upstreamError(timedOut ? 'timeout' : 'aborted',
      { operation: name, status: null, redirects: [], duration_ms: elapsed(started) }))
  }

  /** One admitted call under a deadline of `limitMs` and the caller's `signal`, its breaker settled, observed. */
  async function settled<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions,
    admission: Admission | null, limitMs: number, signal: AbortSignal | undefined): Promise<Exchange> {
    const caller = keyOfCaller(call)
    let ex: Exchange
    const limit = startDeadline(limitMs, signal)
    try {
      ex = await post(name, params, call, limit)
    } catch (thrown) {
      const error = thrown instanceof WireFailure
        ? redacted(upstreamFailure(thrown), redactFor(call, params))
        : thrown
      if (admission !== null) breakers.settleError(name, admission, error, limitMs < timeoutMs, caller)
      observeFailure(name, error)
      throw error
    } finally {
      limit.clear()
    }
    if (admission !== null) breakers.settleResponse(name, admission, ex, caller)
    observer?.exchange?.({
      operation: name,
      outcome: ex.outcome,
      status: ex.status,
      duration_ms: ex.duration_ms,
      hops: ex.redirects.length,
      contractErrors: ex.contract.errors,
      passThrough: ex.outcome === 'ok' ? passThroughValues(ex.body, contracts[name].response.passThrough) : undefined
    })
    return ex
  }

  /** Tells the observer of a call that failed, a call the breaker refused too. */
  function observeFailure (name: OperationName, error: unknown): void {
    if (observer?.exchange === undefined || !isUpstreamError(error)) return
    const { status, redirects, duration_ms: durationMs, contract } = error.exchange
    observer.exchange({
      operation: name,
      outcome: error.reason,
      status,
      duration_ms: durationMs,
      hops: redirects.length,
      contractErrors: contract?.errors ?? []
    })
  }

  return throughBreaker
}

/**
 * The deadline of one exchange: the call's, never longer than the client's. A caller passes what is
 * left of its own budget, which may be fractional or spent: rounded up, never below 0.
 */
function deadlineMs (requested: number | undefined, limit: number): number {
  if (requested === undefined || Number.isNaN(requested)) return limit
  return Math.max(0, Math.ceil(Math.min(requested, limit)))
}
