// Tracing headers travel from the inbound request to every upstream call; nothing else does.
import type { IncomingHttpHeaders } from 'node:http'

export const TRACING_HEADERS = ['baggage', 'traceparent', 'tracestate', 'sentry-trace', 'x-trace-id', 'x-request-id'] as const

export type TracingHeaders = Partial<Record<typeof TRACING_HEADERS[number], string>>

// Bounded so a caller cannot make us send oversized or multi-line headers upstream.
const MAX_LENGTH = 8192

export function pickTracingHeaders (headers: IncomingHttpHeaders): TracingHeaders {
  const picked: TracingHeaders = {}
  for (const name of TRACING_HEADERS) {
    const raw = headers[name]
    const value = Array.isArray(raw) ? raw.join(',') : raw
    if (value !== undefined && value.length <= MAX_LENGTH) picked[name] = value
  }
  return picked
}
