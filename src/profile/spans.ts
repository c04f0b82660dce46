// The span of one profile request's work (docs/operations.md, Tracing): `profile`, under the SERVER span, with
// the single-flight outcome (`started`: this request ran the upstream calls, which are its children;
// `joined`: it waited for another request's run, linked to that run's span), the degraded sections, whether
// the answer is fresh or partly from the last-known copy (and which sections), and
// ERROR when a section is degraded or the profile failed. CLIENT_NOT_FOUND is an answer, not an error.
import { context, SpanKind, SpanStatusCode, trace, type Span, type SpanContext, type Tracer } from '@opentelemetry/api'
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions'
import { ATTR } from '../tracing/tracer.ts'
import type { Joined } from './single-flight.ts'

interface Loaded { degraded: readonly string[], stale: readonly string[], freshness: string }

export interface ProfileSpan {
  /** Runs the work of a run this request starts inside the span, so the upstream calls are its children. */
  run<T> (work: () => Promise<T>): Promise<T>
  /** The run's result, the span ended with what it brought. */
  follow<T extends Loaded> (joined: Joined<T>): Promise<T>
}

/** The span of an unsampled request: the work and its result as they are. */
const UNRECORDED: ProfileSpan = {
  run: work => work(),
  follow: joined => joined.result
}

export function profileSpans (tracer: Tracer) {
  // The span of the request that started each run in flight, for the links of the requests joining it.
  const starters = new WeakMap<Promise<unknown>, SpanContext>()

  function ended<T extends Loaded> (span: Span, loaded: T): T {
    span.setAttribute(ATTR.FRESHNESS, loaded.freshness)
    if (loaded.stale.length > 0) span.setAttribute(ATTR.STALE, [...loaded.stale])
    if (loaded.degraded.length === 0) {
      span.setAttribute(ATTR.PROFILE_OUTCOME, 'ok')
    } else {
      span.setAttributes({ [ATTR.PROFILE_OUTCOME]: 'degraded', [ATTR.DEGRADED]: [...loaded.degraded] })
      span.setStatus({ code: SpanStatusCode.ERROR, message: `degraded: ${loaded.degraded.join(',')}` })
    }
    span.end()
    return loaded
  }

  function failed (span: Span, error: unknown): never {
    const code = (error as { code?: unknown }).code
    const type = typeof code === 'string' ? code : 'INTERNAL_ERROR'
    if (type === 'CLIENT_NOT_FOUND') {
      span.setAttribute(ATTR.PROFILE_OUTCOME, 'not_found')
    } else {
      span.setAttributes({ [ATTR.PROFILE_OUTCOME]: 'failed', [ATTR_ERROR_TYPE]: type })
      span.setStatus({ code: SpanStatusCode.ERROR, message: type })
    }
    span.end()
    throw error
  }

  return {
    start (): ProfileSpan {
      const parent = context.active()
      const span = tracer.startSpan('profile', { kind: SpanKind.INTERNAL }, parent)
      // Not sampled: the work runs under the unsampled parent, and nothing is recorded or linked.
      if (!span.isRecording()) return UNRECORDED
      return {
        run: work => context.with(trace.setSpan(parent, span), work),
        follow (joined) {
          if (joined.sharedWith === undefined) {
            span.setAttribute(ATTR.SINGLE_FLIGHT, 'started')
            starters.set(joined.result, span.spanContext())
          } else {
            span.setAttributes({ [ATTR.SINGLE_FLIGHT]: 'joined', [ATTR.SHARED_WITH]: joined.sharedWith })
            const starter = starters.get(joined.result)
            if (starter !== undefined) span.addLink({ context: starter })
          }
          return joined.result.then(loaded => ended(span, loaded), (error: unknown) => failed(span, error))
        }
      }
    }
  }
}
