// The profile under a failing upstream and under bursts: the circuit breakers seen through the route
// (MockAgent upstream, calls counted), and single-flight over real sockets (a port-0 upstream that holds
// its answers until every request of the burst has reached the route).
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildApp, type App } from '../../src/app.ts'
import { operations, type OperationName } from '../../schemas/operations.ts'
import { buildTestApp, CONSOLE_KEY, testConfig, type TestApp } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { listenLocally } from '../helpers/local-server.ts'

const PROFILE = '/api/users/profile'
const JSON_UTF8 = { 'content-type': 'application/json; charset=utf-8' }
const IVANOV_TOKEN = hs256()
const PETROVA_RECORD = {
  ...fx.passportFound,
  uid_client: fx.PETROVA.uid_client,
  client: { ...fx.client, uid_client: fx.PETROVA.uid_client, login: fx.PETROVA.login }
}
// Profiles in a burst or a loop must not meet the rate limit.
const UNLIMITED = { RATE_LIMIT_PROFILE_PER_MINUTE: '1000000', RATE_LIMIT_CONSOLE_PER_MINUTE: '1000000' }

interface Reply { status: number, body: unknown }

const ok = (body: unknown): Reply => ({ status: 200, body })
const broken: Reply = { status: 500, body: 'Internal Server Error' }

/**
 * Answers every call of `operation` with what `answer()` says at that moment (given the call's params), and
 * counts the calls.
 */
function counted (upstream: TestApp['upstream'], operation: OperationName,
  answer: (params: Record<string, string>) => Reply, delay?: number): () => number {
  let calls = 0
  const scope = upstream.intercept({ path: operations[operation].path, method: 'POST' }).reply(({ body: sent }) => {
    calls++
    const { status, body } = answer(JSON.parse(String(sent)) as Record<string, string>)
    const text = typeof body === 'string'
    return {
      statusCode: status,
      data: text ? body : JSON.stringify(body),
      responseOptions: { headers: text ? { 'content-type': 'text/plain' } : JSON_UTF8 }
    }
  })
  if (delay !== undefined) scope.delay(delay)
  scope.persist()
  return () => calls
}

/** An app whose breakers open once 3 calls failed (over half of at least 3), open until a test says otherwise. */
function breakerApp (t: Test, env: Record<string, string> = {}) {
  return buildTestApp(t,
    { UPSTREAM_BREAKER_MIN_CALLS: '3', UPSTREAM_BREAKER_HALF_OPEN_MS: '600000', ...UNLIMITED, ...env })
}

const getProfile = (app: App, token = IVANOV_TOKEN, headers: Record<string, string> = {}) =>
  app.inject({ url: PROFILE, headers: { ...bearer(token), ...headers } })

/**
 * The token of the n-th of several clients (0 is IVANOV): one caller's failures count for no more than its share
 * of a breaker's window (1 of these apps' 3 calls), so opening one takes failures of several clients.
 */
const client = (n: number) => n === 0
  ? { uid_client: fx.IVANOV.uid_client, token: IVANOV_TOKEN }
  : clientOf(`3F2504E0-4F89-41D3-9A0C-0305E82C33${String(n).padStart(2, '0')}`, `7999000000${n % 10}`)
const clientOf = (uid: string, login: string) =>
  ({ uid_client: uid, token: hs256(claimsFor({ uid_client: uid, login, vendor: fx.IVANOV.vendor })) })

/** The passport's record of whoever asked (the other-client rule holds for every client). */
const recordOf = (params: Record<string, string>): Reply => ok({
  ...fx.passportFound,
  uid_client: params.uid_client,
  client: { ...fx.client, uid_client: params.uid_client, login: params.login }
})

t.test('passport breaker open: 503 UPSTREAM_UNAVAILABLE at once, the passport not called', async t => {
  const { app, upstream } = await breakerApp(t)
  const passport = counted(upstream, 'passport.get_client', () => broken)
  for (let i = 0; i < 5; i++) t.equal((await getProfile(app)).statusCode, 502, 'one client failing: its own 502s')
  t.equal(app.upstream.breakerStates()['passport.get_client'], 'closed', 'one client alone never opens it')
  for (const n of [1, 2]) t.equal((await getProfile(app, client(n).token)).statusCode, 502)
  t.equal(app.upstream.breakerStates()['passport.get_client'], 'open', 'three clients failing open it')

  for (const n of [0, 1, 2, 3]) {
    const res = await getProfile(app, client(n).token)
    t.equal(res.statusCode, 503)
    t.match(res.json(), { statusCode: 503, code: 'UPSTREAM_UNAVAILABLE', message: String })
    t.ok(res.headers['x-request-id'])
  }
  t.equal(passport(), 7, 'only the failures that opened it reached the passport')
})

t.test('dealers failing 100 times in a row: their breakers open and later profiles ' +
  'degrade without calling them', async t => {
  const { app, upstream } = await breakerApp(t, { UPSTREAM_TIMEOUT_MS: '100' })
  const passport = counted(upstream, 'passport.get_client', recordOf)
  const discount = counted(upstream, 'dealer.discount', () => ({ status: 503, body: 'Service Unavailable' }))
  // Slower than UPSTREAM_TIMEOUT_MS: until its breaker opens, each profile waits for this timeout.
  const contractor = counted(upstream, 'dealer.client', () => ok(fx.contractorResult), 1000)

  for (let i = 0; i < 100; i++) {
    // Ten clients in turn: the dealers fail for every one of them.
    const who = client(i % 10)
    const res = await getProfile(app, who.token)
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-degraded'], 'discount,contractor')
    t.match(res.json(),
      { uid_client: who.uid_client, discount: null, contractor: null, degraded: ['discount', 'contractor'] })
  }
  t.equal(passport(), 100)
  t.equal(discount(), 3, 'the discount was called until its breaker opened, then never')
  t.equal(contractor(), 3, 'the contractor too: no profile waited for it after the third')
  t.strictSame(app.upstream.breakerStates(),
    { 'passport.get_client': 'closed', 'dealer.discount': 'open', 'dealer.client': 'open' })
})

t.test('passport recovering: the half-open probe succeeds and the breaker closes', async t => {
  let now = 1_700_000_000_000
  const { app, upstream } = await buildTestApp(t, {
    UPSTREAM_BREAKER_MIN_CALLS: '3', UPSTREAM_BREAKER_HALF_OPEN_MS: '10000', ...UNLIMITED
  }, { breakerNow: () => now })
  let healthy = false
  const passport = counted(upstream, 'passport.get_client', params => healthy ? recordOf(params) : broken)
  counted(upstream, 'dealer.discount', () => ok(fx.discountWithBonuses))
  counted(upstream, 'dealer.client', () => ok(fx.contractorResult))

  for (const n of [0, 1, 2]) t.equal((await getProfile(app, client(n).token)).statusCode, 502)
  t.equal((await getProfile(app)).statusCode, 503)
  t.equal(passport(), 3)

  healthy = true
  now += 9_999
  t.equal((await getProfile(app)).statusCode, 503, 'a millisecond before the half-open delay: still refused')
  now += 1
  const probe = await getProfile(app)
  t.equal(probe.statusCode, 200, 'the probe profile is whole')
  t.strictSame(probe.json().degraded, [])
  t.equal(app.upstream.breakerStates()['passport.get_client'], 'closed')
  t.equal((await getProfile(app)).statusCode, 200)
  t.equal(passport(), 5, 'closed again: every profile calls the passport')
})

t.test('the console goes past an open breaker to the real upstream, and leaves the breaker open', async t => {
  const { app, upstream } = await breakerApp(t)
  const passport = counted(upstream, 'passport.get_client', () => broken)
  for (const n of [0, 1, 2]) await getProfile(app, client(n).token)
  t.equal(app.upstream.breakerStates()['passport.get_client'], 'open')

  const res = await app.inject({
    method: 'POST',
    url: '/request-console',
    headers: { 'x-console-key': CONSOLE_KEY },
    payload: { operation: 'passport.get_client', params: fx.passportParams }
  })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { operation: 'passport.get_client', status: 500 }, 'the real answer, as data')
  t.equal(passport(), 4, 'it reached the upstream')
  t.equal(app.upstream.breakerStates()['passport.get_client'], 'open')
})

// Single-flight, over real sockets: the real undici Agent in front of a port-0 upstream.

interface Upstream {
  url: string
  /** Requests received per path, in order, with the x-request-id each carried. */
  received: Array<{ path: string, body: string, requestId: string | undefined }>
}

type Handler = (path: string, body: string, res: ServerResponse, req: IncomingMessage) => void | Promise<void>

async function upstreamServer (t: Test, handler: Handler): Promise<Upstream> {
  const received: Upstream['received'] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', chunk => { body += chunk })
    req.on('end', () => {
      const path = req.url ?? ''
      received.push({ path, body, requestId: req.headers['x-request-id'] as string | undefined })
      Promise.resolve(handler(path, body, res, req)).catch(err => res.destroy(err))
    })
  })
  const origin = await listenLocally(t, server)
  return { url: origin, received }
}

function answer (res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, JSON_UTF8)
  res.end(JSON.stringify(body))
}

/** The usual upstream: the passport record of whoever is asked for, the dealers' answers. */
function passportRecordFor (body: string): unknown {
  return JSON.parse(body).uid_client === fx.PETROVA.uid_client ? PETROVA_RECORD : fx.passportFound
}

async function serverApp (t: Test, upstreamUrl: string): Promise<App> {
  const app = await buildApp(testConfig({ UPSTREAM_URL: upstreamUrl, ...UNLIMITED }))
  t.teardown(() => app.close())
  return app
}

/** Calls `allIn` once `count` profile requests have reached the route, the point where they join a run. */
function onArrivals (app: App, count: number, allIn: () => void): void {
  let arrived = 0
  app.addHook('preHandler', async request => {
    if (request.url.startsWith(PROFILE) && ++arrived === count) allIn()
  })
}

const paths = (up: Upstream) => up.received.map(r => r.path).sort()
const ALL_THREE = ['/bc_api_web_service/client', '/bc_api_web_service/discount', '/bc_passport/get_client']

t.test('single-flight: a burst for one client costs one set of upstream calls; every ' +
  'request gets its own answer', async t => {
  const BURST = 6
  const allIn = Promise.withResolvers<void>()
  const up = await upstreamServer(t, async (path, body, res) => {
    if (path === '/bc_passport/get_client') {
      await allIn.promise
      return answer(res, passportRecordFor(body))
    }
    answer(res, path.endsWith('/discount') ? fx.discountWithBonuses : fx.contractorResult)
  })
  const app = await serverApp(t, up.url)
  onArrivals(app, BURST, allIn.resolve)

  const answers =
    await Promise.all(Array.from({ length: BURST },
      (_, i) => getProfile(app, IVANOV_TOKEN, { 'x-request-id': `burst-${i}` })))

  t.strictSame(paths(up), ALL_THREE, 'one passport, one discount, one contractor call')
  t.strictSame(answers.map(a => a.statusCode), Array(BURST).fill(200))
  t.strictSame(answers.map(a => a.headers['x-request-id']), answers.map((_, i) => `burst-${i}`),
    'each answer has its own request id')
  const first = answers[0]!.json()
  t.match(first, {
    uid_client: fx.IVANOV.uid_client,
    client: fx.client,
    discount: fx.discountWithBonuses.data,
    contractor: fx.contractor,
    degraded: []
  })
  for (const a of answers) {
    t.strictSame(a.json(), first)
    t.equal(a.headers['cache-control'], 'private, no-store')
  }
  const upstreamIds = new Set(up.received.map(r => r.requestId))
  t.equal(upstreamIds.size, 1, 'the shared calls carry one request id')
  t.ok(answers.some(a => upstreamIds.has(a.headers['x-request-id'] as string)),
    'the id of the request that started them')
})

t.test('single-flight: different clients are never merged', async t => {
  const allIn = Promise.withResolvers<void>()
  const up = await upstreamServer(t, async (path, body, res) => {
    if (path === '/bc_passport/get_client') {
      await allIn.promise
      return answer(res, passportRecordFor(body))
    }
    answer(res, path.endsWith('/discount') ? fx.discountNone : fx.contractorResult)
  })
  const app = await serverApp(t, up.url)
  onArrivals(app, 4, allIn.resolve)
  const petrova = hs256(claimsFor(fx.PETROVA))
  // The same uid_client under another login or vendor is another passport lookup.
  const otherLogin = hs256(claimsFor({ ...fx.IVANOV, login: '79160000000' }))
  const otherVendor = hs256(claimsFor({ ...fx.IVANOV, vendor: 'hyundai' }))

  const tokens = [IVANOV_TOKEN, petrova, otherLogin, otherVendor]
  const [ivanov, petrovaRes, loginRes, vendorRes] = await Promise.all(tokens.map(token => getProfile(app, token)))

  t.equal(ivanov!.json().uid_client, fx.IVANOV.uid_client)
  t.equal(petrovaRes!.json().uid_client, fx.PETROVA.uid_client)
  t.equal(loginRes!.statusCode, 200)
  t.equal(vendorRes!.statusCode, 200)
  const passports = up.received.filter(r => r.path === '/bc_passport/get_client').map(r => JSON.parse(r.body))
  t.equal(passports.length, 4, 'one passport call per client')
  t.strictSame(new Set(passports.map(p => `${p.vendor} ${p.login} ${p.uid_client}`)).size, 4)
})

t.test('single-flight: a failure reaches every waiter and is not kept; the next request calls again', async t => {
  const BURST = 3
  const allIn = Promise.withResolvers<void>()
  let passportCalls = 0
  const up = await upstreamServer(t, async (path, body, res) => {
    if (path === '/bc_passport/get_client') {
      if (++passportCalls === 1) {
        await allIn.promise
        return answer(res, { success: false, message: 'Internal error' }, 500)
      }
      return answer(res, passportRecordFor(body))
    }
    answer(res, path.endsWith('/discount') ? fx.discountNone : fx.contractorResult)
  })
  const app = await serverApp(t, up.url)
  onArrivals(app, BURST, allIn.resolve)

  const failed =
    await Promise.all(Array.from({ length: BURST },
      (_, i) => getProfile(app, IVANOV_TOKEN, { 'x-request-id': `fail-${i}` })))
  for (const [i, res] of failed.entries()) {
    t.equal(res.statusCode, 502)
    t.match(res.json(), { statusCode: 502, code: 'UPSTREAM_BAD_RESPONSE' })
    t.equal(res.headers['x-request-id'], `fail-${i}`)
  }
  t.equal(passportCalls, 1, 'the burst shared one failing call')

  const next = await getProfile(app)
  t.equal(next.statusCode, 200)
  t.equal(passportCalls, 2, 'the failure was not kept: the next request asked again')
})

t.test('single-flight: the caller that started the calls leaving does not end them for the others', async t => {
  t.setTimeout(15_000)
  let passportSeen!: () => void
  const seen = new Promise<void>(resolve => { passportSeen = resolve })
  let release!: () => void
  const released = new Promise<void>(resolve => { release = resolve })
  let passportFinished: boolean | undefined
  const up = await upstreamServer(t, async (path, body, res) => {
    if (path === '/bc_passport/get_client') {
      res.on('close', () => { passportFinished = res.writableFinished })
      passportSeen()
      await released
      return answer(res, passportRecordFor(body))
    }
    answer(res, path.endsWith('/discount') ? fx.discountWithBonuses : fx.contractorResult)
  })
  const app = await serverApp(t, up.url)
  const bothIn = Promise.withResolvers<void>()
  onArrivals(app, 2, bothIn.resolve)
  let starterGone!: () => void
  const gone = new Promise<void>(resolve => { starterGone = resolve })
  app.addHook('onRequestAbort', async request => { if (request.url.startsWith(PROFILE)) starterGone() })
  const address = await app.listen({ port: 0, host: '127.0.0.1' })

  // The starter: its request begins the run, then it hangs up.
  const starter = httpRequest(`${address}${PROFILE}`, { headers: bearer(IVANOV_TOKEN) })
  starter.on('error', () => {})
  starter.end()
  await seen
  const waiter = getProfile(app)
  await bothIn.promise
  starter.destroy()
  await gone
  await nextTurn()
  release()

  const res = await waiter
  t.equal(res.statusCode, 200)
  t.strictSame(res.json().degraded, [], 'nothing was cut short')
  t.equal(passportFinished, true, 'the passport exchange ran to its end')
  t.strictSame(paths(up), ALL_THREE, 'still one set of calls')
})
