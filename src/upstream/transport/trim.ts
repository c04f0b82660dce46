// What an upstream sends back, reduced before it is kept in an error or reaches a log line: an upstream may echo
// our key or the client's login anywhere it writes (a Location, a Content-Type, a body, bytes that break HTTP), so
// only the parts needed are kept; the secrets in what is kept are redacted by src/redaction.ts. docs/security.md,
// Secrets.

const ABSOLUTE = /^(?:[a-z][a-z\d+.-]*:|\/\/)/i

/** A Location as origin and path (a relative one as its path): no query, fragment or user info. */
export function trimmedLocation (location: string, resolved: URL): string {
  return ABSOLUTE.test(location.trimStart()) ? resolved.origin + resolved.pathname : resolved.pathname
}

/** The media type of a content type, without its parameters. */
export function mediaType (contentType: string): string {
  return (contentType.split(';', 1)[0] ?? '').trim()
}

/**
 * A transport failure's cause as its name, code and message alone: no field of raw bytes (a parser error's
 * `data`), no socket, no input (a URL error's). Undefined when there was none.
 */
export function trimmedCause (cause: unknown): Error | undefined {
  if (cause === undefined) return undefined
  if (!(cause instanceof Error)) return new Error(typeof cause)
  const trimmed = new Error(cause.message)
  trimmed.name = cause.name
  const { code } = cause as { code?: unknown }
  if (typeof code === 'string') Object.assign(trimmed, { code })
  return trimmed
}
