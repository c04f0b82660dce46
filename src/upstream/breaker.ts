// A circuit breaker per operation: an operation down for everyone is refused at once instead of costing every
// caller its deadline (the one retry is exchange.ts's). cockatiel's SamplingBreaker semantics, with a window that
// truly slides and no promise of its own (docs/performance.md, register: Circuit breaker).
import { hash } from 'node:crypto'
import { isUpstreamError, upstreamError, type FailureReason, type UpstreamError } from './errors.ts'
import { operationNames, type OperationName } from '../../schemas/operations.ts'

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

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = {
  failureRatePercent: 50, minCalls: 20, windowMs: 10_000, halfOpenAfterMs: 10_000
}

/**
 * What an ended call says about the operation, for every caller:
 * - `failure`: unavailable: no answer (refused or reset, a timeout that had the full deadline), a 5xx, or a redirect
 *   we cannot follow (chosen by path, never by record, so a bad one is every caller's misconfiguration).
 * - `answered`: it answered, even if unusable for this record (an undocumented 4xx, not JSON, a contract break):
 *   one client's broken record must never become everyone's outage. A probe that meets one closes the breaker; a
 *   whole answer counts as a success (one cut off at the size cap, before it was whole, counts neither way).
 * - `neutral`: the caller's own limit (`aborted`, a timeout cut short by the budget), or the breaker's refusal. A
 *   probe that ends so proved nothing: it frees the probe slot and neither closes nor reopens the breaker (a probe
 *   runs to its answer under the client's own deadline whoever waits for it, client.ts, so it rarely ends so).
 */
type Verdict = 'failure' | 'answered' | 'neutral'

/** Reasons that say the operation is unavailable; `status` is decided by the status (5xx) instead. */
const UNAVAILABLE = new Set<string>(
  ['connect', 'timeout', 'redirect_refused', 'redirect_loop', 'redirect_invalid'] satisfies FailureReason[]
)
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
const failedResponse = (result: { outcome: string, status: number }) =>
  result.outcome === 'status' && isServerError(result.status)

/**
 * The most failures one caller the operation has served counts for in the window: half of what could open the
 * breaker on its own (rate x min-calls), so a client failing at its full rate never opens it, even beside other
 * clients failing a quarter of their own calls (docs/security.md, Circuit breakers). 5 with the defaults. A caller
 * it never served counts for one failure: its failures may be its own record's.
 */
export function callerShare (
  { failureRatePercent, minCalls }: Pick<BreakerOptions, 'failureRatePercent' | 'minCalls'>
): number {
  return Math.max(1, Math.floor(failureRatePercent * minCalls / 200))
}

/** Failed probes of this many callers the operation served, in one round, open a half-open breaker again. */
const PROBE_CALLERS = 2

/**
 * Failed probes of this many callers, served or not, in one round, open a half-open breaker again: the fewest
 * failures that open it at its minimum volume (11 with the defaults), at least PROBE_CALLERS. Callers the operation
 * never served count for one failure each in the window, so it takes about as many of them to open it.
 */
export function reopeningProbes (
  { failureRatePercent, minCalls }: Pick<BreakerOptions, 'failureRatePercent' | 'minCalls'>
): number {
  return Math.max(PROBE_CALLERS, Math.floor(failureRatePercent * minCalls / 100) + 1)
}

/** How many callers each operation remembers as served, at most: the latest, a digest each (about 0.2 MB). */
export const SERVED_CALLERS = 4096

/**
 * The callers an operation served (answered with their record or its documented not-found) lately: two generations
 * of SERVED_CALLERS / 2, the older dropped whole when the newer is full, so remembering costs no more than a set's
 * add (a map kept in recency order cost several microseconds a call in evictions). A failure of a caller it served
 * says the operation changed; one of a caller whose calls have only ever failed may be that caller's own record.
 */
class ServedCallers {
  #current = new Set<string>()
  #previous = new Set<string>()

  has (key: string | undefined): boolean {
    return key !== undefined && (this.#current.has(key) || this.#previous.has(key))
  }

  add (key: string): void {
    if (this.#current.has(key)) return
    if (this.#current.size >= SERVED_CALLERS / 2) {
      this.#previous = this.#current
      this.#current = new Set()
    }
    this.#current.add(key)
  }
}

/**
 * The failure rate over a sliding window of time, in max(5, ceil(window / 1 s)) buckets: every bucket older than
 * the window is emptied however long the quiet was (cockatiel's moved on one bucket per call, so a failure could
 * outlive its window by hours). The rate counts once the window holds `minCalls` calls. A failure of a named caller
 * beyond its share of the window (callerShare if the operation served it, else one) is not counted at all; a call
 * with no caller counts as its own.
 */
export class FailureWindow {
  readonly #failuresIn: Int32Array
  readonly #successesIn: Int32Array
  /** The counted failures of each named caller, per bucket and over the window. */
  readonly #callersIn: Array<Map<string, number> | undefined>
  readonly #callerFailures = new Map<string, number>()
  readonly #share: number
  readonly #bucketMs: number
  readonly #threshold: number
  readonly #minCalls: number
  readonly #now: () => number
  /** The bucket time (time / bucket size) of the newest bucket; calls from a clock set back land in it. */
  #newest = -Infinity
  #failures = 0
  #successes = 0

  constructor (options: BreakerOptions, now: () => number = Date.now) {
    const { failureRatePercent, minCalls, windowMs } = options
    const count = Math.max(5, Math.ceil(windowMs / 1000))
    this.#failuresIn = new Int32Array(count)
    this.#successesIn = new Int32Array(count)
    this.#callersIn = new Array<Map<string, number> | undefined>(count)
    this.#share = callerShare(options)
    this.#bucketMs = Math.max(1, Math.round(windowMs / count))
    this.#threshold = failureRatePercent / 100
    this.#minCalls = minCalls
    this.#now = now
  }

  /**
   * Records one call; for a failure, true when the window now says the operation is down. `caller`: an opaque key
   * of who the call was for (never the identity itself); undefined counts as a caller of its own. `served`: the
   * operation has served that caller, whose failures then count up to its share, else once.
   */
  record (failed: boolean, caller?: string, served = false): boolean {
    const at = Math.floor(this.#now() / this.#bucketMs)
    const count = this.#failuresIn.length
    if (at > this.#newest) {
      // Empties every bucket time passed since the newest, at most the whole window.
      if (at - this.#newest >= count) this.#clear()
      else for (let t = this.#newest + 1; t <= at; t++) this.#empty(t % count)
      this.#newest = at
    }
    const bucket = this.#newest % count
    if (!failed) {
      this.#successesIn[bucket]!++
      this.#successes++
      return false
    }
    if (caller !== undefined) {
      const counted = this.#callerFailures.get(caller) ?? 0
      // Past its share, one caller's failures say no more about the operation than they already did.
      if (counted >= (served ? this.#share : 1)) return false
      this.#callerFailures.set(caller, counted + 1)
      const inBucket = (this.#callersIn[bucket] ??= new Map())
      inBucket.set(caller, (inBucket.get(caller) ?? 0) + 1)
    }
    this.#failuresIn[bucket]!++
    this.#failures++
    const total = this.#failures + this.#successes
    return total >= this.#minCalls && this.#failures > this.#threshold * total
  }

  reset (): void {
    this.#clear()
  }

  #empty (bucket: number): void {
    this.#failures -= this.#failuresIn[bucket]!
    this.#successes -= this.#successesIn[bucket]!
    this.#failuresIn[bucket] = 0
    this.#successesIn[bucket] = 0
    const callers = this.#callersIn[bucket]
    if (callers === undefined || callers.size === 0) return
    for (const [caller, n] of callers) {
      const left = this.#callerFailures.get(caller)! - n
      if (left > 0) this.#callerFailures.set(caller, left)
      else this.#callerFailures.delete(caller)
    }
    callers.clear()
  }

  #clear (): void {
    this.#failuresIn.fill(0)
    this.#successesIn.fill(0)
    for (const callers of this.#callersIn) callers?.clear()
    this.#callerFailures.clear()
    this.#failures = 0
    this.#successes = 0
  }
}

/**
 * One operation's breaker: closed, open since `openedAt`, or half-open. Half-open admits one probe at a time and
 * at most one per caller in a round of `halfOpenAfterMs` from `roundStart`: a probe's answer closes the breaker;
 * failed probes of PROBE_CALLERS callers the operation served open it again, or of reopeningProbes callers of any
 * kind, so no one caller's record, nor a handful of records that only ever failed, keeps it open.
 */
interface OperationBreaker {
  state: BreakerState
  openedAt: number
  /** Bumped on every change and every probe: a call that ends after one (an outdated probe) changes nothing. */
  epoch: number
  window: FailureWindow
  /** The callers this operation served lately. */
  served: ServedCallers
  /** Half-open: a probe is out. */
  probing: boolean
  roundStart: number
  /** Half-open: the probes that failed this round (each another caller's), those of served callers, their keys. */
  failedProbes: number
  servedFailedProbes: number
  failedProbers: Set<string>
}

/** A `breaker_open` refusal, with the seconds until a probe may go through (its answer's Retry-After). */
type BreakerRefusal = UpstreamError & { retryAfterS: number }

/** What admit() hands a call: NOT_PROBE, or the epoch of the probe it is (a probe outdated by then changes nothing). */
export type Admission = number
export const NOT_PROBE: Admission = -1

/**
 * Who a call is for, as the breaker keeps it: a SHA-256 of the caller's id, made once per caller (breaker-call.ts), so
 * the breaker is handed only this key. The identity itself is never stored, logged or a label.
 */
export const callerKey = (id: string): string => hash('sha256', id, 'base64url')

/** Whether an answer served its caller: the caller's record, or the operation's documented not-found. */
export const isServedOutcome = (outcome: string): boolean => outcome === 'ok' || outcome === 'not_found'

export interface Breakers {
  /**
   * Admits one call of the operation, or throws `breaker_open` (503 UPSTREAM_UNAVAILABLE, a BreakerRefusal)
   * while its breaker is open or its probe is out. Every admitted call is settled exactly once, with the same
   * `caller` (callerKey of the identity the call is for; undefined: a caller of its own).
   */
  admit (operation: OperationName, caller?: string): Admission
  /** The call threw; `budgeted`: its deadline was cut short by the caller's budget. */
  settleError (operation: OperationName, admission: Admission, error: unknown, budgeted: boolean, caller?: string): void
  /** The call returned an answer. */
  settleResponse (
    operation: OperationName, admission: Admission, response: { outcome: string, status: number }, caller?: string
  ): void
  /** Every operation's state now (an open breaker stays `open` until a call comes to probe it). */
  states (): Record<OperationName, BreakerState>
}

/** `now`: the clock, Date.now but in tests. */
export function createBreakers (
  options: BreakerOptions,
  onChange?: (operation: OperationName, state: BreakerState) => void,
  now: () => number = Date.now
): Breakers {
  const reopenCallers = reopeningProbes(options)
  const breakers = new Map<OperationName, OperationBreaker>()
  for (const operation of operationNames) {
    breakers.set(operation, {
      state: 'closed',
      openedAt: 0,
      epoch: 0,
      window: new FailureWindow(options, now),
      served: new ServedCallers(),
      probing: false,
      roundStart: 0,
      failedProbes: 0,
      servedFailedProbes: 0,
      failedProbers: new Set()
    })
  }

  function become (operation: OperationName, breaker: OperationBreaker, state: BreakerState): void {
    breaker.state = state
    breaker.epoch++
    breaker.probing = false
    if (state === 'open') breaker.openedAt = now()
    if (state === 'half_open') newRound(breaker)
    onChange?.(operation, state)
  }

  function newRound (breaker: OperationBreaker): void {
    breaker.roundStart = now()
    breaker.failedProbes = 0
    breaker.servedFailedProbes = 0
    breaker.failedProbers.clear()
  }

  /**
   * A call that failed the operation, of the caller `key`: a probe's counts toward reopening, others count in the
   * window, each as much as the operation's having served that caller says.
   */
  function failed (operation: OperationName, breaker: OperationBreaker, admission: Admission,
    key: string | undefined): void {
    const served = breaker.served.has(key)
    if (admission === NOT_PROBE) {
      if (breaker.window.record(true, key, served) && breaker.state !== 'open') become(operation, breaker, 'open')
      return
    }
    if (breaker.epoch !== admission || !breaker.probing) return
    breaker.window.record(true, key, served)
    breaker.failedProbes++
    if (served) breaker.servedFailedProbes++
    if (key !== undefined) breaker.failedProbers.add(key)
    if (breaker.servedFailedProbes >= PROBE_CALLERS || breaker.failedProbes >= reopenCallers) {
      become(operation, breaker, 'open')
      return
    }
    // Still half-open: the next probe is another caller's.
    breaker.probing = false
    breaker.epoch++
  }

  /** A probe that ended without an answer: the next probe may go, and nothing is counted either way. */
  function released (breaker: OperationBreaker, admission: Admission): void {
    if (admission === NOT_PROBE || breaker.epoch !== admission || !breaker.probing) return
    breaker.probing = false
    breaker.epoch++
  }

  /** A call the upstream answered: a probe's closes the breaker on a fresh window. */
  function succeeded (operation: OperationName, breaker: OperationBreaker, admission: Admission): void {
    if (admission === NOT_PROBE) {
      breaker.window.record(false)
      return
    }
    if (breaker.epoch !== admission || !breaker.probing) return
    breaker.window.reset()
    breaker.window.record(false)
    become(operation, breaker, 'closed')
  }

  /** Refused until `until` (at least a second: a probe out decides soon). */
  function refused (operation: OperationName, until: number): BreakerRefusal {
    const refused = { operation, status: null, redirects: [], duration_ms: 0 }
    const error = upstreamError('breaker_open', refused) as BreakerRefusal
    error.retryAfterS = Math.max(1, Math.ceil((until - now()) / 1000))
    error.headers = { 'retry-after': String(error.retryAfterS) }
    return error
  }

  function admit (operation: OperationName, key?: string): Admission {
    const breaker = breakers.get(operation)!
    if (breaker.state === 'closed') return NOT_PROBE
    if (breaker.state === 'open') {
      const until = breaker.openedAt + options.halfOpenAfterMs
      if (now() < until) throw refused(operation, until)
      become(operation, breaker, 'half_open')
    }
    // While a probe is out, others are refused, never queued behind it deaf to their own deadlines.
    if (breaker.probing) throw refused(operation, 0)
    if (now() - breaker.roundStart >= options.halfOpenAfterMs) newRound(breaker)
    // A caller whose probe failed this round waits for another caller's probe, or the next round.
    if (key !== undefined && breaker.failedProbers.has(key)) {
      throw refused(operation, breaker.roundStart + options.halfOpenAfterMs)
    }
    breaker.probing = true
    breaker.epoch++
    return breaker.epoch
  }

  function settleError (
    operation: OperationName, admission: Admission, error: unknown, budgeted: boolean, caller?: string
  ): void {
    const breaker = breakers.get(operation)!
    const probe = admission !== NOT_PROBE
    // An answer too large to read counts neither way when closed and closes a half-open breaker (it answered);
    // only the upstream decides a probe: one that ended without an answer (the caller's own limit) is released, or
    // a caller could abort probes of a recovered upstream to hold the breaker open.
    const verdict = verdictOf(error, budgeted)
    if (verdict === 'failure') failed(operation, breaker, admission, caller)
    else if (verdict === 'neutral') released(breaker, admission)
    else if (probe) succeeded(operation, breaker, admission)
  }

  function settleResponse (
    operation: OperationName, admission: Admission, response: { outcome: string, status: number }, caller?: string
  ): void {
    const breaker = breakers.get(operation)!
    // Answers are never cut short by a budget: their outcome alone decides.
    if (failedResponse(response)) {
      failed(operation, breaker, admission, caller)
      return
    }
    if (caller !== undefined && isServedOutcome(response.outcome)) breaker.served.add(caller)
    succeeded(operation, breaker, admission)
  }

  function states (): Record<OperationName, BreakerState> {
    const out = {} as Record<OperationName, BreakerState>
    for (const [operation, breaker] of breakers) out[operation] = breaker.state
    return out
  }

  return { admit, settleError, settleResponse, states }
}

/** Breaker states as the gauge reports them: 0 closed, 1 half-open, 2 open. */
const BREAKER_STATE_VALUES: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 }

/** The breakers' gauge, read when scraped from `states` (the client's `breakerStates`). */
export function breakerMetrics ({ Gauge }: Pick<typeof import('prom-client'), 'Gauge'>,
  registry: import('prom-client').Registry, states: () => Record<OperationName, BreakerState>): void {
  // eslint-disable-next-line no-new -- prom-client metrics live in the registry they are given
  new Gauge({
    name: 'bff_upstream_breaker_state',
    help: 'Circuit breaker state per upstream operation: 0 closed, 1 half-open, 2 open.',
    labelNames: ['operation'] as const,
    registers: [registry],
    collect () {
      for (const [operation, state] of Object.entries(states())) this.set({ operation }, BREAKER_STATE_VALUES[state])
    }
  })
}
