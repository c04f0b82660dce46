// The deadline of one exchange, cancelled as soon as it ends, which AbortSignal.timeout() cannot be; the caller's
// signal is linked by a listener, not AbortSignal.any() (docs/performance.md, register: Deadline).
import type { Abortable } from './response-reader.ts'

export interface Deadline {
  /** True once the deadline passed or the caller gave up. */
  readonly aborted: boolean
  /** Why: the deadline's TimeoutError or the caller's reason. */
  readonly reason: unknown
  /** True once the deadline itself passed, to tell a timeout from the caller giving up. */
  readonly timedOut: boolean
  /** The hop in flight, ended at once if the deadline passes or the caller gives up; null between hops. */
  watch (hop: Abortable | null): void
  /** Stops the timer and unlinks the caller's signal; call it when the exchange ends. */
  clear (): void
}

class ExchangeDeadline implements Deadline {
  aborted = false
  reason: unknown = undefined
  timedOut = false
  #hop: Abortable | null = null
  readonly #timer: NodeJS.Timeout
  readonly #caller: AbortSignal | undefined

  constructor (ms: number, caller: AbortSignal | undefined) {
    this.#timer = setTimeout(this.#expire, ms)
    this.#caller = caller
    if (caller === undefined) return
    if (caller.aborted) this.#end(caller.reason)
    // No `{ once: true }`: clear() removes the listener anyway, and the options object costs a validation.
    else caller.addEventListener('abort', this.#onCallerAbort)
  }

  watch (hop: Abortable | null): void {
    this.#hop = hop
    if (hop !== null && this.aborted) hop.abort(this.reason)
  }

  #end (reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    this.#hop?.abort(reason)
  }

  // Arrow properties: bound once per exchange, the same function for add and remove.
  readonly #expire = (): void => {
    if (this.aborted) return
    this.timedOut = true
    this.#end(new DOMException('The upstream deadline passed', 'TimeoutError'))
  }

  readonly #onCallerAbort = (): void => { this.#end(this.#caller?.reason) }

  clear (): void {
    clearTimeout(this.#timer)
    this.#caller?.removeEventListener('abort', this.#onCallerAbort)
    this.#hop = null
  }
}

export function startDeadline (ms: number, caller?: AbortSignal): Deadline {
  return new ExchangeDeadline(ms, caller)
}

/**
 * Waits for `running` at most `ms` and while `caller` has not given up; `running` itself goes on to its own end (a
 * breaker probe, which only the upstream's answer decides). `gaveUp(timedOut)`: the failure the waiter gets instead.
 */
export function waitWithin<T> (running: Promise<T>, ms: number, caller: AbortSignal | undefined,
  gaveUp: (timedOut: boolean) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const waiting = new ExchangeDeadline(ms, caller)
    waiting.watch({ abort: () => { reject(gaveUp(waiting.timedOut)) } })
    running.then(resolve, reject).finally(() => { waiting.clear() })
  })
}
