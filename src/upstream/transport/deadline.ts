// The deadline of one exchange, cancelled as soon as the exchange ends. AbortSignal.timeout() cannot be
// cancelled: each finished call kept its timer, its signals and what they reference alive until it
// fired seconds later, and then built a DOMException for nobody (~8% of the service's CPU in the bench).
// The caller's signal is linked by a listener removed at the end, not by AbortSignal.any(), which
// retains its sources (nodejs/node#54614). No signal of its own: the hop in flight is ended by a direct
// call (answer-reader.ts), and whether the deadline or the caller ended it is a flag.
import type { Abortable } from './answer-reader.ts'

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
    // No `{ once: true }`: clear() removes the listener, and abort fires once anyway; the options object
    // costs an allocation and a validation per call.
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
