// Deprecated routes and fields, declared in the route's schema and nowhere else (plugins/app/deprecation/ marks
// their answers and counts their calls): a route spreads deprecated() into its schema, a field has `deprecated: true`
// in its TypeBox options.
import type { RouteOptions } from 'fastify'

const DEPRECATION_KEY = 'x-deprecation'
const SUNSET_KEY = 'x-sunset'

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
