// The OpenAPI description of GET /api/users/profile: what the route answers, and each error's example as
// the error handler renders it.
import type {} from '@fastify/swagger'
import { Type } from 'typebox'
import { AppVersionHeaders } from '../../schemas/app-version.ts'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import {
  ClientNotFoundError, InternalError, RateLimitedError, ServiceUnavailableError, SigningKeyPendingError,
  UnauthorizedError,
  UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError
} from '../errors.ts'
import { appVersionResponses } from '../http/app-version.ts'
import { errorResponse } from '../http/error-response.ts'
import { limitHeaders, RATE_LIMITED_EXAMPLE } from '../http/rate-limits.ts'
import { ref } from '../http/schema-refs.ts'
import { OVERLOADED, shedHeaders } from '../http/shedding.ts'

const description = 'The profile of the client the bearer token names (claims `sub`, `login`, `vendor`); ' +
  `nothing in the
query or headers can name another client.

The passport lookup comes first: an unknown client is 404 \`CLIENT_NOT_FOUND\`, and a passport failure is
502 \`UPSTREAM_BAD_RESPONSE\`, 503 \`UPSTREAM_UNAVAILABLE\` or 504 \`UPSTREAM_TIMEOUT\`. The discount and
contractor lookups then run in parallel; when one fails its section is \`null\` and named in \`degraded\` and in
the \`x-degraded\` header (a comma list, absent when nothing is degraded), and the answer is still 200.
One time budget covers the whole request.

The service keeps each client's last good profile (per section, keyed by an HMAC of the token's identity). When
the passport fails with anything but \`CLIENT_NOT_FOUND\` and a copy younger than \`PROFILE_STALE_IF_ERROR_S\`
exists, the answer is 200 from that copy; when a dealer lookup fails, its section comes from the copy. Such
sections are named in \`stale\` and in the \`x-stale\` header, and \`Age\` says how old the oldest of them is.
\`CLIENT_NOT_FOUND\` deletes the client's copy.

Every 200 carries an \`ETag\`: a keyed hash (HMAC) of the answer's JSON before compression, so the same profile has
the same tag whatever the encoding and instance, an answer with \`stale\` sections has its own, and nothing can be
read or guessed from it. The app keeps its copy of the
profile with its tag and sends the tag back in \`If-None-Match\`: while the profile is unchanged the answer is 304
without a body. The service still loads the profile to compare; the 304 spares the network, not the upstream.`

const ETAG_EXAMPLE = '"MercZkLat8rnuDUdI9nkQa"'

const UNAUTHORIZED_EXAMPLE = 'The bearer token has expired'
const EXAMPLE_OPERATION = 'passport.get_client'

const etag = {
  type: 'string' as const,
  description: 'A strong entity tag of the profile\'s JSON (a hash, before compression): send it back in ' +
    '`If-None-Match` to be answered 304 while the profile is unchanged.',
  examples: [ETAG_EXAMPLE]
}

/** The request headers: the app's version, and the tag of the profile it holds. */
const ProfileRequestHeaders = Type.Object({
  ...AppVersionHeaders.properties,
  'if-none-match': Type.Optional(Type.String({
    description: 'The `ETag` of the profile the app holds (RFC 9110 13.1.2: a comma list of tags, `W/` ' +
      'ignored in the comparison, or `*`). When one matches the profile\'s current tag the answer is 304 ' +
      'without a body; a tag that does not match, or is malformed, gets the 200.',
    examples: [ETAG_EXAMPLE]
  }))
})

/** The headers that describe a profile answer, on the 200 and on the 304 that stands for it. */
const profileHeaders = {
  etag,
  'x-degraded': {
    type: 'string' as const,
    description: 'The `degraded` list as a comma list (`discount`, `contractor` or `discount,contractor`); ' +
      'absent when nothing is degraded.',
    examples: ['contractor']
  },
  'x-stale': {
    type: 'string' as const,
    description: 'The `stale` list as a comma list (`passport`, `discount`, `contractor`): sections answered ' +
      'from the client\'s last good copy; absent when everything is fresh.',
    examples: ['passport,discount,contractor']
  },
  age: {
    type: 'integer' as const,
    description: 'Seconds since the oldest section named in `x-stale` was fetched from the upstream (RFC 9111); ' +
      'absent when everything is fresh.',
    examples: [120]
  }
}

const responses = {
  200: {
    description: 'The profile. A section named in `degraded` could not be loaded and is null; one named in `stale` ' +
      'is the client\'s last good copy.',
    headers: profileHeaders,
    content: { 'application/json': { schema: ref(Profile) } }
  },
  304: {
    description: 'Not Modified: `If-None-Match` named the profile\'s current tag (or was `*`). No body; the ' +
      'same `ETag`, `Cache-Control` and `Vary` as the 200, and its `x-degraded`, `x-stale` and `Age` when it ' +
      'would have had them (they describe this answer: `Age` grows while the bytes stay the same).',
    type: 'null' as const,
    headers: {
      ...profileHeaders,
      'cache-control': {
        type: 'string' as const,
        description: 'As on the 200: personal data, kept by no cache but the app\'s own copy.',
        examples: ['private, no-store']
      },
      vary: {
        type: 'string' as const,
        description: 'As on the 200 (`accept-encoding` while the service compresses).',
        examples: ['accept-encoding']
      }
    }
  },
  401: errorResponse(
    'No bearer token, or one that is malformed, expired, wrongly signed, of another algorithm, or without valid ' +
      'claims.',
    [new UnauthorizedError(UNAUTHORIZED_EXAMPLE)],
    {
      'www-authenticate': {
        type: 'string',
        description: '`Bearer`, with `error="invalid_token"` when a token was sent but refused (RFC 6750).',
        examples: ['Bearer error="invalid_token"']
      }
    }),
  404: errorResponse('The passport service does not know the client the token names.', [new ClientNotFoundError()]),
  500: errorResponse(
    'An unexpected failure of the service; the request id finds it in the logs.', [new InternalError()]),
  502: errorResponse('The passport answer was unusable: an error status, not JSON, or outside its contract.',
    [new UpstreamBadResponseError(EXAMPLE_OPERATION)]),
  503: errorResponse(['The passport service could not be reached, or its circuit breaker is open (with `Retry-After`:',
    'seconds until its next probe), or the service is shedding load (with `Retry-After`), or the token names a ' +
      'signing key the key set does not hold yet while a refresh is not allowed (`SIGNING_KEY_PENDING`, with ' +
      '`Retry-After`: retry the same token then).'].join(' '),
  [new UpstreamUnavailableError(EXAMPLE_OPERATION), new ServiceUnavailableError(OVERLOADED),
    new SigningKeyPendingError('12')],
  {
    'retry-after': {
      ...shedHeaders()['retry-after'],
      description: 'Seconds to wait before retrying; sent when the service sheds load, while the passport\'s ' +
        'circuit breaker is open (until its next probe), and until the key set may be refreshed.'
    }
  }),
  504: errorResponse('The passport service did not answer within its deadline or the profile budget.',
    [new UpstreamTimeoutError(EXAMPLE_OPERATION)])
}

/** The route's schema: documentation, and the 200 answer's serializer. */
export function profileRouteSchema (config: Config) {
  return {
    operationId: 'getProfile',
    tags: ['profile'],
    summary: "The caller's client profile",
    description,
    security: [{ bearerAuth: [] }],
    headers: ProfileRequestHeaders,
    response: {
      ...responses,
      ...appVersionResponses,
      429: errorResponse(
        'Too many profile requests for this client (token `sub`) this minute, or too many refused tokens (or ' +
          'tokens under a signing key not known yet) from this address.',
        [new RateLimitedError(RATE_LIMITED_EXAMPLE)], limitHeaders(config.RATE_LIMIT_PROFILE_PER_MINUTE))
    }
  }
}
