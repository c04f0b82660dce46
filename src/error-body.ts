// The public error body of any failure (schemas/errors.ts): the catalog's code, and for 5xx a message that says
// what failed without internals. A shared leaf: the error handler (plugins/app/errors.ts) and the server's own
// answers before routing (client-errors.ts) both build their bodies with it.
import type { FastifyError } from 'fastify'
import type { ErrorBody } from '../schemas/errors.ts'
import { errorCodes, InternalError } from './errors.ts'

// Not the ESM namespace: building it reads http's lazy WebSocket getters, loading Node's bundled undici (~13 MiB).
const { STATUS_CODES } = process.getBuiltinModule('node:http')

const catalog = new Set<string>(errorCodes)

// Fastify's own content-parser failures, named in our vocabulary.
const fastifyCodes: Record<string, { code: string, message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request content type is not supported; send application/json'
  },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'BAD_REQUEST', message: 'The request body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'BAD_REQUEST', message: 'The request content-length does not match its body'
  }
}

const snake = (status: number) => (STATUS_CODES[status] ?? 'Error').toUpperCase().replace(/[^A-Z0-9]+/g, '_')

/** Maps any thrown value to the public error body; nothing of a 5xx's internals passes. */
export function toErrorBody (error: FastifyError): ErrorBody {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode <= 599
    ? error.statusCode
    : 500
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
