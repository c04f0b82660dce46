// What no cache may keep (plugins/app/cache-control/ enforces it): every error answer, and every answer of a
// route that needs credentials. A client's cache keys an answer by its URL, not by who asked, so one account's
// answer (a 404 about its client, a 429 of its budget) would be shown to the next account of the same app.

/** The Cache-Control of such an answer (RFC 9111 5.2.2.5). */
export const NO_STORE = 'no-store'

/** Whether a Cache-Control value already forbids storing (the profile's `private, no-store` does). */
export function forbidsStoring (value: unknown): boolean {
  return typeof value === 'string' &&
    value.split(',').some(directive => directive.trim().toLowerCase() === NO_STORE)
}

/** Whether a route's schema says it needs credentials: a `security` that names at least one scheme. */
export function needsCredentials (schema: unknown): boolean {
  const security = (schema as { security?: unknown } | undefined)?.security
  return Array.isArray(security) && security.some(requirement =>
    typeof requirement === 'object' && requirement !== null && Object.keys(requirement).length > 0)
}

/** The documented header of an answer no cache may keep. */
export function noStoreHeader () {
  return {
    'cache-control': {
      type: 'string' as const,
      description: 'No cache may keep this answer, the app\'s own included: it is about one account and this moment.',
      examples: [NO_STORE]
    }
  }
}
