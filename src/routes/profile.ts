// GET /api/users/profile: authenticates the caller and answers the profile the flow loads for them
// (src/profile/flow.ts); the schema documents and serializes it (profile-schema.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import { callerOf } from '../plugins/app/auth.ts'
import { profileRateLimit } from '../plugins/external/rate-limit.ts'
import { createProfileFlow } from '../profile/flow.ts'
import { profileRouteSchema } from './profile-schema.ts'

/** The front schemas this route answers with, registered as shared schemas. */
export const profileSchemas: TSchema[] = [Profile]

const profile: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  const profileOf = createProfileFlow({ upstream: fastify.upstream, budgetMs: config.PROFILE_TIMEOUT_MS })

  fastify.get('/api/users/profile', {
    onRequest: fastify.authenticate,
    config: profileRateLimit(config),
    schema: profileRouteSchema(config)
  }, async function getProfile (request, reply) {
    const { profile, degraded } = await profileOf(callerOf(request),
      { id: request.id, headers: request.headers, log: request.log, res: reply.raw })
    if (degraded !== undefined) reply.header('x-degraded', degraded)
    // Personal data: no shared cache may keep it.
    reply.header('cache-control', 'private, no-store')
    return profile
  })
}

export default profile
