// The profile as a decorator: `fastify.profile`, the flow (src/profile/flow.ts) over the app's upstream client
// and the caller's last-known copies (src/profile/last-known/), made once per app and released when it closes.
// The route authenticates, asks it and sets headers; the flow serializes once per load with the route's schema,
// and `reply.sendSerialized` sends those bytes, or `reply.sendNotModified` a 304 when the app holds them already.
import fp from 'fastify-plugin'
import type { FastifyReply } from 'fastify'
import { Profile } from '../../../schemas/profile.ts'
import type { Caller } from '../../auth/caller.ts'
import type { Config } from '../../config.ts'
import { entityTags } from '../../profile/entity-tag.ts'
import { createProfileFlow, type AnsweredProfile, type ProfileRequest } from '../../profile/flow.ts'
import { createLastKnown, type LastKnown } from '../../profile/last-known/last-known.ts'
import { lastKnownMetrics } from '../../profile/last-known/observer.ts'
import { profileMetrics } from '../../profile/observer.ts'
import { routeSerializer } from '../../serializer.ts'
import { ref } from './shared-schemas/refs.ts'
import { metricsOf } from '../../metrics/registry.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

interface ProfileService {
  /** The caller's profile for this request: shared with the requests of the same caller in flight. */
  answer (caller: Caller, request: ProfileRequest): Promise<AnsweredProfile>
  /** The caller's last good profiles; null when copies are off. */
  readonly lastKnown: LastKnown | null
}

declare module 'fastify' {
  interface FastifyInstance {
    profile: ProfileService
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
  const answer = createProfileFlow({
    upstream: fastify.upstream,
    budgetMs: config.PROFILE_TIMEOUT_MS,
    lastKnown,
    // The route's own serializer: the shared Profile schema it answers with.
    serialize: routeSerializer(ref(Profile), fastify.getSchemas()),
    tags: entityTags(config),
    ...(metrics === null ? {} : { observer: profileMetrics(metrics.prom, metrics.registry) })
  })
  fastify.decorate('profile', { answer, lastKnown })
  fastify.decorateReply('sendSerialized', function sendSerialized (this: FastifyReply, body: Buffer) {
    return this.type(JSON_TYPE).send(body)
  })
  fastify.decorateReply('sendNotModified', function sendNotModified (this: FastifyReply) {
    return this.code(304).send()
  })
  // After the last request (onClose): nothing writes a copy any more.
  fastify.addHook('onClose', async () => { lastKnown?.close() })
}, { name: 'profile', dependencies: ['metrics', 'redis', 'upstream', 'shared-schemas'] })
