// The one body every error answer has (docs/api.md, Error codes).
import { Type, type Static } from 'typebox'
import { AppVersion } from './app-version.ts'

/**
 * Why a bearer token was refused, named by what the app does next (docs/mobile.md, Retries): the body's `reason`.
 * A string, not an enum, so that a later value is no break of the released contract for strict enum decoders.
 */
export const TOKEN_REASONS = {
  token_missing: 'no bearer token was sent: sign in',
  token_expired: 'the token has expired, or is older than the longest life the service accepts: refresh it (sign ' +
    'in again when the refresh fails)',
  token_invalid: 'the token will never be accepted (its signature, algorithm, key, issuer, audience, times or ' +
    'claims): sign in again',
  signing_key_pending: 'the token names a signing key the service does not hold yet: retry the same token after ' +
    '`Retry-After`'
} as const

export type TokenReason = keyof typeof TOKEN_REASONS

const reasonList = Object.entries(TOKEN_REASONS).map(([reason, meaning]) => `\`${reason}\`: ${meaning}`).join('; ')

export const ErrorBody = Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'Stable upper-snake code; clients branch on it.' }),
  error: Type.String({ description: 'The HTTP reason phrase.' }),
  message: Type.String({ description: 'What went wrong, for people. Never internals.' }),
  // A field of its own, so an app compares versions and shows its own update screen without parsing the message.
  min_app_version: Type.Optional(Type.String({
    ...AppVersion,
    description: 'Only on 426 `APP_UPDATE_REQUIRED`: the oldest app version the service serves ' +
      '(`MIN_APP_VERSION`), to compare by semver precedence and to show on the app\'s update screen.'
  })),
  // `code` stays UNAUTHORIZED for every refused token, as apps branch on it; this tells refresh from sign-in from wait.
  reason: Type.Optional(Type.String({
    pattern: '^[a-z][a-z0-9_]*$',
    description: 'Only where a bearer token was refused (401 `UNAUTHORIZED`, 503 `SIGNING_KEY_PENDING`, and the ' +
      `429 \`RATE_LIMITED\` of an address past its refused-credential limit): why, as what the app does next. ${
        reasonList}. Read a value not listed here as its status says (a 401: sign in again).`,
    examples: ['token_expired']
  }))
}, {
  $id: 'ErrorBody',
  additionalProperties: false,
  description: 'Every error answer. An `x-request-id` header comes with it.',
  examples: [{
    statusCode: 404,
    code: 'CLIENT_NOT_FOUND',
    error: 'Not Found',
    message: 'The client is not known to the passport service'
  }]
})

export type ErrorBody = Static<typeof ErrorBody>
