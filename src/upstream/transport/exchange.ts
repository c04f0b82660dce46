// One upstream exchange on the wire: the POST, the 307/308 hop repeated with the same headers and body
// (only to the documented path plus a trailing slash on the same origin, docs/upstream.md, The slash redirect,
// so the key reaches no other host and no other path), and the answer read under a size cap. It knows nothing
// of operations' meaning; client.ts does, and makes a WireFailure the caller's upstream error.
import { errors as undiciErrors, type Dispatcher } from 'undici'
import type { IncomingHttpHeaders } from 'node:http'
import type { OperationName } from '../../../schemas/operations.ts'
import { ResponseReader, ResponseTooLarge, dispatchPost, EMPTY_BODY, type ReadOptions } from './response-reader.ts'
import type { Deadline } from './deadline.ts'
import { trimmedCause, trimmedLocation } from './trim.ts'

/** One redirect followed: its status and where it led, as origin and path (trim.ts: no query). */
export interface Hop { status: number, location: string }

/** Why the wire failed an exchange (a subset of the client's FailureReason). */
export type WireReason =
  | 'timeout' | 'aborted' | 'connect' | 'redirect_refused' | 'redirect_loop' | 'redirect_invalid' | 'too_large'

/** What is known of an exchange that failed: always the hops so far, the status when an answer arrived. */
export interface WireRecord {
  operation: OperationName
  status: number | null
  redirects: Hop[]
  duration_ms: number
}

/** An exchange the wire could not complete; its cause reduced to name, code and message (trim.ts). */
export class WireFailure extends Error {
  readonly reason: WireReason
  readonly record: WireRecord

  constructor (reason: WireReason, record: WireRecord, cause?: unknown) {
    const trimmed = trimmedCause(cause)
    super(reason, trimmed === undefined ? undefined : { cause: trimmed })
    this.name = 'WireFailure'
    this.reason = reason
    this.record = record
  }
}

export interface WireRequest {
  operation: OperationName
  /** The first URL to POST to. */
  url: URL
  headers: Record<string, string>
  body: string
  /** Ends the hop in flight; tells whether our own deadline, rather than the caller, ended the exchange. */
  deadline: Pick<Deadline, 'aborted' | 'timedOut' | 'watch'>
  maxRedirects: number
  /** The one location a redirect may lead to: the operation's documented URL plus a trailing slash. */
  redirectTarget: URL
  /** Hand back the first redirect instead of following it (a memoised URL that moved again). */
  stopAtRedirect?: boolean
  maxBodyBytes: number
  dispatcher: Dispatcher
  /** The operation may be sent again after a dropped connection (schemas/operations.ts `safeToRepeat`). */
  safeToRepeat: boolean
  started: number
}

export interface WireResponse {
  /** The URL the final answer came from. */
  url: URL
  status: number
  headers: IncomingHttpHeaders
  /** The body's bytes (response-body.ts reads them); empty for a redirect handed back. */
  body: Buffer
  /** The redirects followed on the way. */
  redirects: Hop[]
}

const REDIRECTS = new Set([307, 308])
// Every redirect status: followed only when in REDIRECTS, its body never kept.
const ANY_REDIRECT: ReadonlySet<number> = new Set([300, 301, 302, 303, 305, ...REDIRECTS])
// A redirect's body is read through only this far (it frees the connection); past it the connection closes.
const DISCARD_LIMIT = 64 * 1024

export async function postFollowingRedirects (req: WireRequest): Promise<WireResponse> {
  const { deadline } = req
  // This exchange's own record: a failure reports every hop taken and the last status that arrived.
  const record: WireRecord = { operation: req.operation, status: null, redirects: [], duration_ms: 0 }
  const reading: ReadOptions = { maxBodyBytes: req.maxBodyBytes, discard: ANY_REDIRECT, discardLimit: DISCARD_LIMIT }
  let url = req.url
  let retried = false
  for (;;) {
    const reader = new ResponseReader(reading)
    deadline.watch(reader)
    let response
    try {
      response = await dispatchPost(req.dispatcher, url, req.headers, req.body, reader)
    } catch (cause) {
      if (reader.status !== 0) record.status = reader.status
      if (cause instanceof ResponseTooLarge) throw fail(req, record, 'too_large', cause)
      // A connection dropped before any byte of any answer (a keep-alive socket the upstream had just closed) is
      // sent once more within the deadline: the operations are lookups declared safe to repeat.
      const repeatable = req.safeToRepeat && !retried && reader.status === 0 && record.status === null
      if (repeatable && connectionDropped(cause) && !deadline.aborted) {
        retried = true
        continue
      }
      throw failFromTransport(req, record, cause)
    } finally {
      deadline.watch(null)
    }
    record.status = response.status
    if (ANY_REDIRECT.has(response.status)) {
      if (req.stopAtRedirect === true) {
        const { status, headers } = response
        return { url, status, headers, body: EMPTY_BODY, redirects: record.redirects }
      }
      const location = headerValue(response.headers.location)
      // 301/302/303 would turn the POST into a GET; the upstream only ever uses 307.
      if (location === undefined || !REDIRECTS.has(response.status)) throw fail(req, record, 'redirect_invalid')
      let next: URL
      try {
        next = new URL(location, url)
      } catch (cause) {
        throw fail(req, record, 'redirect_invalid', cause)
      }
      record.redirects.push({ status: response.status, location: trimmedLocation(location, next) })
      if (next.origin !== req.redirectTarget.origin) throw fail(req, record, 'redirect_refused')
      if (record.redirects.length > req.maxRedirects) throw fail(req, record, 'redirect_loop')
      // Same origin is not enough: another path (another operation's, with this operation's key and the
      // client's login in the body) is never sent to.
      if (next.pathname !== req.redirectTarget.pathname || next.search !== '') {
        throw fail(req, record, 'redirect_invalid')
      }
      url = next
      continue
    }
    return { url, status: response.status, headers: response.headers, body: response.body, redirects: record.redirects }
  }
}

// Refused, or closed by the peer before it answered (a pooled keep-alive socket the upstream had
// just dropped). Not DNS, TLS or a connect timeout: a second try at once would meet the same fate.
const DROPPED_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE'])
// undici's SocketError also reports bytes it could not parse ('bad response'): those are an answer.
const DROPPED_SOCKET_MESSAGES = new Set(['other side closed', 'closed'])

function connectionDropped (cause: unknown): boolean {
  if (typeof cause !== 'object' || cause === null) return false
  const { code, message } = cause as { code?: unknown, message?: unknown }
  if (typeof code === 'string' && DROPPED_CODES.has(code)) return true
  return code === 'UND_ERR_SOCKET' && typeof message === 'string' && DROPPED_SOCKET_MESSAGES.has(message)
}

function fail (req: WireRequest, record: WireRecord, reason: WireReason, cause?: unknown): WireFailure {
  return new WireFailure(reason, { ...record, duration_ms: elapsed(req.started) }, cause)
}

/** A transport error is a timeout when the deadline ended it, otherwise the upstream could not be reached. */
function failFromTransport (req: WireRequest, record: WireRecord, cause: unknown): WireFailure {
  if (req.deadline.timedOut) return fail(req, record, 'timeout', cause)
  if (req.deadline.aborted) return fail(req, record, 'aborted', cause)
  if (cause instanceof undiciErrors.HeadersTimeoutError || cause instanceof undiciErrors.BodyTimeoutError) {
    return fail(req, record, 'timeout', cause)
  }
  return fail(req, record, 'connect', cause)
}

export function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function elapsed (started: number): number {
  return Math.round((performance.now() - started) * 100) / 100
}
