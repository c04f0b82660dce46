// The upstream client: operation name + params in, a typed answer or a typed failure out. It applies the
// upstream's rules (docs/upstream.md) to every operation of the registry, behind a circuit breaker per operation
// (breaker.ts), each job in its module. One call goes down this chain:
//   call (a typed result, or the answer's failure thrown, redacted-failure.ts) -> exchange (its span, spans.ts) ->
//   the call through the breaker (breaker-call.ts: the breaker, the deadline, the observer) -> post (the wire,
//   transport/, to the learned slash path, slash-paths.ts) -> the answer interpreted (interpret.ts, the contract).
import type { IncomingHttpHeaders } from 'node:http'
import { Agent, type Dispatcher } from 'undici'
import {
  operations, type KeyName, type NotFoundOf, type OperationName, type ParamsOf, type ResponseOf
} from '../../schemas/operations.ts'
import { activeTracer } from '../tracing/tracer.ts'
import { createBreakers, DEFAULT_BREAKER_OPTIONS, isServedOutcome, type BreakerOptions } from './breaker.ts'
import { createBreakerCall } from './breaker-call.ts'
import type { CallOptions, CallResult, Exchange, ExchangeEvent, UpstreamObserver } from './call-types.ts'
import { compileOperationContracts } from './contract/check.ts'
import { upstreamError } from './errors.ts'
import { interpret } from './interpret.ts'
import { failureRedaction, redacted } from './redacted-failure.ts'
import { createSlashPaths } from './slash-paths.ts'
import { exchangeSpans } from './spans.ts'
import type { Deadline } from './transport/deadline.ts'
import { elapsed, type WireRequest } from './transport/exchange.ts'
import { onlyTracingHeaders, pickTracingHeaders, type TracingHeaders } from './transport/tracing-headers.ts'

export type { BreakerState } from './breaker.ts'
export type { CallOptions, Exchange, ExchangeEvent, TracingHeaders, UpstreamObserver }

export interface UpstreamClientOptions {
  baseUrl: string
  keys: Record<KeyName, string>
  /** Deadline of one exchange, redirects included. */
  timeoutMs: number
  maxBodyBytes?: number
  /** Hops allowed (default 1: the upstream's only redirect is to the documented path with a slash). */
  maxRedirects?: number
  /** Keep-alive connections per origin of the owned Agent. */
  connections?: number
  /** Used instead of an owned Agent (tests pass a MockAgent); the caller closes it. */
  dispatcher?: Dispatcher
  /** Told of every exchange as it ends (metrics, logs); must not throw. */
  observer?: UpstreamObserver
  /** The circuit breaker of each operation; DEFAULT_BREAKER_OPTIONS for what is left out. */
  breaker?: Partial<BreakerOptions>
  /** The breakers' clock, epoch milliseconds: Date.now but in tests, which move it instead of sleeping. */
  breakerNow?: () => number
}

export function createUpstreamClient (options: UpstreamClientOptions) {
  const { keys, timeoutMs, maxBodyBytes = 1024 * 1024, maxRedirects = 1, observer } = options
  const contracts = compileOperationContracts()
  const onBreakerChange = observer?.breaker === undefined ? undefined : observer.breaker.bind(observer)
  const breakerOptions = { ...DEFAULT_BREAKER_OPTIONS, ...options.breaker }
  const breakers = createBreakers(breakerOptions, onBreakerChange, options.breakerNow)
  const redactFor = failureRedaction(Object.values(keys))
  const ownDispatcher = options.dispatcher ?? new Agent({
    connections: options.connections ?? 128,
    keepAliveTimeout: 10_000,
    // Our deadline ends every exchange; undici's own 300 s timeouts only back it up.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs
  })
  // Tracing is decided once, here: off, calls take the untraced path with no span work at all.
  const tracer = activeTracer()
  const spans = tracer === null ? null : exchangeSpans(tracer, breakers.states)
  const dispatcher = spans === null ? ownDispatcher : spans.dispatcher(ownDispatcher)
  const paths = createSlashPaths(options.baseUrl)
  const throughBreaker = createBreakerCall({ breakers, timeoutMs, contracts, observer, redactFor, post })

  /**
   * The headers every call for an inbound request forwards: its tracing headers that are well formed (the only ones
   * that travel, tracing-headers.ts) and the request's id. Picked once per request, handed to each of its calls.
   */
  function forwardedHeaders (inbound: IncomingHttpHeaders, requestId: string): TracingHeaders {
    const headers = pickTracingHeaders(inbound)
    headers['x-request-id'] = requestId
    return headers
  }

  /** The whole exchange as data (the console), in its span; only an exchange that got no answer throws. */
  function exchange<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions = {}): Promise<Exchange> {
    return spans === null
      ? throughBreaker(name, params, call)
      : spans.traced(name, () => throughBreaker(name, params, call))
  }

  /** The POST of one call, within its deadline, and its answer interpreted. */
  async function post<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions,
    limit: Deadline): Promise<Exchange> {
    const op = operations[name]
    const started = performance.now()
    const wire: WireRequest = {
      url: paths.url(name),
      headers: {
        // By name here too: a caller that hands over the raw inbound headers must not leak them.
        ...onlyTracingHeaders(call.headers),
        'content-type': 'application/x-www-form-urlencoded',
        'x-authorization': keys[op.key]
      },
      body: JSON.stringify(params),
      deadline: limit,
      maxRedirects,
      redirectTarget: paths.redirectTarget(name),
      maxBodyBytes,
      dispatcher,
      operation: name,
      safeToRepeat: op.safeToRepeat,
      started,
      stopAtRedirect: paths.learned(name)
    }
    const response = await paths.post(name, wire)
    const result = interpret(name, response, contracts[name], call.wholeBodyDepth === true)
    if (isServedOutcome(result.outcome)) paths.learn(name, response)
    return {
      operation: name,
      status: response.status,
      redirects: response.redirects,
      duration_ms: elapsed(started),
      contract: result.contract,
      body: result.body,
      outcome: result.outcome
    }
  }

  /** The operation's answer or documented not-found; any other answer is thrown as its reduced failure. */
  async function call<N extends OperationName> (name: N, params: ParamsOf<N>,
    options: CallOptions = {}): Promise<CallResult<N>> {
    const ex = await exchange(name, params, options)
    if (ex.outcome === 'ok') return { kind: 'ok', value: ex.body as ResponseOf<N>, exchange: ex }
    if (ex.outcome === 'not_found') return { kind: 'not_found', value: ex.body as NotFoundOf<N>, exchange: ex }
    const { status, redirects, duration_ms: durationMs, contract } = ex
    const error = upstreamError(ex.outcome, { operation: name, status, redirects, duration_ms: durationMs, contract })
    throw redacted(error, redactFor(options, params))
  }

  async function close (): Promise<void> {
    if (options.dispatcher === undefined) await ownDispatcher.close()
  }

  return { exchange, call, forwardedHeaders, close, contracts, breakerStates: breakers.states }
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>
