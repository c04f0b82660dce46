// A SERVER span for every inbound request, child of the caller's W3C `traceparent` when one arrives
// (a new trace otherwise), named and attributed after the route template, never the raw URL.
//
// Hand-made rather than @fastify/otel: that plugin marks the request span ERROR for every error a route
// throws, 4xx answers included (an expired token, CLIENT_NOT_FOUND, a rate limit; fastify/otel#91), which
// the HTTP semantic conventions say to leave unset on SERVER spans, and the SDK cannot clear an ERROR
// status afterwards. It also names the span `request` and records the raw URL with its query. What we
// need is the few lines below: a span, its context around the rest of the request, its end.
import {
  context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer
} from '@opentelemetry/api'
import {
  ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH,
  ATTR_URL_SCHEME
} from '@opentelemetry/semantic-conventions'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ATTR } from './tracer.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's SERVER span while it is open (this plugin is registered only when tracing is on). */
    serverSpan: Span | null
  }
}

function endSpan (request: FastifyRequest, status: number | undefined): void {
  const span = request.serverSpan
  if (span === null) return
  request.serverSpan = null
  if (status !== undefined) {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)
    // A 4xx is the caller's mistake, not a failure of this service.
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(status))
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
  } else {
    span.setAttribute(ATTR_ERROR_TYPE, 'aborted')
  }
  span.end()
}

interface ServerSpansOptions {
  tracer: Tracer
  /** Route templates that get no span: probes and scrapes would bury the traces that matter. */
  untraced: ReadonlySet<string>
}

export default fp<ServerSpansOptions>(async function serverSpans (fastify, { tracer, untraced }) {
  fastify.decorateRequest('serverSpan', null)

  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url
    if (route !== undefined && untraced.has(route)) {
      done()
      return
    }
    const parent = propagation.extract(ROOT_CONTEXT, request.headers)
    // Our routes have no path parameters, so a matched path is its template. The path of an unknown
    // route is whatever the caller typed (an id, a login) and is not recorded; no query string ever is.
    const name = route === undefined ? request.method : `${request.method} ${route}`
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent)
    if (span.isRecording()) {
      span.setAttributes({
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_URL_SCHEME]: request.protocol,
        ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route, [ATTR_URL_PATH]: route }),
        [ATTR.REQUEST_ID]: request.id
      })
      request.serverSpan = span
    }
    // Every later hook, the handler and their log lines run in the span's context, sampled or not: the
    // spans under an unsampled one are unsampled too, and the log lines carry its trace id.
    context.with(trace.setSpan(parent, span), done)
  })

  fastify.addHook('onResponse', (request, reply, done) => {
    endSpan(request, reply.statusCode)
    done()
  })

  // The caller left before the answer was sent: no status to record.
  fastify.addHook('onRequestAbort', (request, done) => {
    endSpan(request, undefined)
    done()
  })
}, { name: 'server-spans' })
