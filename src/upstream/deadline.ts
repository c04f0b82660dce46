// The deadline of one exchange, cancelled as soon as the exchange ends. AbortSignal.timeout() cannot be
// cancelled: each finished call kept its timer, its signals and what they reference alive until it
// fired seconds later, and then built a DOMException for nobody (~8% of the service's CPU in the bench).
// The caller's signal is linked by a listener removed at the end, not by AbortSignal.any(), which
// retains its sources (nodejs/node#54614).

export interface Deadline {
  /** Aborted by the deadline or by the caller's signal: what the request listens to. */
  signal: AbortSignal
  /** Aborted by the deadline alone, to tell a timeout from the caller giving up. */
  deadline: AbortSignal
  /** Stops the timer and unlinks the caller's signal; call it when the exchange ends. */
  clear (): void
}

export function startDeadline (ms: number, caller?: AbortSignal): Deadline {
  const timed = new AbortController()
  const either = new AbortController()
  const timer = setTimeout(() => {
    const reason = new DOMException('The upstream deadline passed', 'TimeoutError')
    timed.abort(reason)
    either.abort(reason)
  }, ms)
  const onCallerAbort = () => { either.abort(caller?.reason) }
  if (caller !== undefined) {
    if (caller.aborted) onCallerAbort()
    else caller.addEventListener('abort', onCallerAbort, { once: true })
  }
  return {
    signal: either.signal,
    deadline: timed.signal,
    clear () {
      clearTimeout(timer)
      caller?.removeEventListener('abort', onCallerAbort)
    }
  }
}
