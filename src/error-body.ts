// The public error body of any failure (schemas/errors.ts): the catalog's code, its message in the caller's
// language, and for 5xx a message that says what failed without internals. A shared leaf: the error handler
// (plugins/app/errors/) and the server's own answers before routing (client-errors.ts) both build their bodies
// with it.
import Negotiator from 'negotiator'
import type { FastifyError } from 'fastify'
import type { ErrorBody } from '../schemas/errors.ts'
import {
  AppUpdateRequiredError, BadRequestError, detailIn, errorCodes, InternalError, languages, messageIn,
  PayloadTooLargeError, reasonOf, UnsupportedMediaTypeError, validationIn, type Language
} from './errors.ts'

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

/** Maps any thrown value to the public error body, its message in `language`; nothing of a 5xx's internals
 * passes. */
export function toErrorBody (error: FastifyError, language: Language = 'en'): ErrorBody {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode <= 599
    ? error.statusCode
    : 500
  const body = (code: string, message: string, statusCode = status): ErrorBody =>
    ({ statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message })
  if (error.validation !== undefined) {
    const { message, validation, validationContext } = error
    return body('BAD_REQUEST', validationIn({ message, validation, validationContext }, language), 400)
  }
  if (error instanceof AppUpdateRequiredError) {
    return { ...body(error.code, messageIn(error, language)), min_app_version: error.minAppVersion }
  }
  if (catalog.has(error.code)) {
    const reason = reasonOf(error)
    const errorBody = body(error.code, messageIn(error, language))
    return reason === undefined ? errorBody : { ...errorBody, reason }
  }
  const known = fastifyCodes[error.code]?.()
  if (known !== undefined) return body(known.code, messageIn(known, language), known.statusCode)
  if (status === 429) return body('RATE_LIMITED', detailIn('RATE_LIMITED', error.message, language))
  if (status >= 500) return body('INTERNAL_ERROR', messageIn(new InternalError(), language), 500)
  return body(snake(status), language === 'en' ? error.message : detailIn('BAD_REQUEST', '', language))
}

/** What of Accept-Language is read: real lists fit many times over; past it, a long header costs no more work. */
const LANGUAGE_PREFIX_CHARS = 256
const LANGUAGE_ENTRIES = 8

/**
 * The part of an Accept-Language value that negotiation parses: its first LANGUAGE_ENTRIES entries within its first
 * LANGUAGE_PREFIX_CHARS characters, an entry cut by the bound left out whole. Nothing is kept between requests.
 */
export function languagePrefix (acceptLanguage: string | string[]): string {
  const value = typeof acceptLanguage === 'string'
    ? acceptLanguage
    : acceptLanguage.slice(0, LANGUAGE_ENTRIES).join(',')
  const head = value.slice(0, LANGUAGE_PREFIX_CHARS)
  const entries = head.split(',', LANGUAGE_ENTRIES + 1)
  // Ends inside an entry when cut short and within the entry count: that entry is dropped, not misread.
  const cut = value.length > LANGUAGE_PREFIX_CHARS && entries.length <= LANGUAGE_ENTRIES
  return (cut ? entries.slice(0, -1) : entries.slice(0, LANGUAGE_ENTRIES)).join(',')
}

/**
 * The language of an error answer: the caller's first choice by Accept-Language (quality values honoured,
 * `en-US` counts as `en`; only the bounded prefix of languagePrefix), else `fallback` (DEFAULT_LANGUAGE), also for a
 * header naming neither.
 */
export function languageOf (acceptLanguage: string | string[] | undefined, fallback: Language): Language {
  if (acceptLanguage === undefined || acceptLanguage.length === 0) return fallback
  const read = languagePrefix(acceptLanguage)
  if (read.length === 0) return fallback
  // The fallback first, so that `*` and ties choose it.
  const offered = [fallback, ...languages.filter(language => language !== fallback)]
  const chosen = new Negotiator({ headers: { 'accept-language': read } }).language(offered)
  return (chosen as Language | undefined) ?? fallback
}
