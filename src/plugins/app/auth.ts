// Caller authentication (docs/security.md, Credentials): `request.caller` comes from the verified token's claims
// alone. The algorithm follows the configured key, never the token (no `alg: none`, no HS256 signed with a public
// key); with AUTH_JWKS_URL the token's `kid` picks the key, one verifier each, so a removed key's cached tokens go
// with it.
import fp from 'fastify-plugin'
import fastifyJwt from '@fastify/jwt'
import { createVerifier } from 'fast-jwt'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Compile } from 'typebox/compile'
import { CallerClaims, type Caller } from '../../auth/caller.ts'
import { KEY_SET_ALGORITHMS } from '../../auth/jwk.ts'
import { keySetMetrics, RemoteKeySet } from '../../auth/key-set.ts'
import { issuedInTheFuture } from '../../auth/token-time.ts'
import { verificationKey, type JwtAlgorithm } from '../../auth/verification-key.ts'
import type { Config } from '../../config.ts'
import {
  KEY_SET_NOT_LOADED, ServiceUnavailableError, SigningKeyPendingError, UnauthorizedError, withReason, type Detail
} from '../../errors.ts'
import { BEARER_CHALLENGES } from '../../auth/bearer-challenges.ts'
import { metricsOf } from '../../metrics/registry.ts'

/** Tolerated clock difference between the token issuer and us, for `exp` and `nbf`. */
const CLOCK_TOLERANCE_MS = 30_000
// Longer than any token we issue carries; refused before any decoding work.
const MAX_TOKEN_LENGTH = 4096

declare module 'fastify' {
  interface FastifyInstance {
    /** `onRequest` hook: verifies the bearer token and sets `request.caller`, or answers 401. */
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    /** The identity provider's key set with AUTH_JWKS_URL; null with a fixed secret or key. */
    keySet: RemoteKeySet | null
  }
  interface FastifyRequest {
    /** Set by `fastify.authenticate`; null on routes that do not use it. */
    caller: Caller | null
  }
}

/** The 401 of a refused bearer token: its challenge, and its reason in the body. */
function refuse (
  reply: FastifyReply, reason: keyof typeof BEARER_CHALLENGES, message: Detail<'UNAUTHORIZED'>
): Error {
  reply.header('www-authenticate', BEARER_CHALLENGES[reason])
  return withReason(new UnauthorizedError(message), reason)
}

/** fast-jwt's and @fastify/jwt's own errors: all of them mean the token is not acceptable. */
function isTokenError (error: unknown): error is { code: string } {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('FAST_JWT_') || code.startsWith('FST_JWT_'))
}

// What fast-jwt refuses only after the signature has verified (its verifier checks the signature, then the crit
// header, the required claims and their values): the token is its holder's own, expired or meant for another.
const AFTER_SIGNATURE = new Set([
  'FAST_JWT_EXPIRED', 'FAST_JWT_INACTIVE', 'FAST_JWT_MISSING_REQUIRED_CLAIM', 'FAST_JWT_INVALID_CLAIM_TYPE',
  'FAST_JWT_INVALID_CLAIM_VALUE', 'FAST_JWT_INVALID_CRIT_HEADER'
])

type ClaimsConfig = Pick<Config, 'AUTH_JWT_ISSUER' | 'AUTH_JWT_AUDIENCE' | 'AUTH_JWT_MAX_AGE_S'>

/** fast-jwt's verification options: the key's algorithms, the claims a token must carry, its longest life. */
function verifyOptions (config: ClaimsConfig, algorithms: JwtAlgorithm[]) {
  const { AUTH_JWT_ISSUER: issuer, AUTH_JWT_AUDIENCE: audience } = config
  return {
    algorithms,
    // `iat` is required so that AUTH_JWT_MAX_AGE_S applies to every token: fast-jwt skips maxAge without it.
    requiredClaims: [
      'exp', 'iat', ...(issuer === undefined ? [] : ['iss']), ...(audience === undefined ? [] : ['aud'])
    ],
    ...(issuer === undefined ? {} : { allowedIss: issuer }),
    ...(audience === undefined ? {} : { allowedAud: audience }),
    // In seconds: @fastify/jwt turns a number into milliseconds for fast-jwt.
    maxAge: config.AUTH_JWT_MAX_AGE_S,
    clockTolerance: CLOCK_TOLERANCE_MS,
    ...(algorithms.every(algorithm => algorithm.startsWith('HS')) ? { cache: false } : VERIFIED_TOKEN_CACHE)
  }
}

/**
 * Tokens of a key set or public key are remembered once verified (bounded, never past their `exp` or max age): a
 * mobile client sends the same token for many requests and RS256/ES256 verification is costly. An HS256 token is
 * not: its check costs less than the cache does once clients outnumber it (docs/performance.md, The latest run).
 */
const VERIFIED_TOKEN_CACHE = {
  cache: 1000,
  cacheTTL: 60_000,
  // Refusals are remembered only while they cannot change: fast-jwt keeps an error for clockTolerance
  // plus this, so a token refused for its `nbf` stayed refused about 30 s after it became valid.
  errorCacheTTL: (error: { code?: string }) => error.code === 'FAST_JWT_INACTIVE' ? -CLOCK_TOLERANCE_MS : 600_000
}

/** A token the key set cannot verify: no usable header, an algorithm no key admits, or a kid it does not hold. */
class KeySetRefusal extends Error {}

/** SIGNING_KEY_PENDING, and whether a refresh begun since its kid was first seen has lacked it already. */
class PendingKey extends SigningKeyPendingError {
  readonly lacked: boolean
  constructor (retryAfterS: string, lacked: boolean) {
    super(retryAfterS)
    this.lacked = lacked
  }
}

const KEY_SET_ALGORITHM_NAMES = new Set<string>(KEY_SET_ALGORITHMS)
/** The `alg` and `kid` of a token's protected header; a KeySetRefusal when it has no usable one. */
function protectedHeader (token: string): { alg: string, kid: string } {
  const dot = token.indexOf('.')
  let header: { alg?: unknown, kid?: unknown } | null = null
  try {
    header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'))
  } catch {}
  const { alg, kid } = header ?? {}
  if (dot <= 0 || typeof alg !== 'string' || typeof kid !== 'string' || kid.length === 0) throw new KeySetRefusal()
  return { alg, kid }
}

/** The claims of a token verified with the key of the set its kid names (after an early refresh if unknown). */
function keySetVerifier (keySet: RemoteKeySet) {
  async function afterRefresh (token: string, kid: string): Promise<unknown> {
    const found = await keySet.keyAfterRefresh(kid)
    if ('key' in found) return found.key.verify(token)
    // Not the caller's fault: no one can be verified yet, so no token is called invalid.
    if (!keySet.loaded) throw new ServiceUnavailableError(KEY_SET_NOT_LOADED)
    if ('unpublished' in found) throw new KeySetRefusal()
    // Perhaps a key published since the last refresh: the app retries a 503, while a 401 signs the user out.
    const seconds = String(Math.max(1, Math.ceil(found.retryAfterMs / 1000)))
    throw Object.assign(new PendingKey(seconds, found.lacked), { headers: { 'retry-after': seconds } })
  }
  return function verify (token: string): unknown {
    const { alg, kid } = protectedHeader(token)
    // `none` and HS* never reach a key, nor trigger a refresh.
    if (!KEY_SET_ALGORITHM_NAMES.has(alg)) throw new KeySetRefusal()
    const key = keySet.key(kid)
    return key === undefined ? afterRefresh(token, kid) : key.verify(token)
  }
}

/**
 * Counts a `503 SIGNING_KEY_PENDING` answer by route pattern: anyone can name an invented kid, so these answers are
 * kept out of the error budget (scripts/alert-rules.ts reads them apart). A no-op without metrics.
 */
function pendingResponses (fastify: FastifyInstance): (request: FastifyRequest) => void {
  const metrics = metricsOf(fastify)
  if (metrics === null) return () => {}
  const pending = new metrics.prom.Counter({
    name: 'bff_auth_signing_key_pending_total',
    help: 'Answers 503 SIGNING_KEY_PENDING by route pattern: a token naming a kid the AUTH_JWKS_URL key set does not ' +
      'hold yet, its caller not authenticated; kept out of the error budget.',
    labelNames: ['route'] as const,
    registers: [metrics.registry]
  })
  return request => { pending.inc({ route: request.routeOptions.url ?? 'unmatched' }) }
}

/** The token verifier of the configuration: the key set's, or @fastify/jwt's with the one fixed key. */
async function tokenVerifier (fastify: FastifyInstance, config: Config): Promise<(token: string) => unknown> {
  if (config.AUTH_JWKS_URL === undefined) {
    const { key, algorithm } = verificationKey(config)
    await fastify.register(fastifyJwt, {
      // Verify-only: this service never issues tokens, so no signing key is configured.
      secret: { public: key },
      verify: verifyOptions(config, [algorithm])
    })
    fastify.decorate('keySet', null)
    return token => fastify.jwt.verify(token)
  }
  const keySet = new RemoteKeySet({
    url: config.AUTH_JWKS_URL,
    refreshSeconds: config.AUTH_JWKS_REFRESH_S,
    log: fastify.log.child({ component: 'jwks' }),
    // fast-jwt counts maxAge in milliseconds; @fastify/jwt (the fixed-key path) converts the seconds itself.
    verifierFor: (pem, algorithms) => createVerifier({
      key: pem, ...verifyOptions(config, algorithms), maxAge: config.AUTH_JWT_MAX_AGE_S * 1000
    })
  })
  fastify.decorate('keySet', keySet)
  const metrics = metricsOf(fastify)
  if (metrics !== null) keySetMetrics(metrics.prom, metrics.registry, keySet)
  // Loading starts with the app, not with the first request, and never holds start-up: readiness waits.
  fastify.addHook('onReady', async () => { keySet.start() })
  fastify.addHook('onClose', async () => { await keySet.stop() })
  return keySetVerifier(keySet)
}

export default fp<{ config: Config }>(async function auth (fastify, { config }) {
  const verifyToken = await tokenVerifier(fastify, config)
  const validClaims = Compile(CallerClaims)
  const countPending = fastify.keySet === null ? () => {} : pendingResponses(fastify)

  fastify.decorateRequest('caller', null)
  fastify.decorate('authenticate', async function authenticate (request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers.authorization
    // The scheme is case-insensitive (RFC 7235); one space, then the token.
    if (header === undefined || header.length < 7 || header.slice(0, 7).toLowerCase() !== 'bearer ') {
      throw await fastify.refuseCredentials(request, reply,
        refuse(reply, 'token_missing', 'This endpoint needs an Authorization: Bearer token'))
    }
    const token = header.slice(7).trim()
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      throw await fastify.refuseCredentials(request, reply,
        refuse(reply, 'token_invalid', 'The bearer token is malformed'))
    }
    // Only credentials that fail verification count against the address (refuseCredentials): a token whose
    // signature verified is always answered 401, so apps sharing an address always learn to refresh or sign in.
    let claims: unknown
    try {
      claims = await verifyToken(token)
    } catch (error) {
      if (error instanceof PendingKey) {
        // Anyone can invent a kid, but an honest app meets one in every rotation: counted against the address only
        // once a refresh begun since the kid was first seen still lacks it, and apart from the error budget.
        const thrown = error.lacked ? await fastify.refuseCredentials(request, reply, error) : error
        if (thrown === error) countPending(request)
        throw thrown
      }
      // fast-jwt describes an `exp` far in the past or an `nbf` far in the future with a date Date cannot
      // hold, and throws that RangeError instead of its own error: the token's fault too, not a 500.
      if (!isTokenError(error) && !(error instanceof RangeError) && !(error instanceof KeySetRefusal)) throw error
      // The library's message is not passed on: a fixed text, never any part of the token.
      const expired = isTokenError(error) && error.code === 'FAST_JWT_EXPIRED'
      const refusal = expired
        ? refuse(reply, 'token_expired', 'The bearer token has expired')
        : refuse(reply, 'token_invalid', 'The bearer token is invalid')
      if (isTokenError(error) && AFTER_SIGNATURE.has(error.code)) throw refusal
      throw await fastify.refuseCredentials(request, reply, refusal)
    }
    // The signature has verified: refused without counting, like the claims fast-jwt checks.
    // Both verifiers: fast-jwt alone would let an `iat` ahead of now stretch AUTH_JWT_MAX_AGE_S without end.
    if (issuedInTheFuture(claims, Date.now(), CLOCK_TOLERANCE_MS)) {
      throw refuse(reply, 'token_invalid', 'The bearer token is invalid')
    }
    if (!validClaims.Check(claims)) {
      throw refuse(reply, 'token_invalid', 'The bearer token does not carry valid sub, login and vendor claims')
    }
    request.caller = { vendor: claims.vendor, login: claims.login, uid_client: claims.sub.toUpperCase() }
  })
}, { name: 'auth', dependencies: ['metrics', 'rate-limit'] })
