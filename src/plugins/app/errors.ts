// One error handler for every failure, 404 and 400 included: the body of design.md section 7 with a
// stable code, and for 5xx a message that says what failed without internals.
import fp from 'fastify-plugin'
import Negotiator from 'negotiator'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorBody } from '../../../schemas/errors.ts'
import {
  BadRequestError, detailIn, errorCodes, InternalError, languages, messageIn, MethodNotAllowedError, NotFoundError,
  PayloadTooLargeError, UnsupportedMediaTypeError, validationIn, type Language
} from '../../errors.ts'
import routeMethods from './route-methods.ts'

// Not the ESM namespace: building it reads http's lazy WebSocket getters, loading Node's bundled undici (~13 MiB).
const { STATUS_CODES } = process.getBuiltinModule('node:http')

const catalog = new Set<string>(errorCodes)

// Fastify's own content-parser failures, named in our vocabulary.
const fastifyCodes: Record<string, () => FastifyError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new UnsupportedMediaTypeError(),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new BadRequestError('The request body is not valid JSON'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new BadRequestError('The request body is empty; send a JSON object'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new BadRequestError('The request content-length does not match its body')
}

const snake = (status: number) => (STATUS_CODES[status] ?? 'Error').toUpperCase().replace(/[^A-Z0-9]+/g, '_')

/** Maps any thrown value to the public error body, its message in `language`; nothing of a 5xx's internals passes. */
export function toErrorBody (error: FastifyError, language: Language = 'en'): ErrorBody {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode <= 599 ? error.statusCode : 500
  const body = (code: string, message: string, statusCode = status): ErrorBody =>
    ({ statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message })
  if (error.validation !== undefined) {
    const { message, validation, validationContext } = error
    return body('BAD_REQUEST', validationIn({ message, validation, validationContext }, language), 400)
  }
  if (catalog.has(error.code)) return body(error.code, messageIn(error, language))
  const known = fastifyCodes[error.code]?.()
  if (known !== undefined) return body(known.code, messageIn(known, language), known.statusCode)
  if (status === 429) return body('RATE_LIMITED', detailIn('RATE_LIMITED', error.message, language))
  if (status >= 500) return body('INTERNAL_ERROR', messageIn(new InternalError(), language), 500)
  return body(snake(status), language === 'en' ? error.message : detailIn('BAD_REQUEST', '', language))
}

/**
 * The language of an error answer: the caller's first choice by Accept-Language (quality values honoured,
 * `en-US` counts as `en`), else `fallback` (DEFAULT_LANGUAGE), also for a header naming neither.
 */
export function languageOf (acceptLanguage: string | string[] | undefined, fallback: Language): Language {
  if (acceptLanguage === undefined || acceptLanguage.length === 0) return fallback
  // The fallback first, so that `*` and ties choose it.
  const offered = [fallback, ...languages.filter(language => language !== fallback)]
  const chosen = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).language(offered)
  return (chosen as Language | undefined) ?? fallback
}

/** Content-Language of an error answer, and Vary so that a cache keeps one answer per language. */
function languageHeaders (reply: FastifyReply, language: Language): void {
  reply.header('content-language', language)
  const vary = reply.getHeader('vary')
  const present = vary === undefined ? [] : String(vary).split(',').map(name => name.trim()).filter(Boolean)
  if (!present.some(name => name.toLowerCase() === 'accept-language' || name === '*')) {
    reply.header('vary', [...present, 'Accept-Language'].join(', '))
  }
}

export interface ErrorsOptions {
  /** The language of error answers to a caller whose Accept-Language names none of ours (DEFAULT_LANGUAGE). */
  defaultLanguage?: Language
}

async function errorsPlugin (fastify: import('fastify').FastifyInstance, { defaultLanguage = 'ru' }: ErrorsOptions) {
  // Registered before any route (app.ts), it learns every route's methods as they are added.
  await fastify.register(routeMethods)
  fastify.setErrorHandler(function handle (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const language = languageOf(request.headers['accept-language'], defaultLanguage)
    const english = toErrorBody(error)
    const body = language === 'en' ? english : toErrorBody(error, language)
    languageHeaders(reply, language)
    // Headers the error itself carries (as Fastify's own handler honours): an open breaker's Retry-After.
    const headers = (error as { headers?: Record<string, string> }).headers
    if (headers !== undefined && body.statusCode === error.statusCode) reply.headers(headers)
    if (body.statusCode >= 500) request.log.error({ err: error, code: body.code }, 'request failed')
    else request.log.info({ code: body.code, message: english.message }, 'request refused')
    return reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
  })

  // A known path with another method is 405 with Allow (RFC 9110 15.5.6), OPTIONS of it 204 with Allow;
  // only an unknown path is 404.
  fastify.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?', 1)[0] ?? ''
    const allow = fastify.allowedMethods(path)
    const language = languageOf(request.headers['accept-language'], defaultLanguage)
    if (allow === undefined) {
      languageHeaders(reply, language)
      return reply.code(404).send(toErrorBody(new NotFoundError(request.method, path), language))
    }
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    languageHeaders(reply, language)
    return reply.code(405).send(toErrorBody(new MethodNotAllowedError(request.method, path), language))
  })
}

export default fp(errorsPlugin, { name: 'errors' })
