// The caller's passport record, the rules every route over the passport keeps: the lookup is the token's own client
// (`uid_client`, `login`, `vendor` of the verified token, nothing else), under the caller's time budget; an unknown
// client is CLIENT_NOT_FOUND and its last-known copy is forgotten; a record about another client is never shown
// (a bad upstream answer, 502) and forgets the copy too. The profile flow (load.ts) and any route over the passport
// (fastify.passport, plugins/app/profile.ts) go through here.
import type { ResponseOf } from '../../schemas/operations.ts'
import type { Caller } from '../auth/caller.ts'
import { ClientNotFoundError } from '../errors.ts'
import { callerKey } from '../upstream/breaker.ts'
import type { CallerOfCall, CallResult } from '../upstream/call-types.ts'
import type { TracingHeaders, UpstreamClient } from '../upstream/client.ts'
import { upstreamError } from '../upstream/errors.ts'
import type { LastKnown } from './last-known/last-known.ts'

/** The passport's answer about the caller, before its rules are applied. */
type PassportResponse = CallResult<'passport.get_client'>

/** The passport's record of a client (the `Client` schema of schemas/passport.ts). */
export type PassportRecord = ResponseOf<'passport.get_client'>

interface LookupOptions {
  /** The inbound request's tracing headers (`fastify.upstream.forwardedHeaders`). */
  headers: TracingHeaders
  /** The caller leaving, or a budget of the caller's own: the lookup ends with it. */
  signal?: AbortSignal
  /** A deadline shorter than the client's; recordOf() sets the caller's budget (PROFILE_TIMEOUT_MS). */
  timeoutMs?: number
  /** The caller as the flow's other calls name it (upstreamCallerOf), so a request makes its breaker key once. */
  upstreamCaller?: Required<CallerOfCall>
}

export interface PassportRecords {
  /** The caller's own record under the caller's budget: CLIENT_NOT_FOUND, or a 502 for another client's record. */
  recordOf (caller: Caller, options: LookupOptions): Promise<PassportRecord>
  /** The passport's answer about the caller (a failure thrown): for a flow that falls back on a copy first. */
  lookup (caller: Caller, options: LookupOptions): Promise<PassportResponse>
  /** The record of an answer, or CLIENT_NOT_FOUND or a 502 thrown, forgetting the copy in either case. */
  accept (caller: Caller, response: PassportResponse): PassportRecord
}

/**
 * Who an upstream call is for: the breakers bound this caller's share by its key, a digest of `id` made here once
 * for every call of a request; failures redact its `login`.
 */
export function upstreamCallerOf (caller: Caller): Required<CallerOfCall> {
  return { id: caller.uid_client, login: caller.login, key: callerKey(caller.uid_client) }
}

export function createPassportRecords (options: {
  upstream: UpstreamClient
  /** Null when last-known copies are off. */
  lastKnown: LastKnown | null
  /** The caller's time budget (PROFILE_TIMEOUT_MS). */
  budgetMs: number
}): PassportRecords {
  const { upstream, lastKnown, budgetMs } = options

  function lookup (caller: Caller, lookupOptions: LookupOptions): Promise<PassportResponse> {
    const { headers, signal, timeoutMs, upstreamCaller = upstreamCallerOf(caller) } = lookupOptions
    return upstream.call('passport.get_client',
      { vendor: caller.vendor, login: caller.login, uid_client: caller.uid_client }, {
        headers,
        ...(signal === undefined ? {} : { signal }),
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        caller: upstreamCaller
      })
  }

  function accept (caller: Caller, response: PassportResponse): PassportRecord {
    if (response.kind === 'not_found') {
      // The account is gone: so is its copy.
      lastKnown?.forget(caller)
      throw new ClientNotFoundError()
    }
    // Another client's record must never reach this caller, whatever the upstream does.
    if (response.value.uid_client.toUpperCase() !== caller.uid_client) {
      lastKnown?.forget(caller)
      const { operation, status, redirects, duration_ms: duration } = response.exchange
      throw upstreamError('contract', { operation, status, redirects, duration_ms: duration })
    }
    return response.value
  }

  return {
    async recordOf (caller, { timeoutMs = budgetMs, ...rest }) {
      return accept(caller, await lookup(caller, { ...rest, timeoutMs }))
    },
    lookup,
    accept
  }
}
