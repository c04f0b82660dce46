// POST /request-console (docs/api.md): an operator runs one upstream operation of the registry
// and sees the whole exchange. An upstream error status is data here; only an exchange that got no
// answer at all (timeout, unreachable, refused redirect) is an error of the console. The key check, the
// body's validation, the audit and the redaction are `fastify.consoleCalls` (plugins/app/console-calls.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ConsoleAnswer, ConsoleRequest } from '../../../schemas/console.ts'
import type { Config } from '../../config.ts'
import { consoleRateLimit } from '../../http/rate-limits.ts'
import { CONSOLE_BODY_LIMIT, consoleRouteSchema } from './schema.ts'
import type { RouteModule } from '../route-module.ts'

const consoleRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  const calls = fastify.consoleCalls
  // No console key: the console does not exist, and the caller meets the same 404 as for any unknown route.
  if (calls === null) return
  // JSON only: without this, Fastify's text/plain parser would turn a text body into a 400, not a 415.
  fastify.removeContentTypeParser('text/plain')
  fastify.post('/request-console', {
    bodyLimit: CONSOLE_BODY_LIMIT,
    config: consoleRateLimit(config),
    schema: consoleRouteSchema(config),
    ...calls.options
  }, async request => await calls.exchange(request))
}

/** The console in the route registry (registry.ts). */
export default {
  plugin: consoleRoute,
  schemas: [ConsoleRequest, ConsoleAnswer],
  answers: {
    'POST /request-console': ['BAD_REQUEST', 'UNAUTHORIZED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE',
      'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_TIMEOUT']
  }
} satisfies RouteModule
