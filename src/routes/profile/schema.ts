// The OpenAPI description of GET /api/users/profile: what the route answers besides the standard answers of a
// personal route (routes/personal.ts adds them), each error's example as the error handler renders it.
import type {} from '@fastify/swagger'
import { Type } from 'typebox'
import { Profile } from '../../../schemas/profile.ts'
import { ClientNotFoundError } from '../../errors.ts'
import { errorResponse } from '../../plugins/app/errors/error-response.ts'
import { ref } from '../../plugins/app/shared-schemas/refs.ts'

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

const etag = () => ({
  type: 'string' as const,
  description: 'A strong entity tag of the profile\'s JSON (a hash, before compression): send it back in ' +
    '`If-None-Match` to be answered 304 while the profile is unchanged.',
  examples: [ETAG_EXAMPLE]
})

/** The request header of the tag of the profile the app holds. */
const ProfileRequestHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    description: 'The `ETag` of the profile the app holds (RFC 9110 13.1.2: a comma list of tags, `W/` ' +
      'ignored in the comparison, or `*`). When one matches the profile\'s current tag the answer is 304 ' +
      'without a body; a tag that does not match, or is malformed, gets the 200.',
    examples: [ETAG_EXAMPLE]
  }))
})

/** The headers that describe a profile answer, on the 200 and on the 304 that stands for it. */
const profileHeaders = () => ({
  etag: etag(),
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
})

/** Personal data: kept by no shared cache; Vary as every answer, said of the profile. */
const cacheHeaders = {
  'cache-control': {
    type: 'string' as const,
    description: 'Personal data, kept by no cache but the app\'s own copy (revalidated with the `ETag`).',
    examples: ['private, no-store']
  },
  vary: {
    type: 'string' as const,
    description: '`accept-encoding` while the service compresses: the bytes depend on it, the `ETag` does not.',
    examples: ['accept-encoding']
  }
}

/** The route's own schema (documentation, and the 200 answer's serializer); the personal option adds the rest. */
export function profileRouteSchema () {
  return {
    operationId: 'getProfile',
    tags: ['profile'],
    summary: "The caller's client profile",
    description,
    headers: ProfileRequestHeaders,
    response: {
      200: {
        description: 'The profile. A section named in `degraded` could not be loaded and is null; one named in ' +
          '`stale` is the client\'s last good copy.',
        headers: { ...profileHeaders(), ...cacheHeaders },
        content: { 'application/json': { schema: ref(Profile) } }
      },
      304: {
        description: 'Not Modified: `If-None-Match` named the profile\'s current tag (or was `*`). No body; the ' +
          'same `ETag`, `Cache-Control` and `Vary` as the 200, and its `x-degraded`, `x-stale` and `Age` when it ' +
          'would have had them (they describe this answer: `Age` grows while the bytes stay the same).',
        type: 'null' as const,
        headers: { ...profileHeaders(), ...cacheHeaders }
      },
      404: errorResponse('The passport service does not know the client the token names.', [new ClientNotFoundError()])
    }
  }
}
