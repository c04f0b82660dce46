// What every route's OpenAPI text shares, declared once: the x-request-id of every request and answer, Vary, the
// rate-limit and deprecation headers, and the error answers of a route that calls an upstream. Every call returns
// fresh objects: an object shared by two places of the document is written to openapi.yaml as a YAML anchor.
import { Type, type TObject, type TProperties, type TSchema } from 'typebox'
import { AppVersionHeaders } from '../../schemas/app-version.ts'
import type { OperationName } from '../../schemas/operations.ts'
import {
  InternalError, RateLimitedError, ServiceUnavailableError, SigningKeyPendingError, UnauthorizedError,
  UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError, withReason
} from '../errors.ts'
import { appVersionResponses } from '../plugins/app/app-version/responses.ts'
import { bearerChallengeHeader } from '../auth/bearer-challenges.ts'
import { needsCredentials, noStoreHeader } from '../plugins/app/cache-control/no-store.ts'
import { deprecationHeaders as sentDeprecationHeaders } from '../plugins/app/deprecation/deprecated.ts'
import { errorResponse } from '../plugins/app/errors/error-response.ts'
import { limitHeaders, RATE_LIMITED_EXAMPLE } from '../plugins/external/rate-limit/route-limits.ts'
import { ref } from '../plugins/app/shared-schemas/refs.ts'
import { OVERLOADED, shedHeaders } from '../plugins/external/load-shedding/shedding.ts'
import type { ErrorCode } from './route-module.ts'

interface Header { type: 'string' | 'integer', description: string, examples?: unknown[], enum?: string[] }
type Headers = Record<string, Header>
type Response = { description?: string, headers?: Headers, content?: unknown, [key: string]: unknown }

/** A route's schema as the helpers read it: its request headers and its answers by status. */
interface RouteSchema {
  headers?: TObject
  response?: Record<string, unknown>
  deprecated?: boolean
  [key: string]: unknown
}

/** x-request-id as a request header: any value is accepted (a malformed one is replaced, never refused). */
const requestIdParameter = () => ({
  'x-request-id': Type.Optional(Type.String({
    description: 'An id of the app\'s choice for this request (1 to 128 of `A-Z a-z 0-9 . _ : -`), echoed in the ' +
      'answer\'s `x-request-id` and written on every log line of the request: quote it in a support ticket. ' +
      'Any other value is replaced by a fresh id, never refused.',
    examples: ['3f0bacbe-c48a-4a76-b50b-29b8f3b0d8b6']
  }))
})

/** The headers of every answer of every route. */
const everyResponseHeaders = (): Headers => ({
  'x-request-id': {
    type: 'string',
    description: 'The request\'s id: the caller\'s own `x-request-id` when well formed, a fresh UUID otherwise.',
    examples: ['3f0bacbe-c48a-4a76-b50b-29b8f3b0d8b6']
  },
  vary: {
    type: 'string',
    description: 'The request headers this answer depends on: `accept-encoding` while the service compresses, ' +
      'and `Accept-Language` on error answers.',
    examples: ['accept-encoding']
  }
})

/** The headers @fastify/rate-limit adds to every answer of a limited route once its limit hook has run. */
const limitStateHeaders = (perMinute: number): Headers => {
  const { 'retry-after': _, ...state } = limitHeaders(perMinute)
  return state
}

/** The headers of every answer of a deprecated route, with the values plugins/app/deprecation/ sends. */
const deprecationHeaders = (schema: RouteSchema): Headers => {
  const sent = sentDeprecationHeaders(schema, 'a deprecated route')
  if (sent === undefined) return {}
  const headers: Headers = {
    deprecation: {
      type: 'string',
      description: 'The route is deprecated (RFC 9745): since when, as `@` and seconds since the epoch.',
      examples: [sent.deprecation]
    }
  }
  if (sent.sunset !== undefined) {
    headers.sunset = {
      type: 'string', description: 'When the route stops answering (RFC 8594).', examples: [sent.sunset]
    }
  }
  return headers
}

/** A status's answer with `headers` added; a bare schema (a `$ref`) becomes the JSON content of the answer. */
function withHeaders (schema: unknown, headers: Headers): Response {
  const response = structuredClone(schema) as Response
  const described = typeof response.description === 'string' || response.content !== undefined ||
    response.type === 'null'
  const out: Response = described
    ? response
    : { description: 'Success', content: { 'application/json': { schema: response } } }
  out.headers = { ...structuredClone(headers), ...out.headers }
  return out
}

/** A JSON answer of a shared schema (one with a `$id`), described as the schema describes itself. */
export function jsonResponse<T extends TSchema> (schema: T) {
  const description = (schema as { description?: unknown }).description
  return {
    description: typeof description === 'string' ? description : 'Success',
    content: { 'application/json': { schema: ref(schema) } }
  }
}

/**
 * Any route's schema, documented as every route is: x-request-id among its request headers and on every answer,
 * Vary, Cache-Control when the route needs credentials, and when the route is limited (`perMinute`) or deprecated,
 * those headers on every answer.
 */
export function documented<S extends RouteSchema> (schema: S, options: { perMinute?: number } = {}): S {
  const headers: TProperties = { ...requestIdParameter(), ...schema.headers?.properties }
  const common: Headers = {
    ...everyResponseHeaders(),
    // A route that needs credentials: no cache may keep any of its answers (plugins/app/cache-control/).
    ...(needsCredentials(schema) ? noStoreHeader() : {}),
    ...(options.perMinute === undefined ? {} : limitStateHeaders(options.perMinute)),
    ...deprecationHeaders(schema)
  }
  const response = Object.fromEntries(Object.entries(schema.response ?? {})
    .map(([status, response]) => [status, withHeaders(response, common)]))
  return { ...schema, headers: Type.Object(headers), response }
}

/** What the standard answers of a route that calls an upstream say. */
export interface UpstreamRoute {
  /** What the route calls, as its error answers name it: `The passport service`. */
  upstream: string
  /** The operation its error examples name. */
  operation: OperationName
  /**
   * Requests a minute the route allows, what its 429 counts (`profile requests for this client (token sub)`) and
   * which refused credentials count against the address (an app route's default: its refused tokens).
   */
  limit: { perMinute: number, counts: string, refused?: string }
}

/** The error codes of a route documented by appRoute(), besides its own. */
export const APP_ROUTE_CODES: readonly ErrorCode[] = [
  'BAD_REQUEST', 'UNAUTHORIZED', 'APP_UPDATE_REQUIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'UPSTREAM_BAD_RESPONSE',
  'SERVICE_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'SIGNING_KEY_PENDING', 'UPSTREAM_TIMEOUT'
]

const REFUSED_TOKENS = 'tokens that failed verification (or under a signing key a refresh has not found)'

/** The 429, 500, 502 and 504 of a route that calls an upstream. */
export function upstreamResponses ({ upstream, operation, limit }: UpstreamRoute) {
  return {
    429: errorResponse(`Too many ${limit.counts} this minute, or too many ${limit.refused ?? REFUSED_TOKENS} from ` +
      'this address.',
    [new RateLimitedError(RATE_LIMITED_EXAMPLE)], limitHeaders(limit.perMinute)),
    500: errorResponse('An unexpected failure of the service; the request id finds it in the logs.',
      [new InternalError()]),
    502: errorResponse(`${upstream} answered something unusable: an error status, not JSON, or outside its contract.`,
      [new UpstreamBadResponseError(operation)]),
    504: errorResponse(`${upstream} did not answer within its deadline.`, [new UpstreamTimeoutError(operation)])
  }
}

/**
 * The schema of a route the app calls with its bearer token and that answers from an upstream: `schema`'s own
 * answers (its 200, and any error it words its own way) over the standard ones, x-app-version among its headers,
 * and documented() around it all.
 */
export function appRoute<S extends RouteSchema> (schema: S, route: UpstreamRoute): S {
  const { upstream, operation } = route
  const response = {
    ...structuredClone(appVersionResponses),
    401: errorResponse(
      'No bearer token, or one that is malformed, expired, wrongly signed, of another algorithm, or without valid ' +
        'claims; `reason` says whether to refresh the token or sign in again.',
      [withReason(new UnauthorizedError('The bearer token has expired'), 'token_expired')],
      bearerChallengeHeader()),
    ...upstreamResponses(route),
    503: errorResponse(`${upstream} could not be reached, or its circuit breaker is open (with \`Retry-After\`: ` +
      'seconds until its next probe), or the service is shedding load (with `Retry-After`), or the token names a ' +
      'signing key the key set does not hold yet while a refresh is not allowed (`SIGNING_KEY_PENDING`, with ' +
      '`Retry-After`: retry the same token then).',
    [new UpstreamUnavailableError(operation), new ServiceUnavailableError(OVERLOADED),
      new SigningKeyPendingError('12')],
    {
      'retry-after': {
        ...shedHeaders()['retry-after'],
        description: 'Seconds to wait before retrying; sent when the service sheds load, while the upstream\'s ' +
          'circuit breaker is open (until its next probe), and until the key set may be refreshed.'
      }
    }),
    ...schema.response
  }
  const headers = Type.Object({ ...AppVersionHeaders.properties, ...schema.headers?.properties })
  return documented({
    security: [{ bearerAuth: [] }],
    ...schema,
    headers,
    response
  }, { perMinute: route.limit.perMinute })
}
