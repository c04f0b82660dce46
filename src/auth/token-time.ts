// When a token was issued must not lie ahead: AUTH_JWT_MAX_AGE_S counts from `iat`, and fast-jwt checks
// only `now <= iat + maxAge`, so a token "issued" ten years ahead would be served for ten years.

/** True when the claims' `iat` is later than `nowMs` plus the tolerance; a missing `iat` is refused elsewhere. */
export function issuedInTheFuture (claims: unknown, nowMs: number, toleranceMs: number): boolean {
  const iat = (claims as { iat?: unknown } | null)?.iat
  return typeof iat === 'number' && iat * 1000 > nowMs + toleranceMs
}
