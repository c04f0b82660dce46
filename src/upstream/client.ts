// The upstream client: operation name + params in, a typed answer or a typed failure out. It applies the
// upstream's rules (docs/upstream.md) to every operation of the registry,
// behind a circuit breaker per operation (breaker.ts). One call goes down this chain:
//   call (a typed result, or the answer's failure thrown, reduced) -> exchange (its span) -> throughBreaker (the
//   breaker, the deadline, the observer; a failure on the wire reduced) -> postAndInterpret (the wire, the learned
//   slash path, the answer checked against the contract).
import { Agent, type Dispatcher } from 'undici'
import { compileOperationContracts, type ContractError, type OperationContracts } from './contract/check.ts'
import { MAX_DEPTH, passThroughValues, passThroughWithinDepth, withinDepth } from './contract/depth.ts'
import { isUpstreamError, upstreamError, type FailureReason, type UpstreamError } from './errors.ts'
import { answerText, parseAnswerJson } from './transport/answer-body.ts'
import { startDeadline, waitWithin, type Deadline } from './transport/deadline.ts'
import {
  elapsed, headerValue, postFollowingRedirects, WireFailure, type Hop, type WireAnswer, type WireRequest
} from './transport/exchange.ts'
import { mediaType, redactor } from './transport/reduce.ts'
import {
  operations, type KeyName, type NotFoundOf, type OperationName, type ParamsOf, type ResponseOf
} from '../../schemas/operations.ts'
import {
  createBreakers, DEFAULT_BREAKER_OPTIONS, NOT_PROBE, type Admission, type BreakerOptions, type BreakerState
} from './breaker.ts'
import { exchangeSpans } from './spans.ts'
import { onlyTracingHeaders, type TracingHeaders } from './transport/tracing-headers.ts'
import { activeTracer } from '../tracing/tracer.ts'

export type { BreakerState }

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

interface CallerOfCall {
  id: string
  login?: string
}

type Outcome = 'ok' | 'not_found' |
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

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

export function createUpstreamClient (options: UpstreamClientOptions) {
  const { keys, timeoutMs, maxBodyBytes = 1024 * 1024, maxRedirects = 1, observer } = options
  const contracts = compileOperationContracts()
  const onBreakerChange = observer?.breaker === undefined ? undefined : observer.breaker.bind(observer)
  const breakerOptions = { ...DEFAULT_BREAKER_OPTIONS, ...options.breaker }
  const breakers = createBreakers(breakerOptions, onBreakerChange, options.breakerNow)
  const keysOnly = redactor(Object.values(keys))
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
  const base = new URL(options.baseUrl)
  const basePath = base.pathname.replace(/\/+$/, '')
  const documented = Object.fromEntries(Object.entries(operations).map(([name, op]) =>
    [name, new URL(basePath + op.path, base)])) as Record<OperationName, URL>
  // The one place each operation may be redirected to (docs/upstream.md, The slash redirect).
  const slashed = Object.fromEntries(Object.entries(documented).map(([name, url]) =>
    [name, new URL(`${url.pathname}/`, url)])) as Record<OperationName, URL>
  // The slash location each operation was redirected to, so later calls take one round trip.
  const learned = new Map<OperationName, URL>()

  /** What of a text may be kept in a failure: the keys and the caller's login redacted. */
  const redactFor = (call: CallOptions, params: unknown): (text: string) => string => {
    const login = call.caller?.login ?? (params as { login?: unknown }).login
    return typeof login === 'string' && login.length > 0 ? redactor([...Object.values(keys), login]) : keysOnly
  }

  /** The whole exchange as data (the console), in its span; only an exchange that got no answer throws. */
  function exchange<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions = {}): Promise<Exchange> {
    return spans === null
      ? throughBreaker(name, params, call)
      : spans.traced(name, () => throughBreaker(name, params, call))
  }

  // The breaker admitted around one call. An ordinary call is one async function (every layer of promises here is
  // paid three times per profile, npm run bench); a probe runs to the upstream's answer under the client's own
  // deadline, its caller waiting at most its own limit: no caller can end a probe and so decide the breaker.
  function throughBreaker<N extends OperationName> (name: N, params: ParamsOf<N>,
    call: CallOptions): Promise<Exchange> {
    let admission: Admission | null = null
    try {
      if (call.breaker !== false) admission = breakers.admit(name, call.caller?.id)
    } catch (error) {
      observeFailure(name, error)
      return Promise.reject(error)
    }
    const limitMs = deadlineMs(call.timeoutMs, timeoutMs)
    if (admission === null || admission === NOT_PROBE) {
      return settled(name, params, call, admission, limitMs, call.signal)
    }
    const started = performance.now()
    const probe = settled(name, params, call, admission, timeoutMs, undefined)
    if (limitMs >= timeoutMs && call.signal === undefined) return probe
    return waitWithin(probe, limitMs, call.signal, timedOut => upstreamError(timedOut ? 'timeout' : 'aborted',
      { operation: name, status: null, redirects: [], duration_ms: elapsed(started) }))
  }

  /** One admitted call under a deadline of `limitMs` and the caller's `signal`, its breaker settled, observed. */
  async function settled<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions,
    admission: Admission | null, limitMs: number, signal: AbortSignal | undefined): Promise<Exchange> {
    const caller = call.caller?.id
    let ex: Exchange
    const limit = startDeadline(limitMs, signal)
    try {
      ex = await postAndInterpret(name, params, call, limit)
    } catch (thrown) {
      const error = thrown instanceof WireFailure
        ? reduced(upstreamFailure(thrown), redactFor(call, params))
        : thrown
      if (admission !== null) breakers.settleError(name, admission, error, limitMs < timeoutMs, caller)
      observeFailure(name, error)
      throw error
    } finally {
      limit.clear()
    }
    if (admission !== null) breakers.settleAnswer(name, admission, ex, caller)
    observer?.exchange?.({
      operation: name,
      outcome: ex.outcome,
      status: ex.status,
      duration_ms: ex.duration_ms,
      hops: ex.redirects.length,
      contractErrors: ex.contract.errors,
      passThrough: ex.outcome === 'ok' ? passThroughValues(ex.body, contracts[name].response.passThrough) : undefined
    })
    return ex
  }

  /** Tells the observer of a call that failed, a call the breaker refused too. */
  function observeFailure (name: OperationName, error: unknown): void {
    if (observer?.exchange === undefined || !isUpstreamError(error)) return
    const { status, redirects, duration_ms: durationMs, contract } = error.exchange
    observer.exchange({
      operation: name,
      outcome: error.reason,
      status,
      duration_ms: durationMs,
      hops: redirects.length,
      contractErrors: contract?.errors ?? []
    })
  }

  async function postAndInterpret<N extends OperationName> (name: N, params: ParamsOf<N>, call: CallOptions,
    limit: Deadline): Promise<Exchange> {
    const op = operations[name]
    const started = performance.now()
    const wire: WireRequest = {
      url: learned.get(name) ?? documented[name],
      headers: {
        // By name here too: a caller that hands over the raw inbound headers must not leak them.
        ...onlyTracingHeaders(call.headers),
        'content-type': 'application/x-www-form-urlencoded',
        'x-authorization': keys[op.key]
      },
      body: JSON.stringify(params),
      deadline: limit,
      maxRedirects,
      redirectTarget: slashed[name],
      maxBodyBytes,
      dispatcher,
      operation: name,
      safeToRepeat: op.safeToRepeat,
      started,
      stopAtRedirect: learned.has(name)
    }
    let answer = await postFollowingRedirects(wire)
    if (wire.stopAtRedirect === true && (answer.status === 404 || (answer.status >= 300 && answer.status < 400))) {
      // The learned location may have moved: start again from the documented path, a new exchange. The learned
      // path is only replaced by one that answered: a fallback that fails proves it wrong no more than right.
      answer = await postFollowingRedirects({ ...wire, url: documented[name], stopAtRedirect: false })
    }
    const result = interpret(name, answer, contracts[name], call.wholeBodyDepth === true)
    if (result.outcome === 'ok' || result.outcome === 'not_found') {
      if (answer.url.href !== documented[name].href) learned.set(name, answer.url)
      else learned.delete(name)
    }
    return {
      operation: name,
      status: answer.status,
      redirects: answer.redirects,
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
    throw reduced(error, redactFor(options, params))
  }

  async function close (): Promise<void> {
    if (options.dispatcher === undefined) await ownDispatcher.close()
  }

  return { exchange, call, close, contracts, breakerStates: breakers.states }
}

const CONTENT_TYPE = 'content type '
const NOT_JSON = ' is not application/json'
/** The contract message of an answer that is not JSON; the exchange (the console) quotes its content type whole. */
const contentTypeMessage = (contentType: string) => CONTENT_TYPE + contentType + NOT_JSON

/** A contract message as a failure keeps it: a content type quoted as its media type (its parameters dropped). */
function reducedMessage (message: string): string {
  if (!message.startsWith(CONTENT_TYPE) || !message.endsWith(NOT_JSON)) return message
  return contentTypeMessage(mediaType(message.slice(CONTENT_TYPE.length, -NOT_JSON.length)))
}

/** The caller's upstream error of a failure on the wire. */
function upstreamFailure (failure: WireFailure): UpstreamError {
  return upstreamError(failure.reason, failure.record, failure.cause)
}

/**
 * A failure as it may be logged: every text the upstream chose (a hop's location, a contract error's path and
 * message, the cause's message) with the keys and the caller's login redacted, a content type as its media type.
 * Its exchange is its own (never the console's Exchange).
 */
function reduced (error: UpstreamError, redact: (text: string) => string): UpstreamError {
  const { exchange } = error
  exchange.redirects = exchange.redirects.map(hop => ({ status: hop.status, location: redact(hop.location) }))
  if (exchange.contract !== undefined) {
    exchange.contract = {
      valid: exchange.contract.valid,
      errors: exchange.contract.errors.map(e => ({ path: redact(e.path), message: redact(reducedMessage(e.message)) }))
    }
  }
  if (error.cause instanceof Error) error.cause.message = redact(error.cause.message)
  return error
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>

/**
 * The deadline of one exchange: the call's, never longer than the client's. A caller passes what is
 * left of its own budget, which may be fractional or spent: rounded up, never below 0.
 */
function deadlineMs (requested: number | undefined, limit: number): number {
  if (requested === undefined || Number.isNaN(requested)) return limit
  return Math.max(0, Math.ceil(Math.min(requested, limit)))
}

/** A body nested too deep is kept as the text received: a string is safe to redact and to show. */
function tooDeep (text: string): Pick<Exchange, 'contract' | 'body' | 'outcome'> {
  return {
    body: text,
    outcome: 'too_deep',
    contract: {
      valid: false,
      errors: [{ path: '/', message: `nests objects or arrays deeper than ${MAX_DEPTH} levels` }]
    }
  }
}

/** Decides what an answer is: the operation's answer, its documented not-found, or a broken contract. */
function interpret (
  name: OperationName, answer: WireAnswer, contract: OperationContracts, wholeBodyDepth: boolean
): Pick<Exchange, 'contract' | 'body' | 'outcome'> {
  const { status } = answer
  const contentType = headerValue(answer.headers['content-type'])
  const expected = status >= 200 && status < 300
    ? { outcome: 'ok' as const, check: contract.response }
    : status === contract.notFound?.status
      ? { outcome: 'not_found' as const, check: contract.notFound.contract }
      : undefined
  let body: unknown
  let parsed = false
  if (contentType !== undefined && JSON_TYPE.test(contentType)) {
    try {
      body = parseAnswerJson(answer.body)
      parsed = true
    } catch {}
  }
  // Decoded as text only for what is shown as text: a body that is not JSON, or nests too deep.
  if (!parsed) body = answerText(answer.body)
  const broken = (outcome: Outcome, message: string, errors = [{ path: '/', message }]) =>
    ({ body, outcome, contract: { valid: false, errors } })
  if (expected === undefined) return broken('status', `HTTP ${status} is not an answer of ${name}`)
  if (contentType === undefined || !JSON_TYPE.test(contentType)) {
    return broken('content_type', contentTypeMessage(contentType ?? '(none)'))
  }
  if (!parsed) return broken('json', 'the body is not valid JSON')
  // Before anything recurses over it (the console's redaction, serialization). The schema check itself
  // only descends where the schema does; its error walk too.
  if (wholeBodyDepth && !withinDepth(body, MAX_DEPTH)) return tooDeep(answerText(answer.body))
  if (!expected.check.check(body)) return broken('contract', '', expected.check.errors(body))
  if (!wholeBodyDepth && !passThroughWithinDepth(body, expected.check.passThrough, MAX_DEPTH)) {
    return tooDeep(answerText(answer.body))
  }
  return { body, outcome: expected.outcome, contract: VALID }
}

/** The contract report of every answer that meets its schema: one frozen object, not one per call. */
const VALID: Exchange['contract'] = Object.freeze({
  valid: true, errors: Object.freeze([]) as unknown as ContractError[]
})
