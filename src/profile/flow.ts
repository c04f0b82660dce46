// A profile request from start to profile: concurrent requests of one client share one load (single-flight),
// inside the `profile` span when tracing is on; each request waits for it on its own, and leaves it when its
// client does (`request.signal`). Every request of a load gets the same LoadedProfile: the profile plugin
// (plugins/app/profile.ts) serializes it and tags it once per load, and those bytes become the client's copy.
import type { FastifyBaseLogger } from 'fastify'
import type { Caller } from '../auth/caller.ts'
import { activeTracer } from '../tracing/tracer.ts'
import type { UpstreamClient } from '../upstream/client.ts'
import { createProfileComposer } from './compose.ts'
import type { LastKnown } from './last-known/last-known.ts'
import { loadProfile, type LoadContext, type LoadedProfile } from './load.ts'
import { NO_PROFILE_OBSERVER, type ProfileObserver } from './observer.ts'
import type { PassportRecords } from './passport-record.ts'
import { createSingleFlight } from './single-flight.ts'
import { profileSpans } from './spans.ts'

/** What the flow needs of the request (a FastifyRequest is one): id, inbound headers, log, its client leaving. */
export interface ProfileRequest {
  id: string
  headers: Record<string, string | string[] | undefined>
  log: FastifyBaseLogger
  /** Aborted when the client goes away (Fastify's `request.signal`); the load ends once every request has left. */
  signal: AbortSignal
}

export function createProfileFlow (options: {
  upstream: UpstreamClient
  budgetMs: number
  lastKnown: LastKnown | null
  /** The caller's passport record and its rules (passport-record.ts). */
  passport: PassportRecords
  /** Told of the sections each answer goes without and of those a copy stands in for (the metrics). */
  observer?: ProfileObserver
}) {
  const { upstream, budgetMs, lastKnown, passport, observer = NO_PROFILE_OBSERVER } = options
  const ctx: LoadContext = { upstream, budgetMs, lastKnown, observer, passport, composer: createProfileComposer() }
  const flights = createSingleFlight<LoadedProfile>()
  // Decided once: with tracing off, `spans` is null and a request makes no span work at all.
  const tracer = activeTracer()
  const spans = tracer === null ? null : profileSpans(tracer)

  return function profileOf (caller: Caller, request: ProfileRequest): Promise<LoadedProfile> {
    // None of the three parts can hold a space (UUID, digits, vendor code): the key is unambiguous.
    const key = `${caller.uid_client} ${caller.login} ${caller.vendor}`
    const span = spans === null ? null : spans.start()
    const joined = flights.join(key, request.id, run => {
      const headers = upstream.forwardedHeaders(request.headers, request.id)
      return span === null
        ? loadProfile(ctx, caller, headers, run, request.log)
        : span.run(() => loadProfile(ctx, caller, headers, run, request.log))
    })
    // The upstream saw the starting request's id: this line ties a joiner's answer to it.
    if (joined.sharedWith !== undefined) {
      request.log.debug({ sharedWith: joined.sharedWith }, 'profile shared with a request in flight')
    }
    // Also aborted once the request has been answered, when the load has settled and leaving is a no-op.
    request.signal.addEventListener('abort', joined.leave)
    const result = span === null ? joined.result : span.follow(joined)
    return observer === NO_PROFILE_OBSERVER ? result : result.then(counted)
  }

  /** Every answer counts the sections it goes without, a request sharing a load too: each was sent degraded. */
  function counted (loaded: LoadedProfile): LoadedProfile {
    for (const section of loaded.degraded) observer.degraded(section)
    return loaded
  }
}
