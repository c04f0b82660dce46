// Tracing headers travel from the inbound request to every upstream call; nothing else does, and only
// well-formed values within their standards' limits: a receiver that cannot parse a trace context must
// not pass it on (W3C Trace Context), and a caller must not make us send oversized headers upstream.
// With tracing on, the SDK's propagator then replaces traceparent and tracestate with its own
// (upstream/spans.ts): a trace of its own when the inbound one was dropped here.
import type { IncomingHttpHeaders } from 'node:http'

export const TRACING_HEADERS = [
  'baggage', 'traceparent', 'tracestate', 'sentry-trace', 'x-trace-id', 'x-request-id'
] as const

export type TracingHeaders = Partial<Record<typeof TRACING_HEADERS[number], string>>

// Lower-case hex; version ff is invalid, and all-zero trace and parent ids are. Version 00 is exactly the
// four fields; a later version may append fields of its own, which a version-00 reader ignores.
const TRACEPARENT = /^(?!ff)([\da-f]{2})-(?!0{32}-)[\da-f]{32}-(?!0{16}-)[\da-f]{16}-[\da-f]{2}(-[!-~]*)?$/
const MAX_TRACEPARENT_LENGTH = 512

// tracestate: at most 32 `key=value` members and 512 characters, keys unique (W3C Trace Context 3.3).
const TRACESTATE_KEY = /^(?:[a-z][a-z\d_\-*/]{0,255}|[a-z\d][a-z\d_\-*/]{0,240}@[a-z][a-z\d_\-*/]{0,13})$/
const TRACESTATE_VALUE = /^[ -+\--<>-~]{0,255}[!-+\--<>-~]$/
const MAX_TRACESTATE_MEMBERS = 32
const MAX_TRACESTATE_LENGTH = 512

// baggage: at most 180 members and 8,192 bytes (W3C Baggage); `key=value` with optional `;` properties.
const TOKEN = "[!#$%&'*+\\-.^_`|~\\w]+"
const BAGGAGE_VALUE = '[!#-+\\--:<-[\\]-~]*'
const BAGGAGE_MEMBER = new RegExp(`^${TOKEN}[ \\t]*=[ \\t]*${BAGGAGE_VALUE}` +
  `(?:[ \\t]*;[ \\t]*${TOKEN}(?:[ \\t]*=[ \\t]*${BAGGAGE_VALUE})?)*$`)
const MAX_BAGGAGE_MEMBERS = 180
const MAX_BAGGAGE_BYTES = 8192

// sentry-trace is `trace_id-span_id[-sampled]`; the free-form ids are held to what a request id may be.
const SENTRY_TRACE = /^[\da-f]{32}-[\da-f]{16}(?:-[01])?$/
const PLAIN_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A list header's members, trimmed, empty ones (`a=1,,b=2`) left out. */
function members (value: string): string[] {
  return value.split(',').map(member => member.trim()).filter(member => member !== '')
}

/** The tracestate as it may travel on (members trimmed, joined with commas); undefined when it may not. */
function boundedTracestate (value: string): string | undefined {
  const list = members(value)
  if (list.length > MAX_TRACESTATE_MEMBERS) return undefined
  const keys = new Set<string>()
  for (const member of list) {
    const at = member.indexOf('=')
    const key = member.slice(0, at)
    if (at === -1 || keys.has(key) || !TRACESTATE_KEY.test(key)) return undefined
    if (!TRACESTATE_VALUE.test(member.slice(at + 1))) return undefined
    keys.add(key)
  }
  const joined = list.join(',')
  return joined.length <= MAX_TRACESTATE_LENGTH ? joined : undefined
}

/** Node hands header values over as latin1 strings: one character per byte. */
function validBaggage (value: string): boolean {
  if (value.length > MAX_BAGGAGE_BYTES) return false
  const list = members(value)
  return list.length <= MAX_BAGGAGE_MEMBERS && list.every(member => BAGGAGE_MEMBER.test(member))
}

/** True for a traceparent a W3C Trace Context receiver can parse. */
function validTraceparent (value: string): boolean {
  const match = value.length <= MAX_TRACEPARENT_LENGTH ? TRACEPARENT.exec(value) : null
  return match !== null && (match[1] !== '00' || match[2] === undefined)
}

/**
 * The tracing headers of what a caller hands the client, by name only: their values were checked once, where
 * the inbound request's headers were picked; this keeps any other header (a cookie, a key) from travelling.
 */
export function onlyTracingHeaders (headers: TracingHeaders | undefined): TracingHeaders {
  const kept: TracingHeaders = {}
  if (headers === undefined) return kept
  for (const name of TRACING_HEADERS) {
    const value = headers[name]
    if (typeof value === 'string') kept[name] = value
  }
  return kept
}

const joined = (raw: string | string[] | undefined) => Array.isArray(raw) ? raw.join(',') : raw

export function pickTracingHeaders (headers: IncomingHttpHeaders): TracingHeaders {
  const picked: TracingHeaders = {}
  // Two traceparent headers arrive joined with a comma: not a traceparent, so dropped like any other.
  const traceparent = joined(headers.traceparent)
  if (traceparent !== undefined && validTraceparent(traceparent)) {
    picked.traceparent = traceparent
    // Only beside the traceparent it belongs to: a vendor's state is meaningless in another trace.
    const tracestate = joined(headers.tracestate)
    const bounded = tracestate === undefined ? undefined : boundedTracestate(tracestate)
    if (bounded !== undefined) picked.tracestate = bounded
  }
  const baggage = joined(headers.baggage)
  if (baggage !== undefined && validBaggage(baggage)) picked.baggage = baggage
  const sentry = joined(headers['sentry-trace'])
  if (sentry !== undefined && SENTRY_TRACE.test(sentry)) picked['sentry-trace'] = sentry
  for (const name of ['x-trace-id', 'x-request-id'] as const) {
    const value = joined(headers[name])
    if (value !== undefined && PLAIN_ID.test(value)) picked[name] = value
  }
  return picked
}
