// The upstream work of one profile (design.md section 4): the passport lookup for the token's client,
// then the discount and contractor lookups in parallel, all under one time budget.
import type { FastifyBaseLogger } from 'fastify'
import type { Profile } from '../../schemas/profile.ts'
import { ClientNotFoundError } from '../errors.ts'
import type { Caller } from '../plugins/app/auth.ts'
import type { CallOptions, UpstreamClient } from '../upstream/client.ts'
import { isUpstreamError, upstreamError } from '../upstream/errors.ts'
import type { TracingHeaders } from '../upstream/transport/tracing-headers.ts'
import { contractorSection, discountSection, type DealerSections, type ProfileComposer } from './compose.ts'

/** A profile ready to send: shared read-only by every request of one single-flight run. */
export interface LoadedProfile {
  profile: Profile
  /** The x-degraded header value, undefined when nothing is degraded. */
  degraded: string | undefined
}

export interface LoadContext {
  upstream: UpstreamClient
  composer: ProfileComposer
  budgetMs: number
}

/**
 * Loads one profile under a budget that starts now. `run` is the single-flight run's own controller:
 * aborted when every waiter has left, and here by the budget, so the calls watch one signal.
 */
export async function loadProfile (ctx: LoadContext, caller: Caller, headers: TracingHeaders,
  run: AbortController, log: FastifyBaseLogger): Promise<LoadedProfile> {
  const { upstream, budgetMs } = ctx
  const started = performance.now()
  // A timer, not AbortSignal.timeout(): Node 24 retains composite timeout signals (docs/performance.md).
  const timer = setTimeout(() => { run.abort(new DOMException('The profile budget ran out', 'TimeoutError')) }, budgetMs)
  timer.unref()
  const signal = run.signal
  try {
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
async function loadDealerSections (upstream: UpstreamClient, uid: string, options: CallOptions,
  log: FastifyBaseLogger): Promise<DealerSections> {
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
  if (isUpstreamError(error)) {
    log.warn({ section, code: error.code, reason: error.reason, upstream: error.exchange }, 'profile section degraded')
  } else {
    log.error({ section, err: error }, 'profile section degraded by an unexpected error')
  }
}
