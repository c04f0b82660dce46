// The error catalog: every error the service raises on purpose, with a stable upper-snake code and the
// HTTP status the front answers with. Messages say what failed, never how: no key, URL or upstream body.
import createError from '@fastify/error'

/** The operation name, and optionally the failure that caused it. */
type UpstreamArgs = [operation: string, options?: { cause: unknown }]

export const UpstreamTimeoutError = createError<'UPSTREAM_TIMEOUT', 504, UpstreamArgs>(
  'UPSTREAM_TIMEOUT', 'Upstream operation %s did not answer in time', 504)
export const UpstreamBadResponseError = createError<'UPSTREAM_BAD_RESPONSE', 502, UpstreamArgs>(
  'UPSTREAM_BAD_RESPONSE', 'Upstream operation %s gave an unusable answer', 502)
export const UpstreamUnavailableError = createError<'UPSTREAM_UNAVAILABLE', 503, UpstreamArgs>(
  'UPSTREAM_UNAVAILABLE', 'Upstream operation %s is unavailable', 503)
