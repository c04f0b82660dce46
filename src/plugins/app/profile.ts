// The profile as a decorator: `fastify.profile`, the flow (src/profile/flow.ts) over the app's upstream client and
// the caller's last-known copies (src/profile/last-known/), and `fastify.passport`, the caller's passport record
// (src/profile/passport-record.ts) for any route over the passport; made once per app, released when it closes.
// The flow answers the profile; this plugin serializes it with the route's schema and tags it, once per load, and
// `reply.sendSerialized` sends those bytes, or `reply.sendNotModified` a 304 when the app holds them already.
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import { Profile } from '../../../schemas/profile.ts'
import type { Caller } from '../../auth/caller.ts'
import type { Config } from '../../config.ts'
import { entityTags } from '../../profile/entity-tag.ts'
import { createProfileFlow, type ProfileRequest } from '../../profile/flow.ts'
import { createLastKnown, type LastKnown } from '../../profile/last-known/last-known.ts'
import { lastKnownMetrics } from '../../profile/last-known/observer.ts'
import type { LoadedProfile } from '../../profile/load.ts'
import { profileMetrics } from '../../profile/observer.ts'
import { createPassportRecords, type PassportRecords } from '../../profile/passport-record.ts'
import { routeSerializer } from '../../serializer.ts'
import { ref } from './shared-schemas/refs.ts'
import { metricsOf } from '../../metrics/registry.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * A profile as a route sends it: its serialized JSON and their entity tag, made once per load and shared read-only
 * by the requests of that load; the headers' facts beside them.
 */
interface ProfileResponse extends Pick<LoadedProfile, 'degraded' | 'stale' | 'age' | 'freshness'> {
  body: Buffer
  /** A strong ETag, quotes included: the same bytes, whatever the encoding they are sent in, give the same tag. */
  etag: string
}

interface ProfileService {
  /** The caller's profile for this request (a FastifyRequest): shared with the requests of the caller in flight. */
  respond (caller: Caller, request: ProfileRequest): Promise<ProfileResponse>
  /** The caller's last good profiles; null when copies are off. */
  readonly lastKnown: LastKnown | null
}

declare module 'fastify' {
  interface FastifyInstance {
    profile: ProfileService
    /** The caller's passport record: CLIENT_NOT_FOUND, another client's record refused, the copy forgotten. */
    passport: PassportRecords
  }
  interface FastifyReply {
    /**
     * Sends JSON already serialized against the route's response schema (UTF-8 bytes): the serializer is not run
     * again, and the type provider's payload type, the object the bytes encode, does not apply.
     */
    sendSerialized (body: Buffer): FastifyReply
    /**
     * 304 Not Modified, without a body (no Content-Type, no Content-Length), keeping the headers already set; the
     * route's `null` schema of the 304 is for the OpenAPI document, nothing is serialized.
     */
    sendNotModified (): FastifyReply
  }
}

interface ProfilePluginOptions {
  config: Config
  /** The clock of last-known copies (epoch milliseconds); tests pass their own. */
  now?: () => number
}

export default fp<ProfilePluginOptions>(async function profilePlugin (fastify, { config, now }) {
  const metrics = metricsOf(fastify)
  const lastKnown = createLastKnown({
    config,
    redis: fastify.redis,
    log: fastify.log,
    ...(metrics === null ? {} : { observer: lastKnownMetrics(metrics.prom, metrics.registry) }),
    ...(now === undefined ? {} : { now })
  })
  const passport = createPassportRecords({ upstream: fastify.upstream, lastKnown, budgetMs: config.PROFILE_TIMEOUT_MS })
  // The route's own serializer: the shared Profile schema it answers with.
  const serialize = routeSerializer(ref(Profile), fastify.getSchemas())
  const tags = entityTags(config)

  /** A load's response, once per load (the flow shares it with every request of the load). */
  function responseOf (caller: Caller, loaded: LoadedProfile): ProfileResponse {
    const body = serialize(loaded.profile)
    // Hashed once: the tag, and the memory store's check whether the copy it holds changed.
    const digest = tags.digest(body)
    const { degraded, stale, age, freshness, toStore } = loaded
    // After the response has gone (the route sends it in the microtasks that follow); the closure holds the bytes
    // only, not the composed profile, which would otherwise outlive the request.
    if (toStore !== undefined && lastKnown !== null) {
      setImmediate(() => { lastKnown.write(caller, toStore, body, digest) })
    }
    return { body, etag: tags.tag(digest), degraded, stale, age, freshness }
  }

  const profileOf = createProfileFlow({
    upstream: fastify.upstream,
    budgetMs: config.PROFILE_TIMEOUT_MS,
    lastKnown,
    passport,
    respond: responseOf,
    ...(metrics === null ? {} : { observer: profileMetrics(metrics.prom, metrics.registry) })
  })

  fastify.decorate('profile', { respond: profileOf, lastKnown })
  fastify.decorate('passport', passport)
  fastify.decorateReply('sendSerialized', function sendSerialized (this: FastifyReply, body: Buffer) {
    return this.type(JSON_TYPE).send(body)
  })
  fastify.decorateReply('sendNotModified', function sendNotModified (this: FastifyReply) {
    return this.code(304).send()
  })
  // After the last request (onClose): nothing writes a copy any more.
  fastify.addHook('onClose', async () => { lastKnown?.close() })
}, { name: 'profile', dependencies: ['metrics', 'redis', 'upstream', 'shared-schemas'] })
