// What an upstream sends back, reduced before it is kept in an error or reaches a log line: an upstream may echo
// our key or the client's login anywhere it writes (a Location, a Content-Type, a body, bytes that break HTTP).
// docs/security.md, Secrets.

const ABSOLUTE = /^(?:[a-z][a-z\d+.-]*:|\/\/)/i

/** A Location as origin and path (a relative one as its path): no query, fragment or user info. */
export function reducedLocation (location: string, resolved: URL): string {
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
export function reducedCause (cause: unknown): Error | undefined {
  if (cause === undefined) return undefined
  if (!(cause instanceof Error)) return new Error(typeof cause)
  const reduced = new Error(cause.message)
  reduced.name = cause.name
  const { code } = cause as { code?: unknown }
  if (typeof code === 'string') Object.assign(reduced, { code })
  return reduced
}

const REDACTED = '[redacted]'

/** Percent-decoded, or the text itself where it is not valid percent-encoding. */
function percentDecoded (text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return text
  }
}

/**
 * Replaces each secret (the upstream keys, the caller's login) in a text. A text that holds one only once
 * percent-decoded is replaced whole: its encoded form cannot be cut out reliably.
 */
export function redactor (secrets: readonly string[]): (text: string) => string {
  const known = secrets.filter(secret => secret.length > 0)
  return text => {
    let out = text
    for (const secret of known) out = out.replaceAll(secret, REDACTED)
    if (out.includes('%') || out.includes('+')) {
      const decoded = percentDecoded(out)
      if (known.some(secret => decoded.includes(secret))) return REDACTED
    }
    return out
  }
}
