// Node's own answers to requests that never became one Fastify could route: malformed HTTP (400), header
// overflows (431) and requests not received within the server timeouts (408). Fastify's default sends a
// body of its own shape; ours is the catalog's error body, like every other answer. There is no request
// to hang an id on, so each answer gets a fresh x-request-id, logged with it.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger, FastifyError } from 'fastify'
import { BadRequestError, HeadersTooLargeError, languages, RequestTimeoutError, type Language } from './errors.ts'
import { languageOf, toErrorBody } from './error-body.ts'

/** The start of a raw answer and its body, up to the per-answer x-request-id; built once per language. */
function rawResponse (error: FastifyError, language: Language): { head: string, body: string, code: string } {
  const body = toErrorBody(error, language)
  const json = JSON.stringify(body)
  return {
    // The body's `error` is the status's reason phrase (toErrorBody).
    head: `HTTP/1.1 ${body.statusCode} ${body.error}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Language: ${language}\r\n` +
      'Vary: Accept-Language\r\n' +
      'Cache-Control: no-store\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      `Content-Length: ${Buffer.byteLength(json)}\r\n`,
    body: json,
    code: body.code
  }
}

type RawResponse = ReturnType<typeof rawResponse>
const responseTo = (error: FastifyError) =>
  Object.fromEntries(languages.map(language => [language, rawResponse(error, language)])) as
    Record<Language, RawResponse>
const TIMEOUT = responseTo(new RequestTimeoutError())
const HEADER_OVERFLOW = responseTo(new HeadersTooLargeError())
const MALFORMED = responseTo(new BadRequestError('The request is not valid HTTP'))

/**
 * The answer node:http is writing on this socket, if any (its own link; set while a response is out), and
 * the request it answers (`response.req`): a request whose body timed out has its headers parsed.
 */
type HttpSocket = Socket & { _httpMessage?: { headersSent: boolean, req?: IncomingMessage } | null }

/**
 * Fastify's `clientErrorHandler`, answering in the caller's language when its headers were read (a body
 * that timed out) and in `defaultLanguage` otherwise (headers too large or not HTTP: nothing parsed).
 * Called by the server's 'clientError' event, `this` the Fastify instance.
 */
export function clientErrorHandlerFor (defaultLanguage: Language) {
  return function clientErrorHandler (
    this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: HttpSocket
  ): void {
    // A reset connection has no one to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const inFlight = socket._httpMessage
    const language = languageOf(inFlight?.req?.headers['accept-language'], defaultLanguage)
    const response = (error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? TIMEOUT
      : error.code === 'HPE_HEADER_OVERFLOW' ? HEADER_OVERFLOW : MALFORMED)[language]
    const id = randomUUID()
    // Debug: scanners and broken clients would flood info, and nothing here is the service's fault.
    this.log.debug({ reqId: id, code: response.code, err: error.code }, 'client error answered before routing')
    // As node:http itself: never in the middle of an answer already on its way.
    if (socket.writable && (inFlight === undefined || inFlight === null || !inFlight.headersSent)) {
      socket.write(`${response.head}X-Request-Id: ${id}\r\n\r\n${response.body}`)
      // Closed once written, whatever the client does with its side (the server allows half-open sockets).
      socket.destroySoon()
    } else {
      socket.destroy()
    }
  }
}
