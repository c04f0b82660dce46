// GET /api/users/profile: authenticates the caller, asks `fastify.profile` (plugins/app/profile.ts) for their
// profile and sets the headers that describe it; the schema documents and serializes it (profile-schema.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import { callerOf } from '../plugins/app/auth.ts'
import { profileRateLimit } from '../plugins/external/rate-limit.ts'
import { profileRouteSchema } from './profile-schema.ts'

/** The front schemas this route answers with, registered as shared schemas. */
export const profileSchemas: TSchema[] = [Profile]

const profile: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  fastify.get('/api/users/profile', {
    onRequest: fastify.authenticate,
    config: profileRateLimit(config),
    schema: profileRouteSchema(config)
  }, async function getProfile (request, reply) {
    const { body, degraded, stale, age } = await fastify.profile.answer(callerOf(request),
      { id: request.id, headers: request.headers, log: request.log, res: reply.raw })
    if (degraded.length > 0) reply.header('x-degraded', degraded.join(','))
    if (stale.length > 0) reply.header('x-stale', stale.join(','))
    if (age !== undefined) reply.header('age', age)
    // Personal data: no shared cache may keep it.
    reply.header('cache-control', 'private, no-store')
    // Serialized by the flow with this route's schema, once for every request sharing the load.
    return reply.sendSerialized(body)
  })
}

export default profile
