// The front's exposure to browsers: helmet's headers on every answer (a strict CSP for the JSON API, one Swagger UI
// can run under for /docs) and CORS for the configured origins only. How long and how much a client may send is
// the server's options (serverOptions in src/app.ts).
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import helmet from 'helmet'
import { CONSOLE_KEY_HEADER } from '../../auth/key-check.ts'
import type { Config } from '../../config.ts'
import { DOCS_PREFIX } from './docs/prefix.ts'

/** The JSON API is never a document: it may load nothing and be framed by no one. */
const API_CSP = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"]
}

/**
 * Swagger UI: its scripts and styles are files served from /docs (no inline script), but it sets
 * inline style attributes, draws icons from data: URIs and fetches the document and "try it out"
 * answers from this origin. No upgrade-insecure-requests: it would break /docs over plain http.
 */
const DOCS_CSP = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"]
}

/** Answer headers a browser script may read: our own and the limits' hints. */
export const EXPOSED_HEADERS = [
  'x-request-id', 'x-degraded', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'
]
// What the app and the console send; bearer tokens and keys travel in headers, never in cookies.
const ALLOWED_HEADERS = [
  'authorization', 'content-type', CONSOLE_KEY_HEADER, 'x-request-id', 'traceparent', 'tracestate', 'baggage'
]
const PREFLIGHT_MAX_AGE_S = 600

/** CORS_ORIGINS as a list; empty when unset. */
function corsOrigins (value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map(origin => origin.trim())
}

/** What helmet does to an answer, as a list: the headers it sets (in order) and those it removes. */
interface HeaderSet { set: Array<[string, string]>, remove: string[] }

/**
 * Runs helmet's middleware once on a recording answer: our options are constants and its headers depend on nothing
 * in the request (@fastify/helmet rebuilds helmet per request; docs/performance.md, register: Helmet).
 */
function helmetHeaders (csp: Record<string, string[]>): HeaderSet {
  const headers: HeaderSet = { set: [], remove: [] }
  const recorder = {
    setHeader (name: string, value: string) { headers.set.push([name, value]) },
    removeHeader (name: string) { headers.remove.push(name) }
  }
  helmet({ contentSecurityPolicy: { useDefaults: false, directives: csp }, frameguard: { action: 'deny' } })(
    {} as IncomingMessage, recorder as unknown as ServerResponse, error => { if (error !== undefined) throw error })
  return headers
}

/**
 * The set with lower-case names, for the reply rather than the raw answer: a raw answer with no header set before
 * writeHead() takes Node's fast path, while a raw setHeader() pays per-header bookkeeping for every header.
 */
function forReply (headers: HeaderSet): HeaderSet {
  return { set: headers.set.map(([name, value]) => [name.toLowerCase(), value]), remove: headers.remove }
}

function applyHeaders (reply: FastifyReply, headers: HeaderSet): void {
  for (const name of headers.remove) reply.raw.removeHeader(name)
  for (const [name, value] of headers.set) reply.header(name, value)
}

export default fp<{ config: Config }>(async function security (fastify, { config }) {
  // Swagger UI's policy for the docs' routes, the API's for every other answer (unknown routes included).
  const apiHeaders = forReply(helmetHeaders(API_CSP))
  const docsHeaders = forReply(helmetHeaders(DOCS_CSP))
  fastify.addHook('onRequest', function securityHeaders (request, reply, done) {
    const url = request.routeOptions.url
    const docs = url !== undefined && (url === DOCS_PREFIX || url.startsWith(`${DOCS_PREFIX}/`))
    applyHeaders(reply, docs ? docsHeaders : apiHeaders)
    done()
  })

  const origins = corsOrigins(config.CORS_ORIGINS)
  if (origins.length === 0) return
  await fastify.register(cors, {
    origin: origins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE_S,
    // A non-browser OPTIONS (no Origin) gets an empty 204, not a text/plain 400 outside our error body.
    strictPreflight: false
  })
}, { name: 'security' })
