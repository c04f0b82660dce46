// Deprecated routes and fields, declared in the route's schema and nowhere else: a route spreads deprecated() into
// its schema, a field has `deprecated: true` in its TypeBox options. The OpenAPI document marks both (@fastify/swagger
// copies `deprecated` and the x- keys); every answer of a deprecated route carries Deprecation (RFC 9745) and, with a
// sunset date, Sunset (RFC 8594); bff_deprecated_calls_total counts calls to either by app version, only those whose
// token was verified (request.caller) and that were not refused (4xx), so a caller without credentials, or an
// account past its limit, moves no dashboard operators act on.
import fp from 'fastify-plugin'
import type { onResponseHookHandler, onSendHookHandler } from 'fastify'
import type { Registry } from 'prom-client'
import { deprecatedFields, deprecationHeaders } from './deprecated.ts'
import { refused } from '../app-version/metrics.ts'
import { metricsOf } from '../../../metrics/registry.ts'
import { hooksOf } from '../../../route-hooks.ts'

/** The `part` label of a call to a deprecated route (a deprecated field's is its JSON pointer, array items as *). */
const ROUTE_PART = 'route'

interface Call { route: string, method: string, part: string, app_version: string }

/** bff_deprecated_calls_total: counted by the hooks, exported for the app-version labels exported now. */
function deprecatedCalls ({ Counter }: Pick<typeof import('prom-client'), 'Counter'>, registry: Registry,
  exported: (label: string) => boolean) {
  const calls = new Map<string, { labels: Call, count: number }>()
  // eslint-disable-next-line no-new -- prom-client metrics live in the registry they are given
  new Counter({
    name: 'bff_deprecated_calls_total',
    help: 'Authenticated calls to deprecated routes (part="route", once the token was verified, never a 4xx) and ' +
      'success answers whose schema has a deprecated field (part: its JSON pointer), by route pattern, method and ' +
      'app_version (as bff_app_version_requests_total).',
    labelNames: ['route', 'method', 'part', 'app_version'] as const,
    registers: [registry],
    collect () {
      this.reset()
      // A version out of the top is forgotten here too (back in it, its series restarts): the map stays bounded.
      for (const [key, { labels, count }] of calls) {
        if (exported(labels.app_version)) this.inc(labels, count)
        else calls.delete(key)
      }
    }
  })
  return function count (labels: Call): void {
    const key = `${labels.route} ${labels.method} ${labels.part} ${labels.app_version}`
    const entry = calls.get(key)
    if (entry === undefined) calls.set(key, { labels, count: 1 })
    else entry.count++
  }
}

export default fp(async function deprecation (fastify) {
  const versions = fastify.appVersions
  const metrics = metricsOf(fastify)
  const count = metrics === null || versions === null
    ? undefined
    : deprecatedCalls(metrics.prom, metrics.registry, label => versions.exported(label))

  fastify.addHook('onRoute', function markDeprecation (route) {
    const headers = deprecationHeaders(route.schema, `${String(route.method)} ${route.url}`)
    const fields = deprecatedFields(route.schema, id => fastify.getSchema(id))
    if (headers !== undefined) {
      const addHeaders: onSendHookHandler = function addDeprecationHeaders (_request, reply, payload, done) {
        reply.headers(headers)
        done(null, payload)
      }
      route.onSend = [...hooksOf(route.onSend), addHeaders]
    }
    if (count === undefined || versions === null || (headers === undefined && fields.length === 0)) return
    const countCall: onResponseHookHandler = function countDeprecatedCall (request, reply, done) {
      if (request.caller == null || refused(reply.statusCode)) return done()
      const [method, version] = [request.method, versions.label(request.appVersion)]
      if (headers !== undefined) count({ route: route.url, method, part: ROUTE_PART, app_version: version })
      if (reply.statusCode < 200 || reply.statusCode > 299) return done()
      for (const part of fields) count({ route: route.url, method, part, app_version: version })
      done()
    }
    route.onResponse = [...hooksOf(route.onResponse), countCall]
  })
}, { name: 'deprecation', dependencies: ['metrics', 'app-version', 'shared-schemas'] })
