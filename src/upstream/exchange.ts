// One upstream exchange on the wire: the POST, the 307/308 hop repeated with the same headers and body
// (only to the documented path plus a trailing slash on the same origin, upstream-spec.md 4.2 rule 3,
// so the key reaches no other host and no other path), and the answer read under a size cap. It knows nothing
// of operations' meaning; client.ts does.
import { errors as undiciErrors, request, type Dispatcher } from 'undici'
import type { IncomingHttpHeaders } from 'node:http'
import { upstreamError, type FailedExchange, type FailureReason } from './errors.ts'

export interface Hop { status: number, location: string }

export interface WireRequest {
  /** The first URL to POST to. */
  url: URL
  headers: Record<string, string>
  body: string
  signal: AbortSignal
  /** Tells whether our own deadline, rather than the caller's signal, ended the exchange. */
  deadline: { readonly timedOut: boolean }
  maxRedirects: number
  /** The one location a redirect may lead to: the operation's documented URL plus a trailing slash. */
  redirectTarget: URL
  /** Hand back the first redirect instead of following it (a memoised URL that moved again). */
  stopAtRedirect?: boolean
  maxBodyBytes: number
  dispatcher: Dispatcher
  /** The exchange record so far: filled in place, so a failure reports every hop taken. */
  record: FailedExchange
  started: number
}

export interface WireAnswer {
  /** The URL the final answer came from. */
  url: URL
  status: number
  headers: IncomingHttpHeaders
  text: string
}

const REDIRECTS = new Set([307, 308])
const OTHER_REDIRECTS = new Set([300, 301, 302, 303, 305])

export async function postFollowingRedirects (req: WireRequest): Promise<WireAnswer> {
  const { record } = req
  let url = req.url
  let retried = false
  for (;;) {
    let res: Dispatcher.ResponseData
    try {
      res = await request(url, { method: 'POST', headers: req.headers, body: req.body, signal: req.signal, dispatcher: req.dispatcher })
    } catch (cause) {
      // request() settles when the headers arrive: failing here, with no earlier hop answered, no byte of
      // any answer was read. A connection dropped then is sent once more, at once, within the same
      // deadline (a pooled keep-alive socket the upstream had just closed); the operations are lookups,
      // so a second send of a request the upstream may have seen changes nothing there. Never after a
      // timeout, never after an answer, never when the caller gave up.
      if (!retried && record.status === null && connectionDropped(cause) && !req.signal.aborted) {
        retried = true
        continue
      }
      throw failFromTransport(req, cause)
    }
    record.status = res.statusCode
    if (REDIRECTS.has(res.statusCode) || OTHER_REDIRECTS.has(res.statusCode)) {
      await discard(res, req)
      if (req.stopAtRedirect === true) return { url, status: res.statusCode, headers: res.headers, text: '' }
      const location = headerValue(res.headers.location)
      // 301/302/303 would turn the POST into a GET; the upstream only ever uses 307.
      if (location === undefined || !REDIRECTS.has(res.statusCode)) throw fail(req, 'redirect_invalid')
      let next: URL
      try {
        next = new URL(location, url)
      } catch (cause) {
        throw fail(req, 'redirect_invalid', cause)
      }
      record.redirects.push({ status: res.statusCode, location })
      if (next.origin !== req.redirectTarget.origin) throw fail(req, 'redirect_refused')
      if (record.redirects.length > req.maxRedirects) throw fail(req, 'redirect_loop')
      // Same origin is not enough: another path (another operation's, with this operation's key and the
      // client's login in the body) is never sent to.
      if (next.pathname !== req.redirectTarget.pathname || next.search !== '') throw fail(req, 'redirect_invalid')
      url = next
      continue
    }
    const text = await readCapped(res, req)
    return { url, status: res.statusCode, headers: res.headers, text }
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

/**
 * The answer's text, at most `maxBodyBytes`. An answer that declares its length within the cap is read
 * by undici itself (undici fails one whose bytes do not match the length it declared); one without a
 * length is counted chunk by chunk and cut off past the cap.
 */
async function readCapped (res: Dispatcher.ResponseData, req: WireRequest): Promise<string> {
  const declared = Number(headerValue(res.headers['content-length']))
  if (declared > req.maxBodyBytes) {
    res.body.destroy()
    throw fail(req, 'too_large')
  }
  if (Number.isInteger(declared)) {
    try {
      return await res.body.text()
    } catch (cause) {
      throw failFromTransport(req, cause)
    }
  }
  return await readCounted(res.body, req)
}

// Read with 'data' events rather than `for await`: the async iterator costs a promise per chunk and
// measured about 10 µs more per answer (npm run bench: every profile reads three).
function readCounted (body: Dispatcher.ResponseData['body'], req: WireRequest): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const settle = () => {
      body.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose)
      // A late error of a stream we gave up on must not become an uncaught exception.
      body.on('error', ignore)
    }
    function onData (chunk: Buffer) {
      size += chunk.length
      if (size > req.maxBodyBytes) {
        settle()
        body.destroy()
        reject(fail(req, 'too_large'))
        return
      }
      chunks.push(chunk)
    }
    function onEnd () {
      settle()
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'))
    }
    function onError (cause: unknown) {
      settle()
      reject(failFromTransport(req, cause))
    }
    // Closed with neither end nor error: the answer was cut short.
    function onClose () {
      settle()
      reject(failFromTransport(req, new Error('the answer ended before its body was complete')))
    }
    body.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose)
  })
}

function ignore (): void {}

async function discard (res: Dispatcher.ResponseData, req: WireRequest): Promise<void> {
  try {
    await res.body.dump({ limit: 64 * 1024 })
  } catch (cause) {
    throw failFromTransport(req, cause)
  }
}

function fail (req: WireRequest, reason: FailureReason, cause?: unknown): Error {
  req.record.duration_ms = elapsed(req.started)
  return upstreamError(reason, { ...req.record, redirects: [...req.record.redirects] }, cause)
}

/** A transport error is a timeout when a signal ended it, otherwise the upstream could not be reached. */
function failFromTransport (req: WireRequest, cause: unknown): Error {
  if (req.deadline.timedOut) return fail(req, 'timeout', cause)
  if (req.signal.aborted) return fail(req, 'aborted', cause)
  if (cause instanceof undiciErrors.HeadersTimeoutError || cause instanceof undiciErrors.BodyTimeoutError) {
    return fail(req, 'timeout', cause)
  }
  return fail(req, 'connect', cause)
}

export function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function elapsed (started: number): number {
  return Math.round((performance.now() - started) * 100) / 100
}
