// The shapes of an upstream call: what a caller may ask of it, the exchange it makes, and what an observer is told.
import type { NotFoundOf, OperationName, ResponseOf } from '../../schemas/operations.ts'
import type { BreakerState } from './breaker.ts'
import type { ContractError } from './contract/check.ts'
import type { FailureReason } from './errors.ts'
import type { Hop } from './transport/exchange.ts'
import type { TracingHeaders } from './transport/tracing-headers.ts'

/** One ended exchange, as metrics see it: no params, no body, no key. */
export interface ExchangeEvent {
  operation: OperationName
  /** `ok`, `not_found`, or why it failed. */
  outcome: Outcome | FailureReason
  /** The final HTTP status, null when no answer arrived. */
  status: number | null
  duration_ms: number
  hops: number
  contractErrors: ContractError[]
  /**
   * Of an `ok` exchange, the parts its schema passes on whole (depth.ts), each with the index of its path
   * in the contract's `passThrough`: metrics count new key paths in them. Nothing else of the body.
   */
  passThrough?: Array<[number, unknown]>
}

export interface UpstreamObserver {
  /** Every call as it ends, a call the breaker refused too (outcome `breaker_open`, no hop, 0 ms). */
  exchange? (event: ExchangeEvent): void
  /** Every change of an operation's breaker; each starts `closed`. */
  breaker? (operation: OperationName, state: BreakerState): void
}

export interface CallOptions {
  headers?: TracingHeaders
  /** The caller's own limit (the profile budget); the exchange ends at whichever comes first. */
  signal?: AbortSignal
  /** A shorter deadline than the client's, never a longer one. */
  timeoutMs?: number
  /**
   * false: past the breaker, neither refused by it nor counted (the console: an operator diagnosing an
   * incident must see the real upstream, and must not open or close the breaker of live traffic).
   */
  breaker?: boolean
  /**
   * true: the whole body is bounded in depth, not only the parts the schema passes through (the console
   * redacts and shows every part of it, undescribed extra fields included).
   */
  wholeBodyDepth?: boolean
  /**
   * Who the call is for (the profile flow's caller). `id` (the token's subject) bounds that caller's share of
   * the breaker and its probes, kept only as a hash; `login` is redacted from every failure, as the keys are.
   */
  caller?: CallerOfCall
}

export interface CallerOfCall {
  id: string
  login?: string
  /** The breakers' key of `id` (`callerKey`), made once by a flow that calls for the same caller more than once. */
  key?: string
}

export type Outcome = 'ok' | 'not_found' |
  Extract<FailureReason, 'status' | 'content_type' | 'json' | 'contract' | 'too_deep'>

/** The whole exchange as the console shows it: every answer that arrived is data here. */
export interface Exchange {
  operation: OperationName
  status: number
  redirects: Hop[]
  duration_ms: number
  contract: { valid: boolean, errors: ContractError[] }
  body: unknown
  outcome: Outcome
}

export type CallResult<N extends OperationName> =
  | { kind: 'ok', value: ResponseOf<N>, exchange: Exchange }
  | { kind: 'not_found', value: NotFoundOf<N>, exchange: Exchange }
