// The upstream work of one profile (docs/api.md, the profile): the passport lookup for the token's client,
// then the discount and contractor lookups in parallel, all under one time budget. When fresh data
// cannot be had, the client's last-known copy stands in (last-known/), within the same budget.
import type { FastifyBaseLogger } from 'fastify'
import { degradableSections, type DegradedSection, type Profile, type StaleSection } from '../../schemas/profile.ts'
import type { Caller } from '../auth/caller.ts'
import type { CallOptions, TracingHeaders, UpstreamClient } from '../upstream/client.ts'
import { isUpstreamError } from '../upstream/errors.ts'
import { assemble, contractorSection, discountSection, type DealerSections, type ProfileComposer } from './compose.ts'
import { oldestOf } from './last-known/entry.ts'
import type { LastKnown, LastKnownEntry, SectionTimes } from './last-known/last-known.ts'
import type { ProfileObserver } from './observer.ts'
import { upstreamCallerOf, type PassportRecord, type PassportRecords } from './passport-record.ts'

/** Where an answer's data came from: the upstream, partly the copy, or all a copy within PROFILE_FRESH_S. */
type Freshness = 'fresh' | 'stale' | 'cached'

/** A profile ready to send: shared read-only by every request of one single-flight run. */
export interface LoadedProfile {
  profile: Profile
  /** The sections the answer goes without (the profile's own `degraded`); empty when none. */
  degraded: readonly DegradedSection[]
  /** The sections a last-known copy stands in for (the profile's own `stale`); empty when none. */
  stale: readonly StaleSection[]
  /** The Age header: seconds since the oldest section taken from a copy was fetched; undefined when none was. */
  age: number | undefined
  freshness: Freshness
  /** The sections to keep as the caller's copy, with when each was fetched; undefined to keep none. */
  toStore: SectionTimes | undefined
}

export interface LoadContext {
  upstream: UpstreamClient
  composer: ProfileComposer
  budgetMs: number
  /** Null when last-known copies are off. */
  lastKnown: LastKnown | null
  /** Told of each section a copy stands in for. */
  observer: ProfileObserver
  /** The caller's passport record and its rules. */
  passport: PassportRecords
}

/** Why each dealer section failed (a failure reason), for the sections that did. */
type DealerFailures = Partial<Record<DegradedSection, string>>

/**
 * Loads one profile under a budget that starts now. `run` is the single-flight run's own controller:
 * aborted when every waiter has left, and here by the budget, so the calls watch one signal.
 */
export async function loadProfile (ctx: LoadContext, caller: Caller, headers: TracingHeaders,
  run: AbortController, log: FastifyBaseLogger): Promise<LoadedProfile> {
  const { upstream, budgetMs, lastKnown, observer } = ctx
  const started = performance.now()
  const remaining = () => Math.floor(budgetMs - (performance.now() - started))
  // A timer, not AbortSignal.timeout(): Node 24 retains composite timeout signals (docs/performance.md).
  const timer = setTimeout(() => {
    run.abort(new DOMException('The profile budget ran out', 'TimeoutError'))
  }, budgetMs)
  timer.unref()
  const signal = run.signal
  // Who the calls are for, one breaker key for the three: the breakers bound this caller's share by it.
  const upstreamCaller = upstreamCallerOf(caller)
  try {
    // Only with PROFILE_FRESH_S: otherwise the fresh path never waits on the store.
    let copy: LastKnownEntry | undefined
    if (lastKnown !== null && lastKnown.freshMs > 0) {
      copy = await lastKnown.read(caller, remaining())
      if (copy !== undefined && lastKnown.fresh(copy)) return fromCopy(lastKnown, observer, copy, 'fresh_window')
    }
    let passport
    try {
      // Under the run's signal, which the budget aborts.
      passport = await ctx.passport.lookup(caller, { headers, signal, upstreamCaller })
    } catch (error) {
      // Only an upstream failure; a bug of ours is not hidden behind yesterday's profile.
      if (lastKnown === null || !isUpstreamError(error)) throw error
      copy ??= await lastKnown.read(caller, remaining())
      const servable = copy === undefined ? undefined : lastKnown.servable(copy)
      if (servable?.passport === undefined) throw error
      log.warn({ code: error.code, reason: error.reason, upstream: error.exchange },
        'profile answered from the last-known copy')
      return fromCopy(lastKnown, observer, servable, error.reason)
    }
    // CLIENT_NOT_FOUND, or another client's record refused: the copy is forgotten and nothing stands in for it.
    let record: PassportRecord | undefined = ctx.passport.accept(caller, passport)
    passport = undefined
    // The dealers get what is left of the budget; when nothing is, they fail at once and are degraded.
    const dealers = loadDealerSections(upstream, caller.uid_client,
      { headers, signal, timeoutMs: Math.max(1, remaining()), caller: upstreamCaller }, log)
    // Composed while the dealer calls are out, and the passport answer let go: what the profile does not keep of it
    // dies young instead of living through the dealer calls (every await keeps this function's variables).
    const part = ctx.composer.passportPart(record)
    record = undefined
    const { sections, failures } = await dealers
    if (lastKnown === null) return loaded(assemble(part, sections, []), 'fresh')

    const now = lastKnown.now()
    const toStore: SectionTimes = { passport: now }
    const stale: StaleSection[] = []
    let oldest = now
    if (sections.degraded.length > 0) {
      copy ??= await lastKnown.read(caller, remaining())
      const servable = copy === undefined ? {} : lastKnown.servable(copy)
      sections.degraded = sections.degraded.filter(section => {
        const copied = servable[section]
        if (copied === undefined) return true
        fill(sections, section, copied.value)
        toStore[section] = copied.at
        oldest = Math.min(oldest, copied.at)
        stale.push(section)
        observer.stale(section, failures[section] ?? 'unknown')
        return false
      })
    }
    if (sections.degraded.indexOf('discount') === -1) toStore.discount ??= now
    if (sections.degraded.indexOf('contractor') === -1) toStore.contractor ??= now
    return stale.length === 0
      ? loaded(assemble(part, sections, stale), 'fresh', undefined, toStore)
      : loaded(assemble(part, sections, stale), 'stale', ageOf(now, oldest), toStore)
  } finally {
    clearTimeout(timer)
  }
}

function fill (sections: DealerSections, section: DegradedSection, value: unknown): void {
  if (section === 'discount') sections.discount = value as DealerSections['discount']
  else sections.contractor = value as DealerSections['contractor']
}

function loaded (profile: Profile, freshness: Freshness, age?: number, toStore?: SectionTimes): LoadedProfile {
  return {
    profile,
    degraded: profile.degraded,
    stale: profile.stale,
    age,
    freshness,
    toStore
  }
}

/** Whole seconds from `at` to `now`, never negative (a clock step back). */
const ageOf = (now: number, at: number) => Math.max(0, Math.floor((now - at) / 1000))

/** The profile from a copy: its passport part always, each dealer section it has (else null and degraded). */
function fromCopy (lastKnown: LastKnown, observer: ProfileObserver, copy: LastKnownEntry,
  reason: string): LoadedProfile {
  const part = copy.passport!.value
  const sections: DealerSections = { discount: null, contractor: null, degraded: [] }
  const stale: StaleSection[] = ['passport']
  for (const section of degradableSections) {
    const copied = copy[section]
    if (copied === undefined) {
      sections.degraded.push(section)
    } else {
      fill(sections, section, copied.value)
      stale.push(section)
    }
  }
  for (const section of stale) observer.stale(section, reason)
  // Within PROFILE_FRESH_S the copy is the answer, not a stand-in: nothing is named stale, Age still says how old.
  const age = ageOf(lastKnown.now(), oldestOf(copy, stale))
  return reason === 'fresh_window'
    ? loaded(assemble(part, sections, []), 'cached', age)
    : loaded(assemble(part, sections, stale), 'stale', age)
}

/** Discount and contractor in parallel; a failure of either is a degraded section, never an error. */
async function loadDealerSections (upstream: UpstreamClient, uid: string, options: CallOptions,
  log: FastifyBaseLogger): Promise<{ sections: DealerSections, failures: DealerFailures }> {
  const params = { uid_client: uid }
  const [discount, contractor] = await Promise.allSettled([
    upstream.call('dealer.discount', params, options),
    upstream.call('dealer.client', params, options)
  ])
  const sections: DealerSections = { discount: null, contractor: null, degraded: [] }
  const failures: DealerFailures = {}
  if (discount.status === 'fulfilled') {
    if (discount.value.kind === 'ok') sections.discount = discountSection(discount.value.value)
  } else {
    sections.degraded.push('discount')
    failures.discount = logDegraded(log, 'discount', discount.reason)
  }
  if (contractor.status === 'fulfilled') {
    if (contractor.value.kind === 'ok') sections.contractor = contractorSection(contractor.value.value)
  } else {
    sections.degraded.push('contractor')
    failures.contractor = logDegraded(log, 'contractor', contractor.reason)
  }
  return { sections, failures }
}

/** Logs a failed section; answers the failure's reason (a metric label). */
function logDegraded (log: FastifyBaseLogger, section: string, error: unknown): string {
  if (isUpstreamError(error)) {
    log.warn({ section, code: error.code, reason: error.reason, upstream: error.exchange }, 'profile section degraded')
    return error.reason
  }
  log.error({ section, err: error }, 'profile section degraded by an unexpected error')
  return 'unexpected'
}
