// GET /api/users/profile: authenticates the caller and answers the profile the flow loads for them
// (src/profile/flow.ts); the schema documents and serializes it (profile-schema.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import { callerOf } from '../plugins/app/auth.ts'
import { profileRateLimit } from '../plugins/external/rate-limit.ts'
import { createProfileFlow } from '../profile/flow.ts'
import { createLastKnown } from '../profile/last-known/last-known.ts'
import { ref } from '../plugins/app/shared-schemas.ts'
import { routeSerializer } from '../serializer.ts'
import { profileRouteSchema } from './profile-schema.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

/** The front schemas this route answers with, registered as shared schemas. */
export const profileSchemas: TSchema[] = [Profile]

export interface ProfileRouteOptions {
  config: Config
  /** The clock of last-known copies (epoch milliseconds); tests pass their own. */
  now?: () => number
}

const profile: FastifyPluginAsyncTypebox<ProfileRouteOptions> = async (fastify, { config, now }) => {
  const lastKnown = createLastKnown({
    config,
    redis: fastify.redis,
    log: fastify.log,
    ...(fastify.metrics === null ? {} : { observer: fastify.metrics.lastKnown }),
    ...(now === undefined ? {} : { now })
  })
  const profileOf = createProfileFlow({
    upstream: fastify.upstream,
    budgetMs: config.PROFILE_TIMEOUT_MS,
    lastKnown,
    serialize: routeSerializer(ref(Profile), fastify.getSchemas())
  })

  fastify.get('/api/users/profile', {
    onRequest: fastify.authenticate,
    config: profileRateLimit(config),
    schema: profileRouteSchema(config)
  }, async function getProfile (request, reply) {
    const { body, degraded, stale, age } = await profileOf(callerOf(request),
      { id: request.id, headers: request.headers, log: request.log, res: reply.raw })
    if (degraded !== undefined) reply.header('x-degraded', degraded)
    if (stale !== undefined) reply.header('x-stale', stale)
    if (age !== undefined) reply.header('age', age)
    // Personal data: no shared cache may keep it.
    reply.header('cache-control', 'private, no-store')
    // Serialized by the flow with this route's schema, once for every request sharing the load: the
    // type provider types the payload as the object the bytes encode.
    return reply.type(JSON_TYPE).send(body as never)
  })
}

export default profile
