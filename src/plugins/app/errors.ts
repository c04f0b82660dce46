// One error handler for every failure, 404 and 400 included: the body of docs/api.md, Error codes, with a
// stable code, and for 5xx a message that says what failed without internals.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorBody } from '../../../schemas/errors.ts'
import { errorCodes, InternalError, MethodNotAllowedError, NotFoundError } from '../../errors.ts'
import routeMethods from './route-methods.ts'

// Not the ESM namespace: building it reads http's lazy WebSocket getters, loading Node's bundled undici (~13 MiB).
const { STATUS_CODES } = process.getBuiltinModule('node:http')

const catalog = new Set<string>(errorCodes)

// Fastify's own content-parser failures, named in our vocabulary.
const fastifyCodes: Record<string, { code: string, message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request content type is not supported; send application/json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'BAD_REQUEST', message: 'The request content-length does not match its body' }
}

const snake = (status: number) => (STATUS_CODES[status] ?? 'Error').toUpperCase().replace(/[^A-Z0-9]+/g, '_')

/** Maps any thrown value to the public error body; nothing of a 5xx's internals passes. */
export function toErrorBody (error: FastifyError): ErrorBody {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode <= 599 ? error.statusCode : 500
  const body = (code: string, message: string, statusCode = status): ErrorBody =>
    ({ statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message })
  if (error.validation !== undefined) return body('BAD_REQUEST', error.message, 400)
  if (catalog.has(error.code)) return body(error.code, error.message)
  const known = fastifyCodes[error.code]
  if (known !== undefined) return body(known.code, known.message ?? error.message)
  if (status === 429) return body('RATE_LIMITED', error.message)
  if (status >= 500) {
    const internal = new InternalError()
    return body(internal.code, internal.message, 500)
  }
  return body(snake(status), error.message)
}

async function errorsPlugin (fastify: import('fastify').FastifyInstance) {
  // Registered before any route (app.ts), it learns every route's methods as they are added.
  await fastify.register(routeMethods)
  fastify.setErrorHandler(function handle (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const body = toErrorBody(error)
    // Headers the error itself carries (as Fastify's own handler honours): an open breaker's Retry-After.
    const headers = (error as { headers?: Record<string, string> }).headers
    if (headers !== undefined && body.statusCode === error.statusCode) reply.headers(headers)
    if (body.statusCode >= 500) request.log.error({ err: error, code: body.code }, 'request failed')
    else request.log.info({ code: body.code, message: body.message }, 'request refused')
    return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
  })

  // A known path with another method is 405 with Allow (RFC 9110 15.5.6), OPTIONS of it 204 with Allow;
  // only an unknown path is 404.
  fastify.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?', 1)[0] ?? ''
    const allow = fastify.allowedMethods(path)
    if (allow === undefined) return reply.code(404).send(toErrorBody(new NotFoundError(request.method, path)))
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    return reply.code(405).send(toErrorBody(new MethodNotAllowedError(request.method, path)))
  })
}

export default fp(errorsPlugin, { name: 'errors' })
