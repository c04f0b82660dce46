// The client's resilience: the circuit breaker of each operation against a MockAgent upstream (what
// opens it, that an open breaker sends nothing, the half-open probe), and the one retry of a connection
// that failed before any answer, over real sockets where the connection is what matters.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { createUpstreamClient, type BreakerState, type ExchangeEvent, type UpstreamClient, type UpstreamClientOptions } from '../../src/upstream/client.ts'
import { isUpstreamError, type UpstreamError } from '../../src/upstream/errors.ts'
import type { OperationName } from '../../src/upstream/operations.ts'
import { JSON_UTF8, KEYS, mockUpstream } from '../helpers/upstream-mock.ts'
import { listenLocally } from '../helpers/local-server.ts'

const PASSPORT = '/bc_passport/get_client'
const DISCOUNT = '/bc_api_web_service/discount'
const HALF_OPEN_MS = 50
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

/** A MockAgent upstream whose client opens a breaker after `threshold` failures; events recorded. */
function breakerUpstream (t: Test, threshold: number, options: Partial<UpstreamClientOptions> = {}) {
  const transitions: Array<[OperationName, BreakerState]> = []
  const events: ExchangeEvent[] = []
  const up = mockUpstream(t, {
    breaker: { threshold, halfOpenAfterMs: HALF_OPEN_MS },
    observer: {
      exchange: event => { events.push(event) },
      breaker: (operation, state) => { transitions.push([operation, state]) }
    },
    ...options
  })
  return { ...up, transitions, events }
}

/** The call is refused by an open breaker: 503 UPSTREAM_UNAVAILABLE, and nothing reached the upstream. */
async function refused (t: Test, up: ReturnType<typeof breakerUpstream>, promise: Promise<unknown>) {
  const sent = up.calls().length
  const error = await failure(promise)
  t.equal(error.reason, 'breaker_open')
  t.equal(error.statusCode, 503)
  t.equal(error.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(up.calls().length, sent, 'nothing sent')
}

t.test('every kind of upstream failure counts: the breaker opens and then sends nothing', async t => {
  const cases: Array<[string, (up: ReturnType<typeof breakerUpstream>) => void, Partial<UpstreamClientOptions>?]> = [
    ['status', up => up.post(DISCOUNT).reply(500, 'Internal Server Error', { headers: TEXT }).times(2)],
    ['content_type', up => up.post(DISCOUNT).reply(200, '<html></html>', { headers: { 'content-type': 'text/html' } }).times(2)],
    ['json', up => up.post(DISCOUNT).reply(200, '{"success": tr', { headers: JSON_UTF8 }).times(2)],
    ['contract', up => up.post(DISCOUNT).reply(200, { success: 'yes' }, { headers: JSON_UTF8 }).times(2)],
    ['too_large', up => up.post(DISCOUNT).reply(200, JSON.stringify({ ...fx.discountNone, message: 'x'.repeat(2048) }), { headers: JSON_UTF8 }).times(2), { maxBodyBytes: 1024 }],
    ['timeout', up => up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(500).times(2), { timeoutMs: 30 }],
    ['connect', up => up.post(DISCOUNT).replyWithError(Object.assign(new Error('getaddrinfo ENOTFOUND upstream.test'), { code: 'ENOTFOUND' })).times(2)],
    ['redirect_refused', up => up.post(DISCOUNT).reply(307, '', { headers: { location: `http://elsewhere.test${DISCOUNT}/` } }).times(2)],
    ['redirect_loop', up => up.post(DISCOUNT).reply(307, '', { headers: { location: `${DISCOUNT}/` } }).times(2), { maxRedirects: 0 }],
    ['redirect_invalid', up => up.post(DISCOUNT).reply(302, '', { headers: { location: `${DISCOUNT}/` } }).times(2)]
  ]
  for (const [reason, arrange, options] of cases) {
    t.test(reason, async t => {
      const up = breakerUpstream(t, 2, options)
      arrange(up)
      for (let i = 0; i < 2; i++) t.equal((await failure(discount(up.client))).reason, reason)
      t.equal(up.client.breakerStates()['dealer.discount'], 'open')
      await refused(t, up, discount(up.client))
    })
  }
})

t.test('an open breaker refuses exchange() too, and the observer hears the transition and the refusal', async t => {
  const up = breakerUpstream(t, 2)
  up.post(DISCOUNT).reply(503, 'busy', { headers: TEXT }).times(2)
  await discount(up.client).catch(() => {})
  t.strictSame(up.transitions, [], 'one failure leaves it closed')
  await discount(up.client).catch(() => {})
  t.strictSame(up.transitions, [['dealer.discount', 'open']])

  await refused(t, up, up.client.exchange('dealer.discount', fx.dealerParams))
  t.match(up.events.at(-1), { operation: 'dealer.discount', outcome: 'breaker_open', status: null, hops: 0, contractErrors: [] })
  t.strictSame(up.client.breakerStates(), { 'passport.get_client': 'closed', 'dealer.discount': 'open', 'dealer.client': 'closed' }, 'one breaker per operation')
})

t.test('answers of the operation are successes: a not-found or an answer resets the count', async t => {
  const up = breakerUpstream(t, 2)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(400, fx.passportNotFound, { headers: JSON_UTF8 })
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 })
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  await passport(up.client).catch(() => {})
  t.equal((await passport(up.client)).kind, 'not_found')
  await passport(up.client).catch(() => {})
  t.equal((await passport(up.client)).kind, 'ok')
  await passport(up.client).catch(() => {})
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed', 'never two failures in a row')
})

t.test("the caller's own limits neither count nor reset the count", async t => {
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
    t.equal(up.client.breakerStates()['dealer.discount'], 'open', 'nor did they reset the count: two failures in a row')
  })

  t.test('a timeout cut short by the caller budget', async t => {
    const up = breakerUpstream(t, 2, { timeoutMs: 2000 })
    up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(500).times(3)
    for (let i = 0; i < 3; i++) t.equal((await failure(discount(up.client, { timeoutMs: 10 }))).reason, 'timeout')
    t.equal(up.client.breakerStates()['dealer.discount'], 'closed')
  })
})

t.test('half-open: after halfOpenAfter one probe goes through; its success closes the breaker', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).times(2)
  await passport(up.client).catch(() => {})
  await refused(t, up, passport(up.client))

  await sleep(HALF_OPEN_MS + 20)
  t.equal((await passport(up.client)).kind, 'ok', 'the probe reached the upstream')
  t.equal((await passport(up.client)).kind, 'ok', 'and so does the next call')
  t.strictSame(up.transitions.map(([, state]) => state), ['open', 'half_open', 'closed'])
  t.equal(up.calls().length, 3)
})

t.test('half-open: a failed probe opens the breaker again', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT }).times(2)
  await passport(up.client).catch(() => {})
  await sleep(HALF_OPEN_MS + 20)
  t.equal((await failure(passport(up.client))).reason, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'open')
  await refused(t, up, passport(up.client))
  t.strictSame(up.transitions.map(([, state]) => state), ['open', 'half_open', 'open'])
})

t.test('half-open: a probe the caller aborted proved nothing and keeps the breaker open', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(500)
  await passport(up.client).catch(() => {})
  await sleep(HALF_OPEN_MS + 20)
  t.equal((await failure(passport(up.client, { signal: AbortSignal.timeout(10) }))).reason, 'aborted')
  t.equal(up.client.breakerStates()['passport.get_client'], 'open')
})

t.test('half-open: while the probe is out, other calls are refused at once', async t => {
  const up = breakerUpstream(t, 1)
  up.post(PASSPORT).reply(500, 'oops', { headers: TEXT })
  up.post(PASSPORT).reply(200, fx.passportFound, { headers: JSON_UTF8 }).delay(100)
  await passport(up.client).catch(() => {})
  await sleep(HALF_OPEN_MS + 20)

  const probe = passport(up.client)
  t.equal(up.client.breakerStates()['passport.get_client'], 'half_open')
  await refused(t, up, passport(up.client))
  t.equal((await probe).kind, 'ok')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed')
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

  for (let i = 0; i < 2; i++) t.equal((await up.client.exchange('passport.get_client', fx.passportParams, { breaker: false })).outcome, 'status')
  t.equal(up.client.breakerStates()['passport.get_client'], 'closed', 'bypassing failures do not open it')
  t.match(up.events.map(e => e.outcome), ['status', 'ok', 'status', 'status'], 'the observer still hears them')
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
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }))
  up.post(DISCOUNT).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  t.equal((await discount(up.client)).kind, 'ok')
  t.equal(up.calls().length, 2)
})

t.test('retry: only once; a second refusal is the failure', async t => {
  const up = mockUpstream(t)
  up.post(DISCOUNT).replyWithError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' })).times(2)
  t.equal((await failure(discount(up.client))).reason, 'connect')
  t.equal(up.calls().length, 2)
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
