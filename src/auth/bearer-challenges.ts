// The WWW-Authenticate challenge of each refused bearer token (plugins/app/auth.ts), and its documentation.
import type { TokenReason } from '../../schemas/errors.ts'

/**
 * RFC 6750 section 3: no error code when the request carries no bearer token at all; otherwise `invalid_token`, with
 * an `error_description` of fixed words per reason (RFC 6750's own example for an expired token), never the token's.
 */
export const BEARER_CHALLENGES = {
  token_missing: 'Bearer',
  token_expired: 'Bearer error="invalid_token", error_description="The access token expired"',
  token_invalid: 'Bearer error="invalid_token", error_description="The access token is invalid"'
} as const satisfies Partial<Record<TokenReason, string>>

/** The 401's WWW-Authenticate header, as the OpenAPI document describes it. */
export const bearerChallengeHeader = () => ({
  'www-authenticate': {
    type: 'string' as const,
    description: '`Bearer` when no token was sent. When one was refused, `error="invalid_token"` (RFC 6750) with ' +
      'an `error_description` that says, as the body\'s `reason` does, whether to refresh the token ' +
      `(\`${BEARER_CHALLENGES.token_expired}\`) or to sign in again (\`${BEARER_CHALLENGES.token_invalid}\`).`,
    examples: [BEARER_CHALLENGES.token_expired]
  }
})
