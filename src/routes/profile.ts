// GET /api/users/profile (design.md section 4): the passport lookup for the token's client, then the
// discount and contractor lookups in parallel, all under one time budget, composed into the Profile.
import type {} from '@fastify/swagger'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { TSchema } from 'typebox'
import { Profile } from '../../schemas/profile.ts'
import type { Config } from '../config.ts'
import { ClientNotFoundError, InternalError, UnauthorizedError, UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError } from '../errors.ts'
import { callerOf } from '../plugins/auth.ts'
import { errorResponse } from '../plugins/docs.ts'
import { ref } from '../plugins/shared-schemas.ts'
import { contractorSection, createProfileComposer, discountSection, type DealerSections } from '../profile/compose.ts'
import type { CallOptions, UpstreamClient } from '../upstream/client.ts'
import { isUpstreamError, upstreamError } from '../upstream/errors.ts'
import { pickTracingHeaders } from '../upstream/tracing.ts'

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
  503: errorResponse('The passport service could not be reached.', [new UpstreamUnavailableError(EXAMPLE_OPERATION)]),
  504: errorResponse('The passport service did not answer within its deadline or the profile budget.', [new UpstreamTimeoutError(EXAMPLE_OPERATION)])
}

/** Aborts the upstream calls when the budget ends or the caller goes away before its answer. */
function requestSignal (reply: FastifyReply, budgetMs: number): AbortSignal {
  const gone = new AbortController()
  const res = reply.raw
  res.once('close', () => { if (!res.writableFinished) gone.abort() })
  return AbortSignal.any([AbortSignal.timeout(budgetMs), gone.signal])
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
  const composer = createProfileComposer()
  const budgetMs = config.PROFILE_TIMEOUT_MS

  fastify.get('/api/users/profile', {
    onRequest: fastify.authenticate,
    schema: {
      operationId: 'getProfile',
      tags: ['profile'],
      summary: "The caller's client profile",
      description,
      security: [{ bearerAuth: [] }],
      response: responses
    }
  }, async function getProfile (request, reply) {
    const caller = callerOf(request)
    const started = performance.now()
    const headers = pickTracingHeaders(request.headers)
    headers['x-request-id'] = request.id
    const signal = requestSignal(reply, budgetMs)

    // The passport call is capped at UPSTREAM_TIMEOUT_MS by the client, and by the budget through `signal`.
    const passport = await fastify.upstream.call('passport.get_client',
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
    const sections = await loadDealerSections(fastify.upstream, caller.uid_client, { headers, signal, timeoutMs: remaining }, request.log)

    if (sections.degraded.length > 0) reply.header('x-degraded', sections.degraded.join(','))
    // Personal data: no shared cache may keep it.
    reply.header('cache-control', 'private, no-store')
    return composer.compose(found, sections)
  })
}

export default profile
