// Deprecated routes and fields, declared in the route's schema and nowhere else: a route spreads deprecated() into
// its schema, a field has `deprecated: true` in its TypeBox options. The OpenAPI document marks both (@fastify/swagger
// copies `deprecated` and the x- keys); every answer of a deprecated route carries Deprecation (RFC 9745) and, with a
// sunset date, Sunset (RFC 8594); bff_deprecated_calls_total counts calls to either by app version, only those whose
// token was verified (request.caller), so a caller without credentials moves no dashboard operators act on.
import fp from 'fastify-plugin'
import type { onResponseHookHandler, onSendHookHandler, RouteOptions } from 'fastify'
import type { Registry } from 'prom-client'

const DEPRECATION_KEY = 'x-deprecation'
const SUNSET_KEY = 'x-sunset'
/** The `part` label of a call to a deprecated route (a deprecated field's is its JSON pointer, array items as *). */
const ROUTE_PART = 'route'

export interface DeprecationDates {
  /** When the route was deprecated: an ISO 8601 date-time with an offset, or a date (UTC midnight). */
  since: string
  /** When it stops answering, in the same form; optional. */
  sunset?: string
}

/** A route schema's deprecation, spread into it: `schema: { ...deprecated({ since: '2026-12-01' }), ... }`. */
export function deprecated ({ since, sunset }: DeprecationDates) {
  const dates = { [DEPRECATION_KEY]: since, ...(sunset === undefined ? {} : { [SUNSET_KEY]: sunset }) }
  return { deprecated: true as const, ...dates }
}

/** The headers every answer of a route carries; undefined when the route is not deprecated. */
export function deprecationHeaders (schema: RouteOptions['schema'], route: string): Record<string, string> | undefined {
  const declared = schema as Record<string, unknown> | undefined
  if (declared?.deprecated !== true) return undefined
  const since = instant(declared[DEPRECATION_KEY])
  if (since === undefined) {
    throw new Error(`${route} is deprecated without a valid ${DEPRECATION_KEY} date: use deprecated()`)
  }
  // RFC 9745: a structured-field date, seconds since the epoch.
  const headers: Record<string, string> = { deprecation: `@${Math.floor(since / 1000)}` }
  if (declared[SUNSET_KEY] === undefined) return headers
  const sunset = instant(declared[SUNSET_KEY])
  if (sunset === undefined || sunset < since) {
    throw new Error(`${route} has an invalid ${SUNSET_KEY}: it must be a date after ${DEPRECATION_KEY}`)
  }
  // RFC 8594: an HTTP-date (IMF-fixdate, which toUTCString writes).
  headers.sunset = new Date(sunset).toUTCString()
  return headers
}

/** Epoch milliseconds of an ISO 8601 date or date-time with an offset; undefined for anything else. */
function instant (value: unknown): number | undefined {
  const iso = /^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))?$/
  if (typeof value !== 'string' || !iso.test(value)) return undefined
  const ms = Date.parse(value)
  return Number.isFinite(ms) ? ms : undefined
}

type Schema = Record<string, unknown>

/**
 * The JSON pointers of the deprecated properties of a route's success answers (2xx, through shared-schema $refs and
 * OpenAPI `content`), array items as `*`.
 */
export function deprecatedFields (schema: RouteOptions['schema'], shared: (id: string) => unknown): string[] {
  const responses = (schema as { response?: Record<string, Schema> } | undefined)?.response ?? {}
  const found = new Set<string>()
  const walk = (node: unknown, path: string, seen: ReadonlySet<string>): void => {
    if (typeof node !== 'object' || node === null) return
    const s = node as Schema
    if (typeof s.$ref === 'string') {
      if (!seen.has(s.$ref)) walk(shared(s.$ref), path, new Set([...seen, s.$ref]))
      return
    }
    for (const [key, value] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
      if (value.deprecated === true) found.add(`${path}/${key}`)
      walk(value, `${path}/${key}`, seen)
    }
    walk(s.items, `${path}/*`, seen)
    for (const branch of [s.anyOf, s.oneOf, s.allOf]) {
      if (Array.isArray(branch)) for (const option of branch) walk(option, path, seen)
    }
  }
  for (const [status, response] of Object.entries(responses)) {
    if (!/^2(?:\d\d|XX)$/.test(status)) continue
    const content = response.content as Record<string, { schema?: unknown }> | undefined
    if (content === undefined) walk(response, '', new Set())
    else for (const media of Object.values(content)) walk(media.schema, '', new Set())
  }
  return [...found]
}

interface Call { route: string, method: string, part: string, app_version: string }

/** bff_deprecated_calls_total: counted by the hooks, exported for the app-version labels exported now. */
function deprecatedCalls ({ Counter }: Pick<typeof import('prom-client'), 'Counter'>, registry: Registry,
  exported: (label: string) => boolean) {
  const calls = new Map<string, { labels: Call, count: number }>()
  // eslint-disable-next-line no-new -- prom-client metrics live in the registry they are given
  new Counter({
    name: 'bff_deprecated_calls_total',
    help: 'Authenticated calls to deprecated routes (part="route", any status once the token was verified) and ' +
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

const asArray = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]

export default fp(async function deprecation (fastify) {
  const versions = fastify.appVersions
  const count = fastify.metrics === null || versions === null
    ? undefined
    : deprecatedCalls(await import('prom-client'), fastify.metrics.registry, label => versions.exported(label))

  fastify.addHook('onRoute', function markDeprecation (route) {
    const headers = deprecationHeaders(route.schema, `${String(route.method)} ${route.url}`)
    const fields = deprecatedFields(route.schema, id => fastify.getSchema(id))
    if (headers !== undefined) {
      const addHeaders: onSendHookHandler = function addDeprecationHeaders (_request, reply, payload, done) {
        reply.headers(headers)
        done(null, payload)
      }
      route.onSend = [...asArray(route.onSend), addHeaders]
    }
    if (count === undefined || versions === null || (headers === undefined && fields.length === 0)) return
    const countCall: onResponseHookHandler = function countDeprecatedCall (request, reply, done) {
      if (request.caller == null) return done()
      const [method, version] = [request.method, versions.label(request.appVersion)]
      if (headers !== undefined) count({ route: route.url, method, part: ROUTE_PART, app_version: version })
      if (reply.statusCode < 200 || reply.statusCode > 299) return done()
      for (const part of fields) count({ route: route.url, method, part, app_version: version })
      done()
    }
    route.onResponse = [...asArray(route.onResponse), countCall]
  })
}, { name: 'deprecation', dependencies: ['app-version', 'shared-schemas'] })
