// Log lines written while serving a traced request carry its trace and span ids under the names
// OpenTelemetry's pino instrumentation uses (trace_id, span_id, trace_flags), so logs and traces join.
// A pino mixin rather than @opentelemetry/instrumentation-pino: the same fields without patching pino
// through module hooks, and added only when tracing is on (no mixin call per line otherwise).
import { context, trace } from '@opentelemetry/api'
import type { FastifyServerOptions } from 'fastify'

type LoggerOptions = FastifyServerOptions['logger']

// A fresh object every time: pino merges the line's own fields into what the mixin returns
// (Object.assign(mixinObject, mergeObject)), so a shared empty object would collect every line's fields.
function traceLogFields (): Record<string, string> {
  const span = trace.getSpan(context.active())
  if (span === undefined) return {}
  const { traceId, spanId, traceFlags } = span.spanContext()
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}` }
}

/** The pino options with the trace fields mixed into every line; other logger settings as they are. */
export function withTraceLogFields (options: LoggerOptions): LoggerOptions {
  if (typeof options !== 'object' || options === null) return options
  const own = (options as { mixin?: (...args: unknown[]) => object }).mixin
  const mixin = own === undefined ? traceLogFields : (...args: unknown[]) => ({ ...own(...args), ...traceLogFields() })
  return { ...options, mixin }
}
