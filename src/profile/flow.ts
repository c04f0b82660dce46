// A profile request from start to profile: concurrent requests of one client share one load (single-flight),
// inside the `profile` span when tracing is on; each request waits for it on its own, and leaves it when its
// client does (`request.signal`). Each load is turned into its response once (`respond`: the profile plugin serializes
// and tags it, and those bytes become the client's copy), and every request of the load shares that response, not
// the composed profile, which would otherwise live as long as the slowest request of the load.
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

export function createProfileFlow<R extends Pick<LoadedProfile, 'degraded' | 'stale' | 'freshness'>> (options: {
  upstream: UpstreamClient
  budgetMs: number
  lastKnown: LastKnown | null
  /** The caller's passport record and its rules (passport-record.ts). */
  passport: PassportRecords
  /** Told of the sections each answer goes without and of those a copy stands in for (the metrics). */
  observer?: ProfileObserver
  /** A load's response, made once per load and shared by its requests. */
  respond: (caller: Caller, loaded: LoadedProfile) => R
}) {
  const { upstream, budgetMs, lastKnown, passport, observer = NO_PROFILE_OBSERVER, respond } = options
  const ctx: LoadContext = { upstream, budgetMs, lastKnown, observer, passport, composer: createProfileComposer() }
  const flights = createSingleFlight<R>()
  // Decided once: with tracing off, `spans` is null and a request makes no span work at all.
  const tracer = activeTracer()
  const spans = tracer === null ? null : profileSpans(tracer)

  return function profileOf (caller: Caller, request: ProfileRequest): Promise<R> {
    // None of the three parts can hold a space (UUID, digits, vendor code): the key is unambiguous.
    const key = `${caller.uid_client} ${caller.login} ${caller.vendor}`
    const span = spans === null ? null : spans.start()
    const joined = flights.join(key, request.id, run => {
      const headers = upstream.forwardedHeaders(request.headers, request.id)
      const loading = span === null
        ? loadProfile(ctx, caller, headers, run, request.log)
        : span.run(() => loadProfile(ctx, caller, headers, run, request.log))
      return loading.then(loaded => respond(caller, loaded))
    })
    // The upstream saw the starting request's id: this line ties a joiner's answer to it.
    if (joined.sharedWith !== undefined) {
      request.log.debug({ sharedWith: joined.sharedWith }, 'profile shared with a request in flight')
    }
    // Fastify aborts it only when the client leaves before the response is sent (it drops the listener after).
    request.signal.addEventListener('abort', joined.leave)
    const result = span === null ? joined.result : span.follow(joined)
    return observer === NO_PROFILE_OBSERVER ? result : result.then(counted)
  }

  /** Every answer counts the sections it goes without, a request sharing a load too: each was sent degraded. */
  function counted (response: R): R {
    for (const section of response.degraded) observer.degraded(section)
    return response
  }
}
