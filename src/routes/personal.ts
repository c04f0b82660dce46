// A personal route, declared once: a route whose options say `config: { personal: { operation } }` is about the
// caller's own data, and gets from that one option everything such a route needs (docs/architecture.md, Adding a
// route): bearer authentication (`fastify.authenticate`, request.caller), the per-client limit
// (RATE_LIMIT_PROFILE_PER_MINUTE requests a minute per token `sub`, counted on the route's own path), `no-store`
// on every answer, and the standard answers in its schema (appRoute(): x-app-version and its 426, the 400, 401, 429,
// 5xx and their headers), which the app-version plugin then enforces. Its onRoute hook rewrites the route before
// the limit's, the app version's and the document's hooks read it: registered before the rate-limit plugin.
import fp from 'fastify-plugin'
import type { onRequestHookHandler } from 'fastify'
import { operations, type OperationName } from '../../schemas/operations.ts'
import type { Config } from '../config.ts'
import { perClientRateLimit } from '../plugins/external/rate-limit/route-limits.ts'
import { hooksOf } from '../route-hooks.ts'
import { appRoute } from './standard-responses.ts'

/** What a personal route declares: the upstream operation its standard error answers name. */
interface PersonalRoute {
  operation: OperationName
  /** What its 429 counts, when not `requests to this route for this client (token \`sub\`)`. */
  counts?: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is about the caller's own data: authenticated, limited per client, never stored (personal.ts). */
    personal?: PersonalRoute
  }
}

/** Each upstream as the error answers name it. */
const UPSTREAMS = { passport: 'The passport service', dealer: 'The dealer service' } as const

const COUNTS = 'requests to this route for this client (token `sub`)'

export default fp<{ config: Config }>(async function personalRoutes (fastify, { config }) {
  // The limit's own onRoute hook reads `config.rateLimit` as the route is added: it must come after this one's.
  if (fastify.hasDecorator('createRateLimit')) {
    throw new Error('personal-routes must be registered before rate-limit, whose onRoute hook reads the limit it sets')
  }
  const { rateLimit } = perClientRateLimit(config)
  const perMinute = config.RATE_LIMIT_PROFILE_PER_MINUTE

  // A new array and a new config, not the ones passed: Fastify copies a GET route's options for its HEAD route.
  fastify.addHook('onRoute', function declarePersonal (route) {
    const personal = route.config?.personal
    if (personal === undefined) return
    // Read as the route is added, after every plugin: the auth plugin comes after the limits it counts refusals with.
    if (!fastify.hasDecorator('authenticate')) {
      throw new Error(`${route.method} ${route.url} is personal: the auth plugin must be registered`)
    }
    const authenticate: onRequestHookHandler = fastify.authenticate
    route.onRequest = [authenticate, ...hooksOf(route.onRequest)]
    // `private`: the cache-control plugin says no-store on every answer, whatever the schema says.
    route.config = { ...route.config, private: true, rateLimit }
    const { operation, counts = COUNTS } = personal
    route.schema = appRoute((route.schema ?? {}) as Parameters<typeof appRoute>[0], {
      upstream: UPSTREAMS[operations[operation].key],
      operation,
      limit: { perMinute, counts }
    })
  })
}, { name: 'personal-routes', dependencies: ['errors', 'cache-control'] })
