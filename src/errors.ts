// The error catalog: every error the service answers with, a stable upper-snake code and its HTTP status
// (in the manner of fastify's lib/errors.js). Messages say what failed, never how: no key, URL, stack or
// upstream body.
import createError from '@fastify/error'

/** The operation name, and optionally the failure that caused it. */
type UpstreamArgs = [operation: string, options?: { cause: unknown }]

export const BadRequestError = createError<'BAD_REQUEST', 400, [detail: string]>(
  'BAD_REQUEST', '%s', 400)
export const UnauthorizedError = createError<'UNAUTHORIZED', 401, [detail: string]>(
  'UNAUTHORIZED', '%s', 401)
export const NotFoundError = createError<'NOT_FOUND', 404, [method: string, url: string]>(
  'NOT_FOUND', 'Route %s %s not found', 404)
export const MethodNotAllowedError = createError<'METHOD_NOT_ALLOWED', 405, [method: string, url: string]>(
  'METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; the Allow header lists those that are', 405)
export const ClientNotFoundError = createError<'CLIENT_NOT_FOUND', 404, []>(
  'CLIENT_NOT_FOUND', 'The client is not known to the passport service', 404)
export const PayloadTooLargeError = createError<'PAYLOAD_TOO_LARGE', 413, []>(
  'PAYLOAD_TOO_LARGE', 'The request body is too large', 413)
export const UnsupportedMediaTypeError = createError<'UNSUPPORTED_MEDIA_TYPE', 415, []>(
  'UNSUPPORTED_MEDIA_TYPE', 'The request content type is not supported; send application/json', 415)
// Answered before routing (src/client-errors.ts): the request never became one Fastify could route.
export const RequestTimeoutError = createError<'REQUEST_TIMEOUT', 408, []>(
  'REQUEST_TIMEOUT', 'The request was not received in time', 408)
export const HeadersTooLargeError = createError<'HEADERS_TOO_LARGE', 431, []>(
  'HEADERS_TOO_LARGE', 'The request headers are too large', 431)
export const RateLimitedError = createError<'RATE_LIMITED', 429, [retryAfter: string]>(
  'RATE_LIMITED', 'Too many requests; retry in %s', 429)
export const InternalError = createError<'INTERNAL_ERROR', 500, []>(
  'INTERNAL_ERROR', 'Internal server error', 500)
export const ServiceUnavailableError = createError<'SERVICE_UNAVAILABLE', 503, [detail: string]>(
  'SERVICE_UNAVAILABLE', '%s', 503)
// A token under a kid the key set does not hold yet, while an early refresh is not allowed: retried, not refused.
export const SigningKeyPendingError = createError<'SIGNING_KEY_PENDING', 503, [retryAfterS: string]>(
  'SIGNING_KEY_PENDING', 'The key that signed the bearer token is not known yet; retry in %s seconds', 503)

export const UpstreamTimeoutError = createError<'UPSTREAM_TIMEOUT', 504, UpstreamArgs>(
  'UPSTREAM_TIMEOUT', 'Upstream operation %s did not answer in time', 504)
export const UpstreamBadResponseError = createError<'UPSTREAM_BAD_RESPONSE', 502, UpstreamArgs>(
  'UPSTREAM_BAD_RESPONSE', 'Upstream operation %s gave an unusable answer', 502)
export const UpstreamUnavailableError = createError<'UPSTREAM_UNAVAILABLE', 503, UpstreamArgs>(
  'UPSTREAM_UNAVAILABLE', 'Upstream operation %s is unavailable', 503)

/** Every code a client can meet, for the docs and the tests. */
export const errorCodes = [
  'BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND', 'CLIENT_NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE',
  'REQUEST_TIMEOUT', 'HEADERS_TOO_LARGE', 'METHOD_NOT_ALLOWED', 'SIGNING_KEY_PENDING'
] as const
export type ErrorCode = typeof errorCodes[number]
