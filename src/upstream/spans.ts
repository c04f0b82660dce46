// Spans of the upstream client (docs/operations.md, Tracing): an `upstream <operation>` span for each call, with
// the operation, the redirects followed, the final status and the outcome (ERROR unless `ok` or
// `not_found`), a breaker refusal recorded on it as an event with the breaker's state; and under it a
// CLIENT span for each HTTP request on the wire, the 307 hops and a retried connection included, whose
// id is the parent in the `traceparent` the upstream receives.
//
// The hop spans come from an undici interceptor rather than @opentelemetry/instrumentation-undici: the
// instrumentation hears undici's diagnostics channels, which a MockAgent never publishes on (the unit
// tests would see no hop); it marks the passport's documented 400 CLIENT_NOT_FOUND an ERROR; and it
// appends its traceparent beside the inbound one we forward (two headers). The interceptor replaces the
// forwarded traceparent/tracestate with ours and leaves every other header as it was. Neither span
// records a header, a body or the params: the keys and the client's identity never reach a span.
import {
  context, createContextKey, propagation, SpanKind, SpanStatusCode, trace, type Span, type Tracer
} from '@opentelemetry/api'
import {
  ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT,
  ATTR_URL_FULL
} from '@opentelemetry/semantic-conventions'
import type { Dispatcher } from 'undici'
import type { IncomingHttpHeaders } from 'node:http'
import { ATTR } from '../tracing/tracer.ts'
import { isUpstreamError } from './errors.ts'
import type { OperationName } from '../../schemas/operations.ts'
import type { BreakerState } from './breaker.ts'

/** What the exchange span learns of a call that got its answer (client.ts Exchange). */
interface Responded { outcome: string, status: number, redirects: readonly unknown[] }

/** The exchange in progress, for the hop spans under it. */
interface ExchangeState { operation: OperationName, hops: number }

const EXCHANGE = createContextKey('bff upstream exchange')
// The SDK's propagator writes these two; the forwarded values of the caller must not travel beside them.
const REPLACED = new Set(['traceparent', 'tracestate'])

export interface ExchangeSpans {
  /** Runs one call in its exchange span, ended with the call's outcome. */
  traced<T extends Responded> (operation: OperationName, run: () => Promise<T>): Promise<T>
  /** `base` with a CLIENT span around every request it sends. */
  dispatcher (base: Dispatcher): Dispatcher
}

export function exchangeSpans (
  tracer: Tracer, breakerStates: () => Record<OperationName, BreakerState>
): ExchangeSpans {
  function responded (span: Span, ex: Responded): void {
    span.setAttributes({
      [ATTR.OUTCOME]: ex.outcome, [ATTR_HTTP_RESPONSE_STATUS_CODE]: ex.status, [ATTR.REDIRECTS]: ex.redirects.length
    })
    if (ex.outcome !== 'ok' && ex.outcome !== 'not_found') {
      span.setAttribute(ATTR_ERROR_TYPE, ex.outcome)
      span.setStatus({ code: SpanStatusCode.ERROR, message: ex.outcome })
    }
    span.end()
  }

  function failed (span: Span, operation: OperationName, error: unknown): void {
    const reason = isUpstreamError(error) ? error.reason : 'internal'
    span.setAttributes({ [ATTR.OUTCOME]: reason, [ATTR_ERROR_TYPE]: reason })
    if (isUpstreamError(error)) {
      const { status, redirects } = error.exchange
      span.setAttribute(ATTR.REDIRECTS, redirects.length)
      if (status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)
    }
    if (reason === 'breaker_open') {
      span.addEvent('breaker_refused', { [ATTR.BREAKER_STATE]: breakerStates()[operation] })
    }
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason })
    span.end()
  }

  function traced<T extends Responded> (operation: OperationName, run: () => Promise<T>): Promise<T> {
    const parent = context.active()
    const span = tracer.startSpan(`upstream ${operation}`, { kind: SpanKind.INTERNAL }, parent)
    // Not sampled: no context, attribute or callback for the call or its hops (else 10 % sampling costs as 100 %).
    if (!span.isRecording()) return run()
    span.setAttribute(ATTR.OPERATION, operation)
    const state: ExchangeState = { operation, hops: 0 }
    return context.with(trace.setSpan(parent, span).setValue(EXCHANGE, state), run).then(
      ex => { responded(span, ex); return ex },
      (error: unknown) => { failed(span, operation, error); throw error })
  }

  const hopSpans: Dispatcher.DispatchInterceptor = dispatch => (opts, handler) => {
    const parent = context.active()
    const state = parent.getValue(EXCHANGE) as ExchangeState | undefined
    const span = tracer.startSpan(opts.method, { kind: SpanKind.CLIENT }, parent)
    const recording = span.isRecording()
    if (recording) {
      const url = new URL(opts.path, opts.origin)
      span.setAttributes({
        [ATTR_HTTP_REQUEST_METHOD]: opts.method,
        // origin + path only: the client's URLs carry no query, and an origin has no user:password part.
        [ATTR_URL_FULL]: url.origin + url.pathname,
        [ATTR_SERVER_ADDRESS]: url.hostname,
        [ATTR_SERVER_PORT]: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        ...(state === undefined ? {} : { [ATTR.OPERATION]: state.operation, [ATTR.HOP]: state.hops++ })
      })
    }
    const headers: Record<string, string> = {}
    const given = opts.headers
    if (given !== null && given !== undefined && !Array.isArray(given) && typeof given === 'object' &&
      !(Symbol.iterator in given)) {
      for (const [name, value] of Object.entries(given as Record<string, string>)) {
        if (!REPLACED.has(name.toLowerCase())) headers[name] = value
      }
    }
    // Sampled or not, the upstream gets our traceparent (an unsampled one says so in its flags).
    propagation.inject(trace.setSpan(parent, span), headers)
    return dispatch({ ...opts, headers }, recording ? new HopHandler(handler, span) : handler)
  }

  return { traced, dispatcher: base => base.compose(hopSpans) }
}

/** Passes every callback on, and ends the hop's span with its status or its error. */
class HopHandler implements Dispatcher.DispatchHandler {
  private readonly handler: Dispatcher.DispatchHandler
  private readonly span: Span

  constructor (handler: Dispatcher.DispatchHandler, span: Span) {
    this.handler = handler
    this.span = span
  }

  onRequestStart (controller: Dispatcher.DispatchController, ctx: unknown): void {
    this.handler.onRequestStart?.(controller, ctx)
  }

  onRequestUpgrade (
    controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders,
    socket: import('node:stream').Duplex
  ): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket)
  }

  onResponseStart (
    controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string
  ): void {
    if (statusCode >= 200) {
      this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode)
      // A 4xx is not an error of the hop: the passport's CLIENT_NOT_FOUND is a documented answer, and the
      // exchange span above judges every answer against the operation's contract.
      if (statusCode >= 500) {
        this.span.setAttribute(ATTR_ERROR_TYPE, String(statusCode))
        this.span.setStatus({ code: SpanStatusCode.ERROR })
      }
    }
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk)
  }

  onResponseEnd (controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.span.end()
    this.handler.onResponseEnd?.(controller, trailers)
  }

  onResponseError (controller: Dispatcher.DispatchController, error: Error): void {
    const type = (error as { code?: unknown }).code
    this.span.setAttribute(ATTR_ERROR_TYPE, typeof type === 'string' ? type : error.name)
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
    this.span.end()
    this.handler.onResponseError?.(controller, error)
  }
}
