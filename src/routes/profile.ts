// GET /api/users/profile (design.md section 4): the passport lookup for the token's client, then the
// discount and contractor lookups in parallel, all under one time budget, composed into the Profile.
// Concurrent requests of one client share that work (single-flight); each still gets its own answer.
import type {} from '@fastify/swagger'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger } from 'fastify'
import type { TSchema } from 'typebox'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import {
  ClientNotFoundError, InternalError, RateLimitedError, ServiceUnavailableError, UnauthorizedError, UpstreamBadResponseError,
  UpstreamTimeoutError, UpstreamUnavailableError
} from '../errors.ts'
import { callerOf, type Caller } from '../plugins/app/auth.ts'
import { errorResponse } from '../plugins/external/docs.ts'
import { OVERLOADED, shedHeaders } from '../plugins/external/load-shedding.ts'
import { limitHeaders, profileRateLimit, RATE_LIMITED_EXAMPLE } from '../plugins/external/rate-limit.ts'
import { ref } from '../plugins/app/shared-schemas.ts'
import { contractorSection, createProfileComposer, discountSection, type DealerSections, type ProfileComposer } from '../profile/compose.ts'
import { createSingleFlight } from '../profile/single-flight.ts'
import { profileSpans } from '../profile/spans.ts'
import { activeTracer } from '../tracing/tracer.ts'
import type { CallOptions, UpstreamClient } from '../upstream/client.ts'
import { isUpstreamError, upstreamError } from '../upstream/errors.ts'
import { pickTracingHeaders, type TracingHeaders } from '../upstream/transport/tracing-headers.ts'

/** The front schemas this route answers with, registered as shared schemas. */
export const profileSchemas: TSchema[] = [Profile]

const description = `The profile of the client the bearer token names (claims \`sub\`, \`login\`, \`vendor\`); nothing in the
query or headers can name another client.

The passport lookup comes first: an unknown client is 404 \`CLIENT_NOT_FOUND\`, and a passport failure is
502 \`UPSTREAM_BAD_RESPONSE\`, 503 \`UPSTREAM_UNAVAILABLE\` or 504 \`UPSTREAM_TIMEOUT\`. The discount and
contractor lookups then run in parallel; when one fails its section is \`null\` and named in \`degraded\` and in
the \`x-degraded\` header (a comma list, absent when nothing is degraded), and the answer is still 200.
One time budget covers the whole request.`

const UNAUTHORIZED_EXAMPLE = 'The bearer token has expired'
const EXAMPLE_OPERATION = 'passport.get_client'

const responses = {
  200: {
    description: 'The profile. A section named in `degraded` could not be loaded and is null.',
    headers: {
      'x-degraded': {
        type: 'string' as const,
        description: 'The `degraded` list as a comma list (`discount`, `contractor` or `discount,contractor`); absent when nothing is degraded.',
        examples: ['contractor']
      }
    },
    content: { 'application/json': { schema: ref(Profile) } }
  },
  401: errorResponse('No bearer token, or one that is malformed, expired, wrongly signed, of another algorithm, or without valid claims.',
    [new UnauthorizedError(UNAUTHORIZED_EXAMPLE)],
    { 'www-authenticate': { type: 'string', description: '`Bearer`, with `error="invalid_token"` when a token was sent but refused (RFC 6750).', examples: ['Bearer error="invalid_token"'] } }),
  404: errorResponse('The passport service does not know the client the token names.', [new ClientNotFoundError()]),
  500: errorResponse('An unexpected failure of the service; the request id finds it in the logs.', [new InternalError()]),
  502: errorResponse('The passport answer was unusable: an error status, not JSON, or outside its contract.', [new UpstreamBadResponseError(EXAMPLE_OPERATION)]),
  503: errorResponse('The passport service could not be reached, or its circuit breaker is open (with `Retry-After`: seconds until its next probe), or the service is shedding load (with `Retry-After`).',
    [new UpstreamUnavailableError(EXAMPLE_OPERATION), new ServiceUnavailableError(OVERLOADED)],
    { 'retry-after': { ...shedHeaders()['retry-after'], description: 'Seconds to wait before retrying; sent when the service sheds load, and while the passport\'s circuit breaker is open (until its next probe).' } }),
  504: errorResponse('The passport service did not answer within its deadline or the profile budget.', [new UpstreamTimeoutError(EXAMPLE_OPERATION)])
}

/** A profile ready to send: shared read-only by every request of one single-flight run. */
interface LoadedProfile {
  profile: Profile
  /** The x-degraded header value, undefined when nothing is degraded. */
  degraded: string | undefined
}

interface LoadContext {
  upstream: UpstreamClient
  composer: ProfileComposer
  budgetMs: number
}

/**
 * The upstream work of one profile: the passport, then the dealers, under one budget that starts now.
 * `run` is the single-flight run's own controller: aborted when every waiter has left, and by the budget
 * here; its calls carry the starting request's headers.
 */
async function loadProfile (ctx: LoadContext, caller: Caller, headers: TracingHeaders, run: AbortController, log: FastifyBaseLogger): Promise<LoadedProfile> {
  const { upstream, budgetMs } = ctx
  const started = performance.now()
  // Our own timer rather than AbortSignal.timeout(): Node 24 never frees a composite signal that has a
  // timeout signal among its sources once it feeds another AbortSignal.any() (the client's per-call
  // deadline), about 400 bytes lost per profile (one of the AbortSignal.any() retention bugs, cf.
  // nodejs/node#54614). Found by the soak.
  // The budget ends the run's own controller: one controller ended by either cause (the waiters gone, the
  // budget spent) gives the calls one signal and its reason, with no second controller linked to it.
  const timer = setTimeout(() => { run.abort(new DOMException('The profile budget ran out', 'TimeoutError')) }, budgetMs)
  timer.unref()
  const signal = run.signal
  try {
    // The passport call is capped at UPSTREAM_TIMEOUT_MS by the client, and by the budget through `signal`.
    const passport = await upstream.call('passport.get_client',
      { vendor: caller.vendor, login: caller.login, uid_client: caller.uid_client }, { headers, signal })
    if (passport.kind === 'not_found') throw new ClientNotFoundError()
    const found = passport.value
    // Another client's record must never reach this caller, whatever the upstream does.
    if (found.uid_client.toUpperCase() !== caller.uid_client) {
      const { operation, status, redirects, duration_ms: duration } = passport.exchange
      throw upstreamError('contract', { operation, status, redirects, duration_ms: duration })
    }

    // The dealers get what is left of the budget; when nothing is, they fail at once and are degraded.
    const remaining = Math.max(1, Math.floor(budgetMs - (performance.now() - started)))
    const sections = await loadDealerSections(upstream, caller.uid_client, { headers, signal, timeoutMs: remaining }, log)
    return {
      profile: ctx.composer.compose(found, sections),
      degraded: sections.degraded.length > 0 ? sections.degraded.join(',') : undefined
    }
  } finally {
    clearTimeout(timer)
  }
}

/** Discount and contractor in parallel; a failure of either is a degraded section, never an error. */
async function loadDealerSections (upstream: UpstreamClient, uid: string, options: CallOptions, log: FastifyBaseLogger): Promise<DealerSections> {
  const params = { uid_client: uid }
  const [discount, contractor] = await Promise.allSettled([
    upstream.call('dealer.discount', params, options),
    upstream.call('dealer.client', params, options)
  ])
  const sections: DealerSections = { discount: null, contractor: null, degraded: [] }
  if (discount.status === 'fulfilled') {
    if (discount.value.kind === 'ok') sections.discount = discountSection(discount.value.value)
  } else {
    sections.degraded.push('discount')
    logDegraded(log, 'discount', discount.reason)
  }
  if (contractor.status === 'fulfilled') {
    if (contractor.value.kind === 'ok') sections.contractor = contractorSection(contractor.value.value)
  } else {
    sections.degraded.push('contractor')
    logDegraded(log, 'contractor', contractor.reason)
  }
  return sections
}

function logDegraded (log: FastifyBaseLogger, section: string, error: unknown): void {
  if (isUpstreamError(error)) log.warn({ section, code: error.code, reason: error.reason, upstream: error.exchange }, 'profile section degraded')
  else log.error({ section, err: error }, 'profile section degraded by an unexpected error')
}

const profile: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  const ctx: LoadContext = { upstream: fastify.upstream, composer: createProfileComposer(), budgetMs: config.PROFILE_TIMEOUT_MS }
  // Keyed by everything the upstream calls are made of: the token's uid_client, login and vendor.
  const flights = createSingleFlight<LoadedProfile>()
  // Decided once: with tracing off, `spans` is null and a request makes no span work at all.
  const tracer = activeTracer()
  const spans = tracer === null ? null : profileSpans(tracer)

  fastify.get('/api/users/profile', {
    onRequest: fastify.authenticate,
    config: profileRateLimit(config),
    schema: {
      operationId: 'getProfile',
      tags: ['profile'],
      summary: "The caller's client profile",
      description,
      security: [{ bearerAuth: [] }],
      response: {
        ...responses,
        429: errorResponse('Too many profile requests for this client (token `sub`) this minute, or too many refused tokens from this address.',
          [new RateLimitedError(RATE_LIMITED_EXAMPLE)], limitHeaders(config.RATE_LIMIT_PROFILE_PER_MINUTE))
      }
    }
  }, async function getProfile (request, reply) {
    const caller = callerOf(request)
    // None of the three parts can hold a space (UUID, digits, vendor code): the key is unambiguous.
    const key = `${caller.uid_client} ${caller.login} ${caller.vendor}`
    const span = spans === null ? null : spans.start()
    const joined = flights.join(key, request.id, run => {
      const headers = pickTracingHeaders(request.headers)
      headers['x-request-id'] = request.id
      return span === null
        ? loadProfile(ctx, caller, headers, run, request.log)
        : span.run(() => loadProfile(ctx, caller, headers, run, request.log))
    })
    // The upstream saw the starting request's id: this line ties a joiner's answer to it.
    if (joined.sharedWith !== undefined) request.log.debug({ sharedWith: joined.sharedWith }, 'profile shared with a request in flight')
    const res = reply.raw
    // on(), not once(): the answer closes once, and once() wraps the listener in one more closure.
    res.on('close', () => { if (!res.writableFinished) joined.leave() })

    const { profile, degraded } = await (span === null ? joined.result : span.follow(joined))
    if (degraded !== undefined) reply.header('x-degraded', degraded)
    // Personal data: no shared cache may keep it.
    reply.header('cache-control', 'private, no-store')
    return profile
  })
}

export default profile
