// The variables that say how callers' tokens are verified: one key (a secret, a public key or the identity
// provider's key set) and the claims a token must carry.
import { Type, type Static } from 'typebox'
import { isLoopback } from './loopback.ts'

export const AuthConfigSchema = Type.Object({
  AUTH_JWT_SECRET: Type.Optional(Type.String({
    minLength: 32,
    description: 'HS256 secret that verifies callers\' tokens (32 characters or more).'
  })),
  AUTH_JWT_PUBLIC_KEY: Type.Optional(Type.String({
    pattern: '-----BEGIN PUBLIC KEY-----',
    description: 'RS256/ES256 public key in PEM that verifies callers\' tokens.'
  })),
  AUTH_JWKS_URL: Type.Optional(Type.String({
    pattern: '^https?://[^\\s/?#]+[^\\s#]*$',
    description: 'The identity provider\'s JSON Web Key Set URL (https; http only to the loopback): tokens are ' +
      'verified with the published key their `kid` names (RS256/PS256, ES256, EdDSA), refreshed without a restart. ' +
      'Set AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE with it.'
  })),
  AUTH_JWKS_REFRESH_S: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 300,
    description: 'How often the key set of AUTH_JWKS_URL is refreshed in the background (less often when its ' +
      'Cache-Control max-age says so); a token with an unknown `kid` may trigger one early refresh per cooldown ' +
      '(30 s, or half this when shorter).'
  }),
  AUTH_JWT_ISSUER: Type.Optional(Type.String({
    minLength: 1,
    description: 'When set, a caller\'s token must carry exactly this `iss` claim (strongly recommended: refuses ' +
      'tokens of other issuers sharing the key).'
  })),
  AUTH_JWT_AUDIENCE: Type.Optional(Type.String({
    minLength: 1,
    description: 'When set, a caller\'s token must carry this `aud` claim (strongly recommended: refuses ID, refresh ' +
      'and other services\' tokens of the same issuer).'
  })),
  AUTH_JWT_MAX_AGE_S: Type.Integer({
    minimum: 60,
    maximum: 30 * 86_400,
    default: 86_400,
    description: 'Longest accepted token lifetime, counted from its `iat`: an older token is refused whatever its ' +
      '`exp`.'
  })
})

type AuthConfig = Static<typeof AuthConfigSchema>

/** The variables that say how callers' tokens are verified; exactly one of them is set. */
const VERIFICATION_KEY_VARIABLES = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL'] as const

/** The one-of rule, on the variables as set, so it is named even when another variable fails the schema. */
export function verificationKeyProblems (variables: Record<string, string | undefined>): string[] {
  const set = VERIFICATION_KEY_VARIABLES.filter(name => variables[name] !== undefined)
  if (set.length === 0) return ['one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL is required']
  if (set.length > 1) return [`set only one of ${set.join(' and ')}`]
  return []
}

/** Keys fetched in clear text could be swapped on the way: https, or http on the local machine only. */
export function jwksUrlProblems (config: AuthConfig): string[] {
  if (config.AUTH_JWKS_URL === undefined) return []
  let url: URL
  try {
    url = new URL(config.AUTH_JWKS_URL)
  } catch {
    return ['AUTH_JWKS_URL has an invalid value']
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    return ['AUTH_JWKS_URL must be https:// (keys fetched in clear text could be replaced on the way); http:// is ' +
      'accepted for the loopback only']
  }
  return []
}
