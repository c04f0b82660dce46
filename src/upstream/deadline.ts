// The deadline of one exchange, cancelled as soon as the exchange ends. AbortSignal.timeout() cannot be
// cancelled: each finished call kept its timer, its signals and what they reference alive until it
// fired seconds later, and then built a DOMException for nobody (~8% of the service's CPU in the bench).
// The caller's signal is linked by a listener removed at the end, not by AbortSignal.any(), which
// retains its sources (nodejs/node#54614). One controller per exchange: whether the deadline or the
// caller ended it is a flag, not a second signal.

export interface Deadline {
  /** Aborted by the deadline or by the caller's signal: what the request listens to. */
  readonly signal: AbortSignal
  /** True once the deadline itself passed, to tell a timeout from the caller giving up. */
  readonly timedOut: boolean
  /** Stops the timer and unlinks the caller's signal; call it when the exchange ends. */
  clear (): void
}

class ExchangeDeadline implements Deadline {
  timedOut = false
  readonly #controller = new AbortController()
  readonly #timer: NodeJS.Timeout
  readonly #caller: AbortSignal | undefined

  constructor (ms: number, caller: AbortSignal | undefined) {
    this.#timer = setTimeout(this.#expire, ms)
    this.#caller = caller
    if (caller === undefined) return
    if (caller.aborted) this.#controller.abort(caller.reason)
    // No `{ once: true }`: clear() removes the listener, and abort fires once anyway; the options object
    // costs an allocation and a validation per call.
    else caller.addEventListener('abort', this.#onCallerAbort)
  }

  get signal (): AbortSignal { return this.#controller.signal }

  // Arrow properties: bound once per exchange, the same function for add and remove.
  readonly #expire = (): void => {
    if (this.#controller.signal.aborted) return
    this.timedOut = true
    this.#controller.abort(new DOMException('The upstream deadline passed', 'TimeoutError'))
  }

  readonly #onCallerAbort = (): void => { this.#controller.abort(this.#caller?.reason) }

  clear (): void {
    clearTimeout(this.#timer)
    this.#caller?.removeEventListener('abort', this.#onCallerAbort)
  }
}

export function startDeadline (ms: number, caller?: AbortSignal): Deadline {
  return new ExchangeDeadline(ms, caller)
}
