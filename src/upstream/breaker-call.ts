// The call through the breaker: admitted by the operation's circuit breaker (unless the call goes past it), under
// its deadline, its outcome settled with the breaker and told to the observer. One async function per call: every
// layer of promises here is paid three times per profile (npm run bench).
import type { OperationName, ParamsOf } from '../../schemas/operations.ts'
import type { createBreakers } from './breaker.ts'
import type { CallOptions, Exchange, UpstreamObserver } from './call-types.ts'
import type { OperationContracts } from './contract/check.ts'
import { passThroughValues } from './contract/depth.ts'
import { isUpstreamError } from './errors.ts'
import { reduced, upstreamFailure } from './reduced-failure.ts'
import { startDeadline, type Deadline } from './transport/deadline.ts'
import { WireFailure } from './transport/exchange.ts'

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

export function createBreakerCall ({ breakers, timeoutMs, contracts, observer, redactFor, post }: BreakerCallOptions) {
  return async function throughBreaker<N extends OperationName> (name: N, params: ParamsOf<N>,
    call: CallOptions): Promise<Exchange> {
    const limitMs = deadlineMs(call.timeoutMs, timeoutMs)
    const caller = call.caller?.id
    let ex: Exchange
    try {
      const admission = call.breaker === false ? null : breakers.admit(name, caller)
      const limit = startDeadline(limitMs, call.signal)
      try {
        ex = await post(name, params, call, limit)
      } catch (thrown) {
        const error = thrown instanceof WireFailure
          ? reduced(upstreamFailure(thrown), redactFor(call, params))
          : thrown
        if (admission !== null) breakers.settleError(name, admission, error, limitMs < timeoutMs, caller)
        throw error
      } finally {
        limit.clear()
      }
      if (admission !== null) breakers.settleAnswer(name, admission, ex, caller)
    } catch (error) {
      if (observer?.exchange !== undefined && isUpstreamError(error)) {
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
      throw error
    }
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
}

/**
 * The deadline of one exchange: the call's, never longer than the client's. A caller passes what is
 * left of its own budget, which may be fractional or spent: rounded up, never below 0.
 */
function deadlineMs (requested: number | undefined, limit: number): number {
  if (requested === undefined || Number.isNaN(requested)) return limit
  return Math.max(0, Math.ceil(Math.min(requested, limit)))
}
