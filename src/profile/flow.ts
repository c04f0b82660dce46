// A profile request from start to answer: concurrent requests of one client share one load
// (single-flight), inside the `profile` span when tracing is on; each request still gets its own answer.
// The profile is serialized once per load: the same bytes are every waiter's answer and the client's copy, and
// their keyed digest (entity-tag.ts) is the answer's ETag.
import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { Profile } from '../../schemas/profile.ts'
import type { Caller } from '../auth/caller.ts'
import { activeTracer } from '../tracing/tracer.ts'
import type { UpstreamClient } from '../upstream/client.ts'
import { createProfileComposer } from './compose.ts'
import type { EntityTags } from './entity-tag.ts'
import type { LastKnown } from './last-known/last-known.ts'
import { loadProfile, type LoadContext, type LoadedProfile } from './load.ts'
import { NO_PROFILE_OBSERVER, type ProfileObserver } from './observer.ts'
import { createSingleFlight } from './single-flight.ts'
import { profileSpans } from './spans.ts'

/**
 * A loaded profile as its serialized JSON and their entity tag, shared read-only by the requests of one load. Not the
 * composed profile: held until every request of the load has closed, it would keep that tree and what it shares of
 * the upstream answers alive past the serialization.
 */
export interface AnsweredProfile extends Pick<LoadedProfile, 'degraded' | 'stale' | 'age' | 'freshness'> {
  body: Buffer
  /** A strong ETag, quotes included: the same bytes, whatever the encoding they are sent in, give the same tag. */
  etag: string
}

/** What the flow needs of the request: its id, inbound headers, log, and the answer it may abandon. */
export interface ProfileRequest {
  id: string
  headers: Record<string, string | string[] | undefined>
  log: FastifyBaseLogger
  res: ServerResponse
}

export function createProfileFlow (options: {
  upstream: UpstreamClient
  budgetMs: number
  lastKnown: LastKnown | null
  /** The route's serializer of a Profile (the answer's schema), to UTF-8 bytes. */
  serialize: (profile: Profile) => Buffer
  /** The deployment's keyed digest and tag of those bytes. */
  tags: EntityTags
  /** Told of the sections each answer goes without and of those a copy stands in for (the metrics). */
  observer?: ProfileObserver
}) {
  const { upstream, budgetMs, lastKnown, serialize, tags, observer = NO_PROFILE_OBSERVER } = options
  const ctx: LoadContext = { upstream, budgetMs, lastKnown, observer, composer: createProfileComposer() }
  const flights = createSingleFlight<AnsweredProfile>()
  // Decided once: with tracing off, `spans` is null and a request makes no span work at all.
  const tracer = activeTracer()
  const spans = tracer === null ? null : profileSpans(tracer)

  async function answer (caller: Caller, loading: Promise<LoadedProfile>): Promise<AnsweredProfile> {
    const loaded = await loading
    const body = serialize(loaded.profile)
    const keep = loaded.keep
    // Hashed once: the tag, and the memory store's check whether the copy it holds changed.
    const digest = tags.digest(body)
    // After the answer has gone (the route sends it in the microtasks that follow), once per load; the closure holds
    // the bytes only, not the composed profile, which would otherwise outlive the request.
    if (keep !== undefined && lastKnown !== null) setImmediate(() => { lastKnown.write(caller, keep, body, digest) })
    const { degraded, stale, age, freshness } = loaded
    return { body, etag: tags.tag(digest), degraded, stale, age, freshness }
  }

  return function profileOf (caller: Caller, request: ProfileRequest): Promise<AnsweredProfile> {
    // None of the three parts can hold a space (UUID, digits, vendor code): the key is unambiguous.
    const key = `${caller.uid_client} ${caller.login} ${caller.vendor}`
    const span = spans === null ? null : spans.start()
    const joined = flights.join(key, request.id, run => {
      const headers = upstream.forwardedHeaders(request.headers, request.id)
      return answer(caller, span === null
        ? loadProfile(ctx, caller, headers, run, request.log)
        : span.run(() => loadProfile(ctx, caller, headers, run, request.log)))
    })
    // The upstream saw the starting request's id: this line ties a joiner's answer to it.
    if (joined.sharedWith !== undefined) {
      request.log.debug({ sharedWith: joined.sharedWith }, 'profile shared with a request in flight')
    }
    const res = request.res
    // on(), not once(): the answer closes once, and once() wraps the listener in one more closure.
    res.on('close', () => { if (!res.writableFinished) joined.leave() })
    const result = span === null ? joined.result : span.follow(joined)
    return observer === NO_PROFILE_OBSERVER ? result : result.then(counted)
  }

  /** Every answer counts the sections it goes without, a request sharing a load too: each was sent degraded. */
  function counted (answered: AnsweredProfile): AnsweredProfile {
    for (const section of answered.degraded) observer.degraded(section)
    return answered
  }
}
