// GET /api/users/profile: a personal route (routes/personal.ts: authenticated, limited per client, never stored)
// that asks `fastify.profile` (plugins/app/profile.ts) for the caller's profile and sets the headers that describe
// it; the schema documents and serializes it (schema.ts).
// An If-None-Match naming the answer's tag is 304 without a body (docs/api.md, Conditional requests).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fresh from 'fresh'
import { Profile } from '../../../schemas/profile.ts'
import { callerOf } from '../../auth/caller.ts'
import { profileRouteSchema } from './schema.ts'
import type { RouteModule } from '../route-module.ts'
import { APP_ROUTE_CODES } from '../standard-responses.ts'

/** True when If-None-Match is `*` or lists `etag`, by weak comparison (RFC 9110 13.1.2); malformed tags never match. */
function unchanged (ifNoneMatch: string | undefined, etag: string): boolean {
  // fresh() given If-None-Match alone: a request's Cache-Control: no-cache, which it also reads, binds caches, not us.
  return ifNoneMatch !== undefined && fresh({ 'if-none-match': ifNoneMatch }, { etag })
}

const PROFILE_COUNTS = 'profile requests for this client (token `sub`)'

const profile: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/api/users/profile', {
    // Its 429 counts what it has always said; the counter is the profile's own (its path).
    config: { personal: { operation: 'passport.get_client', counts: PROFILE_COUNTS } },
    schema: profileRouteSchema()
  }, async function getProfile (request, reply) {
    const { body, etag, degraded, stale, age } = await fastify.profile.respond(callerOf(request), request)
    // A 304 carries these too: they describe this request's answer, and Age moves on while the bytes stay the same.
    if (degraded.length > 0) reply.header('x-degraded', degraded.join(','))
    if (stale.length > 0) reply.header('x-stale', stale.join(','))
    if (age !== undefined) reply.header('age', age)
    // Personal data: no shared cache may keep it. The app keeps its own copy and revalidates it with the ETag.
    reply.header('cache-control', 'private, no-store')
    reply.header('etag', etag)
    // No body, hence no Content-Type: Vary is added for it all the same (plugins/external/compress.ts).
    if (unchanged(request.headers['if-none-match'], etag)) return reply.sendNotModified()
    // Serialized by the profile plugin with this route's schema, once for every request sharing the load.
    return reply.sendSerialized(body)
  })
}

/** The profile in the route registry (registry.ts). */
export default {
  plugin: profile,
  schemas: [Profile],
  errorCodes: { 'GET /api/users/profile': [...APP_ROUTE_CODES, 'CLIENT_NOT_FOUND'] }
} satisfies RouteModule
