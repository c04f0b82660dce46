// Single-flight: concurrent requests for the same key share one run of the work, so a burst of app
// retries for one client costs the upstream once. A tiny Map of runs in flight rather than
// async-cache-dedupe: nothing is kept once a run settles (a failure is shared by its waiters, never
// cached), and the run can be aborted when its last waiter leaves, which a dedupe cache cannot do.

export interface Joined<T> {
  /** The shared result: every waiter gets the same value, or the same failure. */
  result: Promise<T>
  /** This waiter is gone (its caller disconnected); the run is aborted once every waiter is. */
  leave: () => void
  /** The tag of the waiter that started the run when it was another's; undefined for the starter. */
  sharedWith: string | undefined
}

interface Run<T> {
  result: Promise<T>
  abort: AbortController
  waiters: number
  settled: boolean
  tag: string
}

export function createSingleFlight<T> () {
  const runs = new Map<string, Run<T>>()

  function forget (key: string, run: Run<T>): void {
    if (runs.get(key) === run) runs.delete(key)
  }

  /**
   * Joins the run in flight for `key`, or starts `work` as a new one. The work gets the run's own
   * controller, never a caller's signal: one caller leaving must not end the answer the others wait for.
   * It is aborted once every waiter has left; the work may abort it itself (a budget of its own).
   */
  function join (key: string, tag: string, work: (run: AbortController) => Promise<T>): Joined<T> {
    let run = runs.get(key)
    const sharedWith = run?.tag
    if (run === undefined) {
      const abort = new AbortController()
      const started: Run<T> = { result: undefined as unknown as Promise<T>, abort, waiters: 0, settled: false, tag }
      started.result = work(abort).finally(() => {
        started.settled = true
        forget(key, started)
      })
      runs.set(key, started)
      run = started
    }
    const joined = run
    joined.waiters++
    let left = false
    const leave = () => {
      if (left || joined.settled) return
      left = true
      if (--joined.waiters > 0) return
      // Nobody waits any more: stop the upstream calls, and let the next request start afresh
      // rather than join a run that is being torn down.
      forget(key, joined)
      joined.abort.abort()
    }
    return { result: joined.result, leave, sharedWith }
  }

  return {
    join,
    /** Runs in flight now. */
    get size () { return runs.size }
  }
}
