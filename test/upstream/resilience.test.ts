// The client's resilience: the circuit breaker of each operation against a MockAgent upstream (what
// counts, the failure rate and minimum volume that open it, one caller's share of it, that an open breaker
// sends nothing, the half-open probe and who may be it), on a clock the tests move (no test sleeps on the
// breaker), and the one retry of a connection that failed before any answer, over real sockets where the
// connection is what matters.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import {
  createUpstreamClient, type BreakerState, type ExchangeEvent, type UpstreamClient,
  type UpstreamClientOptions
} from '../../src/upstream/client.ts'
import { isUpstreamError, type UpstreamError } from '../../src/upstream/errors.ts'
import type { OperationName } from '../../schemas/operations.ts'
import {
  callerShare, createBreakers, DEFAULT_BREAKER_OPTIONS, NOT_PROBE, reopeningProbes, SERVED_CALLERS, type Breakers
} from '../../src/upstream/breaker.ts'
import { upstreamError } from '../../src/upstream/errors.ts'
import { operations } from '../../schemas/operations.ts'
import { startDeadline } from '../../src/upstream/transport/deadline.ts'
import { postFollowingRedirects, WireFailure } from '../../src/upstream/transport/exchange.ts'
import { JSON_UTF8, KEYS, mockUpstream, ORIGIN } from '../helpers/upstream-mock.ts'
import { listenLocally } from '../helpers/local-server.ts'

const PASSPORT = '/bc_passport/get_client'
const DISCOUNT = '/bc_api_web_service/discount'
const HALF_OPEN_MS = 10_000
const TEXT = { 'content-type': 'text/plain' }

const discount = (client: UpstreamClient, options?: Parameters<UpstreamClient['call']>[2]) =>
  client.call('dealer.discount', fx.dealerParams, options)
const passport = (client: UpstreamClient, options?: Parameters<UpstreamClient['call']>[2]) =>
  client.call('passport.get_client', fx.passportParams, options)

async function failure (promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(() => undefined, (err: unknown) => err)
  if (!isUpstreamError(error)) throw new Error(`expected an upstream error, got ${String(error)}`)
  return error
}

/**
 * A MockAgent upstream whose client opens a breaker when more than half of at least `minCalls` calls in
 * a minute failed, on a clock only `advance` moves; events recorded.
 */
function breakerUpstream (t: Test, minCalls: number, options: Partial<UpstreamClientOptions> = {}) {
  const transitions: Array<[OperationName, BreakerState]> = []
  const events: ExchangeEvent[] = []
  let now = 1_700_000_000_000
  const up = mockUpstream(t, {
    breaker: { failureRatePercent: 50, minCalls, windowMs: 60_000, halfOpenAfterMs: HALF_OPEN_MS },
    breakerNow: () => now,
    observer: {
      exchange: event => { events.push(event) },
      breaker: (operation, state) => { transitions.push([operation, state]) }
    },
    ...options
  })
  return { ...up, transitions, events, advance: (ms: number) => { now += ms } }
}

/** Call options of the n-th of several callers (the profile flow names each by the token's subject). */
const as = (n: number, options: Parameters<UpstreamClient['call']>[2] = {}) =>
  ({ ...options, caller: { id: `3F2504E0-4F89-41D3-9A0C-0305E82C33${String(n).padStart(2, '0')}` } })

/** The call is refused by an open breaker: 503 UPSTREAM_UNAVAILABLE, and nothing reached the upstream. */
async function refused (t: Test, up: ReturnType<typeof breakerUpstream>, promise: Promise<unknown>) {
  const sent = up.calls().length
  const error = await failure(promise)
  t.equal(error.reason, 'breaker_open')
  t.equal(error.statusCode, 503)
  t.equal(error.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(up.calls().length, sent, 'nothing sent')
  return error
}

/** The Retry-After, in seconds, the answer to `error` carries (an open breaker's refusal sets it); else undefined. */
function retryAfterOf (error: unknown): number | undefined {
  const value = (error as { headers?: Record<string, string> }).headers?.['retry-after']
  return value === undefined ? undefined : Number(value)
}

type Arrange = (up: ReturnType<typeof breakerUpstream>, times: number) => void

// What says the operation is down for every caller.
const UNAVAILABLE: Array<[string, Arrange, Partial<UpstreamClientOptions>?]> = [
  ['status', (up, n) => up.post(DISCOUNT).reply(500, 'Internal Server Error', { headers: TEXT }).times(n)],
  ['timeout', (up, n) => up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(500).times(n),
    { timeoutMs: 30 }],
  ['connect', (up, n) =>
    up.post(DISCOUNT).replyWithError(Object.assign(new Error('getaddrinfo ENOTFOUND upstream.test'),
      { code: 'ENOTFOUND' })).times(n)],
  ['redirect_refused', (up, n) => up.post(DISCOUNT).reply(307, '', { headers: { location: `http://elsewhere.test${DISCOUNT}/` } }).times(n)],
  ['redirect_loop', (up, n) => up.post(DISCOUNT).reply(307, '', { headers: { location: `${DISCOUNT}/` } }).times(n),
    { maxRedirects: 0 }],
  ['redirect_invalid', (up, n) => up.post(DISCOUNT).reply(302, '', { headers: { location: `${DISCOUNT}/` } }).times(n)]
]

// What is wrong with one record's answer: the upstream answered.
const BROKEN_RECORD: Array<[string, Arrange, Partial<UpstreamClientOptions>?]> = [
  ['status', (up, n) => up.post(DISCOUNT).reply(422, '{"error":"unprocessable"}', { headers: JSON_UTF8 }).times(n)],
  ['content_type',
    (up, n) => up.post(DISCOUNT).reply(200, '<html></html>', { headers: { 'content-type': 'text/html' } }).times(n)],
  ['json', (up, n) => up.post(DISCOUNT).reply(200, '{"success": tr', { headers: JSON_UTF8 }).times(n)],
  ['contract', (up, n) => up.post(DISCOUNT).reply(200, { success: 'yes' }, { headers: JSON_UTF8 }).times(n)],
  ['too_large',
    (up, n) => up.post(DISCOUNT).reply(200, JSON.stringify({ ...fx.discountNone, message: 'x'.repeat(2048) }),
      { headers: JSON_UTF8 }).times(n), { maxBodyBytes: 1024 }]
]

t.test('what says the operation is unavailable counts: at min-calls failures the breaker ' +
  'opens, then sends nothing', async t => {
  for (const [reason, arrange, options] of UNAVAILABLE) {
    t.test(reason, async t => {
      const up = breakerUpstream(t, 3, options)
      arrange(up, 3)
      for (let i = 0; i < 2; i++) t.equal((await failure(discount(up.client))).reason, reason)
      t.equal(up.client.breakerStates()['dealer.discount'], 'closed', 'below the minimum volume')
      t.equal((await failure(discount(up.client))).reason, reason)
      t.equal(up.client.breakerStates()['dealer.discount'], 'open')
      await refused(t, up, discount(up.client))
    })
  }
})

t.test("an answer wrong for one record never opens the breaker, yet is the caller's 502 " +
  'and the observer hears it', async t => {
  for (const [reason, arrange, options] of BROKEN_RECORD) {
    t.test(reason, async t => {
      const up = breakerUpstream(t, 2, options)
      arrange(up, 10)
      for (let i = 0; i < 10; i++) {
        const error = await failure(discount(up.client))
        t.equal(error.reason, reason)
        t.equal(error.statusCode, 502)
      }
      t.equal(up.client.breakerStates()['dealer.discount'], 'closed')
      t.equal(up.calls().length, 10, 'every call reached the upstream')
      t.strictSame(up.transitions, [])
      t.equal(up.events.filter(e => e.outcome === reason).length, 10, 'each counted by its reason')
    })
  }
})

t.test('a failure rate over the window: it opens only past the rate, once the ' +
  'window holds min-calls calls', async t => {
  const up = breakerUpstream(t, 10)
  up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).times(10)
  up.post(DISCOUNT).reply(503, 'busy', { headers: TEXT }).times(11)
  for (let i = 0; i < 10; i++) t.equal((await discount(up.client)).kind, 'ok')
  for (let i = 0; i < 10; i++) await discount(up.client).catch(() => {})
  t.equal(up.client.breakerStates()['dealer.discount'], 'closed', '10 failures of 20 calls is 50 %, not more')
  await discount(up.client).catch(() => {})
  t.strictSame(up.transitions, [['dealer.discount', 'open']], '11 of 21 is more than 50 %')
  t.strictSame(up.client.breakerStates(),
    { 'passport.get_client': 'closed', 'dealer.discount': 'open', 'dealer.client': 'closed' },
    'one breaker per operation')

  await refused(t, up, up.client.exchange('dealer.discount', fx.dealerParams))
  t.match(up.events.at(-1),
    { operation: 'dealer.discount', outcome: 'breaker_open', status: null, hops: 0, contractErrors: [] })
})

t.test('the minimum volume is exact whatever the window: the buckets are rounded, min-calls is not', async t => {
  // 61 buckets of 992 ms: a window that cannot be split evenly.
  for (const windowMs of [60_500, 1_234]) {
    t.test(`${windowMs} ms`, async t => {
      const up = breakerUpstream(t, 7, {
        breaker: { failureRatePercent: 50, minCalls: 7, windowMs, halfOpenAfterMs: 600_000 }
      })
      up.post(DISCOUNT).reply(500, 'oops', { headers: TEXT }).times(7)
      for (let i = 0; i < 6; i++) await discount(up.client).catch(() => {})
      t.equal(up.client.breakerStates()['dealer.discount'], 'closed', '6 failures: below the 7 calls')
      await discount(up.client).catch(() => {})
      t.equal(up.client.breakerStates()['dealer.discount'], 'open', 'the 7th opens it')
    })
  }
})

t.test('1,000 calls of healthy, broken-record and a few 5xx answers keep the breaker closed', async t => {
  const up = breakerUpstream(t, 20)
  // Every tenth call a 5xx (10 %), the rest split between whole answers and broken records.
  const answers: Array<() => void> = [
    () => up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }),
    () => up.post(DISCOUNT).reply(200, { success: 'yes' }, { headers: JSON_UTF8 }),
    () => up.post(DISCOUNT).reply(200, '{"success": tr', { headers: JSON_UTF8 }),
    () => up.post(DISCOUNT).reply(404, 'no such record', { headers: TEXT }),
    () => up.post(DISCOUNT).reply(200, '<html></html>', { headers: { 'content-type': 'text/html' } })
  ]
  for (let i = 0; i < 1000; i++) {
    if (i % 10 === 9) up.post(DISCOUNT).reply(500, 'oops', { headers: TEXT })
    else answers[i % answers.length]!()
  }
  const outcomes = new Map<string, number>()
  for (let i = 0; i < 1000; i++) {
    const outcome = await discount(up.client).then(r => r.kind as string, (error: UpstreamError) => error.reason)
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  }
  t.equal(outcomes.get('breaker_open'), undefined, 'never refused')
  t.equal(outcomes.get('ok'), 200)
  t.equal(outcomes.get('status'), 300, '100 5xx and 200 undocumented 404s')
  t.equal(up.calls().length, 1000)
  t.strictSame(up.transitions, [])
})

t.test("the caller's own limits neither count nor dilute the rate", async t => {
  t.test('aborted by the caller', async t => {
    const up = breakerUpstream(t, 2)
    up.post(DISCOUNT).reply(500, 'oops', { headers: TEXT })
    up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(500).times(3)
    up.post(DISCOUNT).reply(500, 'oops', { headers: TEXT })
    await discount(up.client).catch(() => {})
    for (let i = 0; i < 3; i++) {
      t.equal((await failure(discount(up.client, { signal: AbortSignal.timeout(10) }))).reason, 'aborted')
    }
    t.equal(up.client.breakerStates()['dealer.discount'], 'closed', 'three aborted calls did not open it')
    await discount(up.client).catch(() => {})
    t.equal(up.client.breakerStates()['dealer.discount'], 'open', 'nor were they successes: two failures of two calls')
  })

  t.test('a timeout cut short by the caller budget', async t => {
    const up = breakerUpstream(t, 2, { timeoutMs: 2000 })
    up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(500).times(3)
    for (let i = 0; i < 3; i++) t.equal((await failure(discount(up.client, { timeoutMs: 10 }))).reason, 'timeout')
    t.equal(up.client.breakerStates()['dealer.discount'], 'closed')
  })
})

t.test('an open breaker tells when to retry: the seconds left of the half-open delay', async t => {
  const up = breakerUpstream(t, 1, {
    breaker: { failureRatePercent: 50, minCalls: 1, windowMs: 60_000, halfOpenAfterMs: 30_000 }
  })
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  await passport(up.client).catch(() => {})
  const error = await refused(t, up, passport(up.client))
  const retryAfter = retryAfterOf(error)
  t.ok(retryAfter !== undefined && retryAfter >= 1 && retryAfter <= 30,
    `Retry-After ${retryAfter} within the 30 s delay`)
  t.equal(retryAfterOf(new Error('other')), undefined)
})

t.test('half-open: after halfOpenAfter one probe goes through; its success closes the breaker', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).times(2)
  await passport(up.client).catch(() => {})
  up.advance(HALF_OPEN_MS - 1)
  await refused(t, up, passport(up.client))

  up.advance(1)
  t.equal((await passport(up.client)).kind, 'ok', 'the probe reached the upstream')
  t.equal((await passport(up.client)).kind, 'ok', 'and so does the next call')
  t.strictSame(up.transitions.map(([, state]) => state), ['open', 'half_open', 'closed'])
  t.equal(up.calls().length, 3)
})

t.test('half-open: a probe that meets a broken record closes the breaker too (the upstream answered)', async t => {
  const up = breakerUpstream(t, 1, { maxBodyBytes: 1024 })
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(3)
  up.post(PASSPORT).reply(200, JSON.stringify({ ...fx.passportFound, pad: 'x'.repeat(2048) }), { headers: JSON_UTF8 })
  await passport(up.client, as(1)).catch(() => {})
  up.advance(HALF_OPEN_MS)
  t.equal((await failure(passport(up.client, as(1)))).reason, 'status')
  t.equal((await failure(passport(up.client, as(2)))).reason, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'open', "two callers' 5xx probes open it again")
  up.advance(HALF_OPEN_MS)
  t.equal((await failure(passport(up.client, as(1)))).reason, 'too_large')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed')
})

t.test('half-open: probes of two callers that fail open the breaker again', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(3)
  await passport(up.client, as(1)).catch(() => {})
  up.advance(HALF_OPEN_MS)
  t.equal((await failure(passport(up.client, as(1)))).reason, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'half_open', 'one caller\'s failed probe is not enough')
  t.equal((await failure(passport(up.client, as(2)))).reason, 'status', "another caller's probe goes through at once")
  t.equal(up.client.breakerStates()['passport.get_client'], 'open')
  const error = await refused(t, up, passport(up.client, as(3)))
  t.equal(retryAfterOf(error), HALF_OPEN_MS / 1000, 'a whole half-open delay again')
  t.strictSame(up.transitions.map(([, state]) => state), ['open', 'half_open', 'open'])
})

t.test('half-open: one client whose own record fails cannot keep the breaker open by being every probe', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(3)
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 })
  await passport(up.client, as(1)).catch(() => {})
  up.advance(HALF_OPEN_MS)
  t.equal((await failure(passport(up.client, as(1)))).reason, 'status', 'the failing client is the first probe')
  const error = await refused(t, up, passport(up.client, as(1)))
  t.equal(retryAfterOf(error), HALF_OPEN_MS / 1000, 'then waits for the next round')
  up.advance(HALF_OPEN_MS - 1)
  await refused(t, up, passport(up.client, as(1)))
  up.advance(1)
  t.equal((await failure(passport(up.client, as(1)))).reason, 'status', 'a round later it may probe again')
  t.equal((await passport(up.client, as(2))).kind, 'ok', 'any other client is the next probe, and its answer closes it')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed')
  t.equal(up.calls().length, 4)
})

t.test('half-open: failed probes of callers it never served do not open it again, of two it served do ' +
  '(issue 47, item 8b)', async t => {
  const up = breakerUpstream(t, 20, { breaker: { ...DEFAULT_BREAKER_OPTIONS, halfOpenAfterMs: HALF_OPEN_MS } })
  t.equal(reopeningProbes(DEFAULT_BREAKER_OPTIONS), 11, 'as many callers as failures open it at its minimum volume')
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).times(2)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(20 + 2 * 10 + 2)
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 })
  // Callers 1 and 2 served, then an outage that twenty callers meet.
  for (const n of [1, 2]) await passport(up.client, as(n))
  up.advance(DEFAULT_BREAKER_OPTIONS.windowMs)
  for (let n = 11; n <= 30; n++) await passport(up.client, as(n)).catch(() => {})
  t.equal(up.client.breakerStates()['passport.get_client'], 'open')

  // Two accounts whose records fail, at every half-open, ten requests each: their probes fail, and keep nothing open.
  for (let round = 0; round < 10; round++) {
    up.advance(HALF_OPEN_MS)
    for (let i = 0; i < 10; i++) {
      for (const n of [41, 42]) {
        const error = await failure(passport(up.client, as(n)))
        t.equal(error.reason, i === 0 ? 'status' : 'breaker_open')
      }
    }
    t.equal(up.client.breakerStates()['passport.get_client'], 'half_open', `round ${round + 1}: still half-open`)
  }
  // A served caller's failed probe is not enough alone; a second served caller's opens it again.
  t.equal((await failure(passport(up.client, as(1)))).reason, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'half_open')
  t.equal((await failure(passport(up.client, as(2)))).reason, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'open')
  // The next round, any caller's probe that is answered closes it.
  up.advance(HALF_OPEN_MS)
  t.equal((await passport(up.client, as(43))).kind, 'ok')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed')
})

t.test('half-open: failed probes of as many callers as failures open it, served or not, open it again', async t => {
  const up = breakerUpstream(t, 20, { breaker: { ...DEFAULT_BREAKER_OPTIONS, halfOpenAfterMs: HALF_OPEN_MS } })
  const probes = reopeningProbes(DEFAULT_BREAKER_OPTIONS)
  up.post(PASSPORT).reply(503, 'down', { headers: TEXT }).times(20 + probes)
  for (let n = 1; n <= 20; n++) await passport(up.client, as(n)).catch(() => {})
  up.advance(HALF_OPEN_MS)
  for (let n = 1; n < probes; n++) await passport(up.client, as(100 + n)).catch(() => {})
  t.equal(up.client.breakerStates()['passport.get_client'], 'half_open', `${probes - 1} callers' failed probes`)
  await passport(up.client, as(100 + probes)).catch(() => {})
  t.equal(up.client.breakerStates()['passport.get_client'], 'open', `${probes} callers' failed probes`)
})

t.test('half-open: a probe runs on to its answer when its caller leaves, and only that answer decides', async t => {
  /** Opens the breaker with one 500, then sends a probe of caller 1 the caller gives up on after 10 ms. */
  async function leftProbe (up: ReturnType<typeof breakerUpstream>, options: Parameters<typeof as>[1] = {}) {
    await passport(up.client, as(1)).catch(() => {})
    up.advance(HALF_OPEN_MS)
    return await failure(passport(up.client, as(1, { signal: AbortSignal.timeout(10), ...options })))
  }
  /** Waits until the n-th passport exchange has ended (its caller may have left long before); refusals aside. */
  async function passportEnded (up: ReturnType<typeof breakerUpstream>, n: number): Promise<boolean> {
    for (let i = 0; i < 500; i++) {
      if (up.events.filter(event => event.outcome !== 'breaker_open').length >= n) return true
      await new Promise(resolve => setTimeout(resolve, 10))
    }
    return false
  }

  t.test('an answer that arrives after the caller left closes the breaker', async t => {
    const up = breakerUpstream(t, 1)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(1000)
    t.equal((await leftProbe(up)).reason, 'aborted', 'the caller stopped waiting')
    t.equal(up.client.breakerStates()['passport.get_client'], 'half_open')
    await refused(t, up, passport(up.client, as(2)))
    t.ok(await passportEnded(up, 2), 'the probe ended')
    t.equal(up.events.at(-1)?.outcome, 'ok', 'with the answer, not the caller leaving')
    t.strictSame(up.transitions.map(([, state]) => state), ['open', 'half_open', 'closed'])
  })

  t.test('nor can a caller cut a probe short by a budget shorter than the deadline', async t => {
    const up = breakerUpstream(t, 1)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(200)
    t.equal((await leftProbe(up, { signal: undefined, timeoutMs: 10 })).reason, 'timeout', 'its own limit')
    t.ok(await passportEnded(up, 2), 'the probe ended')
    t.equal(up.client.breakerStates()['passport.get_client'], 'closed', 'its answer closed the breaker')
  })

  t.test("a 5xx after the caller left is that caller's failed probe", async t => {
    const up = breakerUpstream(t, 1)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    up.post(PASSPORT).reply(503, 'down', { headers: TEXT }).delay(200)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    await leftProbe(up)
    t.ok(await passportEnded(up, 2), 'the probe ended')
    t.equal(up.client.breakerStates()['passport.get_client'], 'half_open', 'one failed probe')
    await refused(t, up, passport(up.client, as(1)))
    t.equal((await failure(passport(up.client, as(2)))).reason, 'status')
    t.equal(up.client.breakerStates()['passport.get_client'], 'open', "two callers' failed probes")
  })

  t.test('a probe left running still ends at the deadline, a failure: the upstream did not answer', async t => {
    const up = breakerUpstream(t, 1, { timeoutMs: 100 })
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(2000)
    await leftProbe(up)
    t.ok(await passportEnded(up, 2), 'the probe ended')
    t.equal(up.events.at(-1)?.outcome, 'timeout')
    t.equal(up.client.breakerStates()['passport.get_client'], 'half_open', 'one failed probe')
  })
})

t.test('half-open: a probe that ended without an answer frees the slot and neither closes nor reopens', async t => {
  const states: BreakerState[] = []
  let now = 1_700_000_000_000
  const breakers = createBreakers({ ...DEFAULT_BREAKER_OPTIONS, minCalls: 1, halfOpenAfterMs: HALF_OPEN_MS },
    (_operation, state) => { states.push(state) }, () => now)
  const record = { operation: 'passport.get_client' as const, status: null, redirects: [], duration_ms: 1 }
  const aborted = () => upstreamError('aborted', record)
  breakers.settleError('passport.get_client', breakers.admit('passport.get_client', 'a'),
    upstreamError('connect', record), false)
  now += HALF_OPEN_MS
  // Many callers' probes in one round, each ended without an answer (its caller left, or a bug of ours).
  for (const [caller, error] of [['a', aborted()], ['b', aborted()], ['c', new Error('a bug')], ['a', aborted()]]) {
    const probe = breakers.admit('passport.get_client', caller as string)
    t.not(probe, NOT_PROBE, `${caller as string} probes`)
    breakers.settleError('passport.get_client', probe, error, false, caller as string)
  }
  t.equal(breakers.states()['passport.get_client'], 'half_open')
  t.strictSame(states, ['open', 'half_open'])
})

t.test('half-open: while the probe is out, other calls are refused at once', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(100)
  await passport(up.client).catch(() => {})
  up.advance(HALF_OPEN_MS)

  const probe = passport(up.client, as(1))
  t.equal(up.client.breakerStates()['passport.get_client'], 'half_open')
  const error = await refused(t, up, passport(up.client, as(2)))
  t.equal(retryAfterOf(error), 1, 'the probe decides soon')
  t.equal((await probe).kind, 'ok')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed')
})

t.test("one caller's failures count for its share of the window only", async t => {
  const share = callerShare(DEFAULT_BREAKER_OPTIONS)
  t.equal(share, 5, 'half of what could open the breaker: 50 % of 20 calls, halved')

  t.test('one client failing at its full rate limit (2 a second) for minutes, the ' +
    'others quiet: never open', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(240)
    for (let i = 0; i < 240; i++) {
      t.equal((await failure(passport(up.client, as(1)))).reason, 'status')
      up.advance(500)
    }
    t.strictSame(up.transitions, [], 'never opened: 240 calls reached the passport')
  })

  t.test('the same beside other clients served, who fail a quarter of their own calls', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    const failing = () => up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
    for (let i = 0; i < 120; i++) {
      failing()
      // Another client at each step, one of every four of their calls a 5xx.
      if (i % 4 === 0) failing()
      else up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 })
    }
    for (let i = 0; i < 120; i++) {
      await passport(up.client, as(1)).catch(() => {})
      await passport(up.client, as(2 + (i % 7))).catch(() => {})
      up.advance(500)
    }
    t.strictSame(up.transitions, [], 'never opened')
    t.equal(up.calls().length, 240)
  })

  t.test('several clients it served, failing, open it within the window', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).times(4)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(20)
    for (let n = 1; n <= 4; n++) t.equal((await passport(up.client, as(n))).kind, 'ok')
    // Those answers leave the window; the passport remembers whom it served.
    up.advance(DEFAULT_BREAKER_OPTIONS.windowMs)
    // Four clients at their full rate: 5 counted failures each, 20 in 2.5 s.
    for (let i = 0; i < 20; i++) {
      await passport(up.client, as(1 + (i % 4))).catch(() => {})
      up.advance(125)
    }
    t.strictSame(up.transitions.map(([, state]) => state), ['open'])
    await refused(t, up, passport(up.client, as(9)))
  })

  t.test('a client it never served counts once: four at their full rate never open it, twenty with one call ' +
    'each do (issue 47, item 8b)', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(60)
    // Four accounts whose records fail, at their full rate for 10 s: the window holds 4 counted failures.
    for (let i = 0; i < 40; i++) {
      t.equal((await failure(passport(up.client, as(1 + (i % 4))))).reason, 'status')
      up.advance(250)
    }
    t.strictSame(up.transitions, [], 'never opened: every call reached the passport')
    // An outage that twenty callers meet, none of them served before: it opens on the twentieth.
    up.advance(DEFAULT_BREAKER_OPTIONS.windowMs)
    for (let n = 11; n <= 30; n++) await passport(up.client, as(n)).catch(() => {})
    t.strictSame(up.transitions.map(([, state]) => state), ['open'])
    t.equal(up.calls().length, 60)
  })

  t.test('only an answer of its record or its documented not-found serves a caller', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    // Callers 1-4 get a broken answer (it counts as answered, but served nothing), then fail at their full rate.
    up.post(PASSPORT).reply(200, { success: 'yes' }, { headers: JSON_UTF8 }).times(4)
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(40)
    for (let n = 1; n <= 4; n++) t.equal((await failure(passport(up.client, as(n)))).reason, 'contract')
    up.advance(DEFAULT_BREAKER_OPTIONS.windowMs)
    for (let i = 0; i < 40; i++) await passport(up.client, as(1 + (i % 4))).catch(() => {})
    t.strictSame(up.transitions, [], 'still counted once each')
  })

  t.test(`it remembers the callers it served lately, ${SERVED_CALLERS} at most`, async t => {
    const clock = breakersOnClock()
    const fail = (caller: string) => clock.breakers.settleError('passport.get_client',
      clock.breakers.admit('passport.get_client', caller), clock.error('passport.get_client'), false, caller)
    const serve = (caller: string) => clock.breakers.settleResponse('passport.get_client',
      clock.breakers.admit('passport.get_client', caller), { outcome: 'ok', status: 200 }, caller)
    serve('a')
    serve('b')
    for (let i = 0; i < SERVED_CALLERS - 2; i++) serve(`other-${i}`)
    // Served again after as many others: 'a' is remembered, 'b' forgotten.
    serve('a')
    clock.advance(DEFAULT_BREAKER_OPTIONS.windowMs)
    // 'a' counts five times, 'b' once: 6 failures of 6 calls; 13 callers never served make 19, under the minimum.
    for (let i = 0; i < 5; i++) for (const caller of ['a', 'b']) fail(caller)
    for (let n = 0; n < 13; n++) fail(`new-${n}`)
    t.equal(clock.breakers.states()['passport.get_client'], 'closed', '19 counted failures')
    fail('b')
    t.equal(clock.breakers.states()['passport.get_client'], 'closed', "'b' counted once already")
    fail('new-13')
    t.strictSame(clock.transitions.map(([, state]) => state), ['open'], 'the twentieth counted failure opens it')
  })

  t.test('calls that name no caller count each as a caller of its own', async t => {
    const up = breakerUpstream(t, 20, { breaker: DEFAULT_BREAKER_OPTIONS })
    up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(20)
    for (let i = 0; i < 20; i++) await passport(up.client).catch(() => {})
    t.strictSame(up.transitions.map(([, state]) => state), ['open'])
  })
})

t.test('breaker: false goes past the breaker, and its outcomes do not move it', async t => {
  const up = breakerUpstream(t, 1)
  up.post(DISCOUNT).reply(500, 'oops', { headers: TEXT })
  up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(2)
  await discount(up.client).catch(() => {})
  t.equal(up.client.breakerStates()['dealer.discount'], 'open')

  const ex = await up.client.exchange('dealer.discount', fx.dealerParams, { breaker: false })
  t.equal(ex.outcome, 'ok', 'the real upstream answered')
  t.equal(up.client.breakerStates()['dealer.discount'], 'open', 'a bypassing success does not close it')

  for (let i = 0; i < 2; i++) {
    t.equal((await up.client.exchange('passport.get_client', fx.passportParams,
      { breaker: false })).outcome, 'status')
  }
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed', 'bypassing failures do not open it')
  t.match(up.events.map(e => e.outcome), ['status', 'ok', 'status', 'status'], 'the observer still hears them')
})

/** The default breakers on a clock the test moves; `connectFailures(n)` settles n dropped connections. */
function breakersOnClock (start = 1_700_000_000_000) {
  let now = start
  const transitions: Array<[OperationName, BreakerState, number]> = []
  const breakers: Breakers = createBreakers(DEFAULT_BREAKER_OPTIONS, (operation, state) => {
    transitions.push([operation, state, (now - start) / 1000])
  }, () => now)
  const error = (operation: OperationName) =>
    upstreamError('connect', { operation, status: null, redirects: [], duration_ms: 3 })
  const connect = () => error('dealer.client')
  return {
    breakers,
    transitions,
    error,
    advance: (ms: number) => { now += ms },
    connectFailures (n: number) {
      for (let i = 0; i < n; i++) {
        breakers.settleError('dealer.client', breakers.admit('dealer.client'), connect(),
          false)
      }
    }
  }
}

t.test('the window forgets failures older than it, however long the quiet (issue 21, finding 1)', async t => {
  const clock = breakersOnClock()
  clock.connectFailures(19)
  t.equal(clock.breakers.states()['dealer.client'], 'closed', '19 failures: under the 20-call minimum')
  clock.advance(6 * 3600_000)
  clock.connectFailures(1)
  t.equal(clock.breakers.states()['dealer.client'], 'closed', 'six hours later one failure is one call in the window')
  t.strictSame(clock.transitions, [])
  t.equal(clock.breakers.admit('dealer.client'), NOT_PROBE, 'the next call is sent')

  t.test('a quiet of just over the window forgets as much', async t => {
    const clock = breakersOnClock()
    clock.connectFailures(19)
    clock.advance(DEFAULT_BREAKER_OPTIONS.windowMs + 2000)
    clock.connectFailures(1)
    t.equal(clock.breakers.states()['dealer.client'], 'closed')
  })
  t.test('while failures within the window still open it', async t => {
    const clock = breakersOnClock()
    clock.connectFailures(19)
    clock.advance(DEFAULT_BREAKER_OPTIONS.windowMs / 2)
    clock.connectFailures(1)
    t.strictSame(clock.transitions, [['dealer.client', 'open', 5]])
    t.equal(retryAfterOf(await failure(Promise.resolve().then(() => clock.breakers.admit('dealer.client')))), 10)
  })
})

// Retry: over real sockets. A server on port 0 that counts requests and connections.
async function server (t: Test, handle: (req: IncomingMessage, res: ServerResponse, nth: number) => void) {
  let requests = 0
  const sockets = new Set<Socket>()
  const srv = createServer((req, res) => {
    req.resume()
    req.on('end', () => handle(req, res, ++requests))
  })
  srv.on('connection', socket => sockets.add(socket))
  const origin = await listenLocally(t, srv)
  return {
    origin,
    requests: () => requests,
    connections: () => sockets.size
  }
}

function client (t: Test, baseUrl: string, options: Partial<UpstreamClientOptions> = {}) {
  const c = createUpstreamClient({ baseUrl, keys: { ...KEYS }, timeoutMs: 2000, ...options })
  t.teardown(() => c.close())
  return c
}

const answer = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, JSON_UTF8).end(JSON.stringify(body))
}

t.test('retry: a connection closed before any answer is sent again once, on a fresh connection', async t => {
  const up = await server(t, (req, res, nth) => {
    if (nth === 1) return req.socket.destroy()
    answer(res, fx.discountNone)
  })
  const c = client(t, up.origin)
  t.equal((await discount(c)).kind, 'ok')
  t.equal(up.requests(), 2)
  t.equal(up.connections(), 2)
})

t.test('retry: a pooled keep-alive socket the upstream drops as it is reused', async t => {
  // The race a keep-alive pool meets: the upstream closes an idle connection just as it is reused.
  const up = await server(t, (req, res, nth) => {
    if (nth === 2) return req.socket.destroy()
    answer(res, fx.discountNone)
  })
  const c = client(t, up.origin, { connections: 1 })
  t.equal((await discount(c)).kind, 'ok')
  t.equal((await discount(c)).kind, 'ok', 'the second call survives its dropped socket')
  t.equal(up.requests(), 3)
  t.equal(up.connections(), 2)
})

t.test('retry: a connection refused once, then accepted', async t => {
  const up = mockUpstream(t)
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'),
    { code: 'ECONNREFUSED' }))
  up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  t.equal((await discount(up.client)).kind, 'ok')
  t.equal(up.calls().length, 2)
})

t.test('retry: only once; a second refusal is the failure', async t => {
  const up = mockUpstream(t)
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'),
    { code: 'ECONNREFUSED' })).times(2)
  t.equal((await failure(discount(up.client))).reason, 'connect')
  t.equal(up.calls().length, 2)
})

t.test('retry: a dropped connection on the fallback from a learned location that moved is sent again', async t => {
  // The learned slash location answers 404, the fallback to the documented path meets a dropped connection:
  // a new exchange with no answer yet, retried like a first hop (issue 21, finding 2).
  const up = mockUpstream(t)
  up.post(DISCOUNT).reply(307, '', { headers: { location: `${DISCOUNT}/` } })
  up.post(`${DISCOUNT}/`).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  t.equal((await discount(up.client)).kind, 'ok', 'the slash location is learned')
  up.post(`${DISCOUNT}/`).reply(404, 'gone')
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
  up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  const result = await discount(up.client)
  t.equal(result.kind, 'ok', 'the dropped fallback is retried and answers')
  t.equal(result.exchange.status, 200)
  t.same(result.exchange.redirects, [], 'the fallback exchange reports its own hops only')
  t.same(up.calls().map(call => call.path), [DISCOUNT, `${DISCOUNT}/`, `${DISCOUNT}/`, DISCOUNT, DISCOUNT])
})

t.test('a failed fallback reports no status when no answer of its own arrived', async t => {
  const up = mockUpstream(t)
  up.post(DISCOUNT).reply(307, '', { headers: { location: `${DISCOUNT}/` } })
  up.post(`${DISCOUNT}/`).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  await discount(up.client)
  up.post(`${DISCOUNT}/`).reply(404, 'gone')
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })).times(2)
  const error = await failure(discount(up.client))
  t.equal(error.reason, 'connect')
  t.equal(error.exchange.status, null, 'not the 404 of the abandoned location')
})

t.test('every operation of the registry declares whether it is safe to repeat; all three lookups are', async t => {
  for (const [name, op] of Object.entries(operations)) t.equal(op.safeToRepeat, true, name)
})

t.test('an exchange not safe to repeat is never sent twice after a dropped connection', async t => {
  const up = mockUpstream(t)
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
  const deadline = startDeadline(2000)
  const wire = {
    operation: 'dealer.discount' as const,
    url: new URL(`${ORIGIN}${DISCOUNT}`),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '{}',
    deadline,
    maxRedirects: 1,
    redirectTarget: new URL(`${ORIGIN}${DISCOUNT}/`),
    maxBodyBytes: 1024,
    dispatcher: up.agent,
    safeToRepeat: false,
    started: performance.now()
  }
  try {
    const error = await postFollowingRedirects(wire).then(() => undefined, (err: unknown) => err)
    t.ok(error instanceof WireFailure, 'a failure of the wire (the client makes it an upstream error)')
    t.equal((error as WireFailure).reason, 'connect')
  } finally {
    deadline.clear()
  }
  t.equal(up.calls().length, 1, 'sent once')
})

t.test('never retried', async t => {
  t.test('a timeout', async t => {
    const up = await server(t, () => {})
    const c = client(t, up.origin, { timeoutMs: 100 })
    t.equal((await failure(discount(c))).reason, 'timeout')
    t.equal(up.requests(), 1)
  })

  t.test('a 5xx answer', async t => {
    const up = await server(t, (_req, res) => { res.writeHead(503, TEXT).end('busy') })
    const c = client(t, up.origin)
    t.equal((await failure(discount(c))).reason, 'status')
    t.equal(up.requests(), 1)
  })

  t.test('a connection dropped after the answer began', async t => {
    const up = await server(t, (req, res) => {
      res.writeHead(200, JSON_UTF8)
      res.write('{"success":false,', () => req.socket.destroy())
    })
    const c = client(t, up.origin)
    t.equal((await failure(discount(c))).reason, 'connect')
    t.equal(up.requests(), 1)
  })

  t.test('a drop after a redirect was answered', async t => {
    const up = await server(t, (req, res, nth) => {
      if (nth === 1) return res.writeHead(307, { location: `${DISCOUNT}/` }).end()
      req.socket.destroy()
    })
    const c = client(t, up.origin)
    t.equal((await failure(discount(c))).reason, 'connect')
    t.equal(up.requests(), 2, 'the first request and its hop, nothing more')
  })

  t.test('a call the caller gave up on', async t => {
    const up = await server(t, () => {})
    const c = client(t, up.origin)
    t.equal((await failure(discount(c, { signal: AbortSignal.timeout(50) }))).reason, 'aborted')
    t.equal(up.requests(), 1)
  })
})

t.test('the breakers know a caller by the key it carries, not its id: a failed prober\'s key waits', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(3)
  await passport(up.client, as(1)).catch(() => {})
  up.advance(HALF_OPEN_MS)
  const id = '3F2504E0-4F89-41D3-9A0C-0305E82C3301'
  t.equal((await failure(passport(up.client, { caller: { id, key: 'first' } }))).reason, 'status', 'a probe fails')
  t.equal((await failure(passport(up.client, { caller: { id: 'another id', key: 'first' } }))).reason, 'breaker_open',
    'the same key under another id waits for another caller\'s probe')
  t.equal((await failure(passport(up.client, { caller: { id, key: 'second' } }))).reason, 'status',
    'another key under the same id probes')
  t.equal(up.calls().length, 3)
})
