// Circuit breakers over real sockets. Dealers that keep failing stop being called: their sections degrade
// at once (shown by the fault upstream's counts, not by timing). A passport that recovers is probed after
// the half-open delay and the profile is whole again; a probe that fails keeps the breaker open.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { petrova } from '../../src/sandbox/seed.ts'
import type { Profile } from '../../schemas/profile.ts'
import type { OperationName } from '../../src/upstream/operations.ts'
import { consoleCall, faultService, faultUpstream, profileOf, readAnswer, type Fault } from '../helpers/fault-upstream.ts'

const THRESHOLD = 5
const HALF_OPEN_MS = 1500

const upstream = await faultUpstream(t)

t.test('dealers failing 100 times in a row: their breakers open and later profiles degrade without calling them', async t => {
  upstream.reset()
  // Half-open far beyond the test: once open, the dealers' breakers stay open.
  const base = await faultService(t, upstream.url, { UPSTREAM_TIMEOUT_MS: '500', UPSTREAM_BREAKER_THRESHOLD: String(THRESHOLD), UPSTREAM_BREAKER_HALF_OPEN_MS: '600000' })
  t.equal((await profileOf(base, petrova.identity)).status, 200, 'warm-up: whole profile')
  upstream.reset()
  // Every kind of failure the breaker counts, in turn (not a reset: its retry would make two requests of one call).
  const failures: Fault[] = [{ kind: 'status', status: 500 }, { kind: 'slow', ms: 5000 }, { kind: 'garbage_json' }, { kind: 'wrong_type' }, { kind: 'huge', bytes: 4 * 1024 * 1024 }]
  let turn = 0
  const failing = () => failures[turn++ % failures.length]!
  upstream.set('dealer.discount', failing)
  upstream.set('dealer.client', failing)

  const dealerCalls = (): Record<OperationName, number> => upstream.counts()
  const seen: number[] = []
  let whole = 0
  for (let i = 0; i < 100; i++) {
    const { status, headers, body } = await readAnswer(t, await profileOf(base, petrova.identity))
    const profile = body as Profile
    if (status === 200 && headers.get('x-degraded') === 'discount,contractor' && profile.discount === null && profile.contractor === null) whole++
    seen.push(dealerCalls()['dealer.discount'])
  }
  t.equal(whole, 100, 'all 100 profiles answered 200 with both dealer sections degraded')
  t.equal(dealerCalls()['passport.get_client'], 100, 'the passport was called every time')
  t.equal(dealerCalls()['dealer.discount'], THRESHOLD, `discount called ${THRESHOLD} times, then never again`)
  t.equal(dealerCalls()['dealer.client'], THRESHOLD, `contractor called ${THRESHOLD} times, then never again`)
  t.same(seen.slice(0, THRESHOLD), Array.from({ length: THRESHOLD }, (_, i) => i + 1), 'each of the first profiles called the dealers once')
  t.ok(seen.slice(THRESHOLD).every(n => n === THRESHOLD), 'no later profile reached them')

  // The dealers are fine again, but nothing probes them before the half-open delay.
  upstream.set('dealer.discount', { kind: 'normal' })
  upstream.set('dealer.client', { kind: 'normal' })
  const { headers } = await readAnswer(t, await profileOf(base, petrova.identity))
  t.equal(headers.get('x-degraded'), 'discount,contractor', 'still degraded while open')
  t.equal(dealerCalls()['dealer.discount'], THRESHOLD, 'still not called')

  // The console is an operator's view of the real upstream: past the breaker.
  const { status, body } = await readAnswer(t, await consoleCall(base, 'dealer.discount', { uid_client: petrova.identity.uid_client }))
  t.equal(status, 200)
  t.match(body, { operation: 'dealer.discount', status: 200, contract: { valid: true } })
  t.equal(dealerCalls()['dealer.discount'], THRESHOLD + 1, 'the console reached the dealer despite the open breaker')
})

t.test('passport: opens after its threshold (503 without a call), a successful probe after the half-open delay closes it', async t => {
  upstream.reset()
  const base = await faultService(t, upstream.url, { UPSTREAM_BREAKER_THRESHOLD: String(THRESHOLD), UPSTREAM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS) })
  t.equal((await profileOf(base, petrova.identity)).status, 200, 'warm-up: whole profile')
  upstream.reset()
  const passportCalls = () => upstream.counts()['passport.get_client']

  upstream.set('passport.get_client', { kind: 'status', status: 502 })
  for (let i = 1; i <= THRESHOLD; i++) {
    const { status, body } = await readAnswer(t, await profileOf(base, petrova.identity))
    t.equal(status, 502, `failure ${i} is the upstream's bad answer`)
    t.match(body, { code: 'UPSTREAM_BAD_RESPONSE' })
  }
  t.equal(passportCalls(), THRESHOLD)
  for (let i = 0; i < 3; i++) {
    const { status, body } = await readAnswer(t, await profileOf(base, petrova.identity))
    t.equal(status, 503, 'open: refused')
    t.match(body, { code: 'UPSTREAM_UNAVAILABLE', message: /passport\.get_client/ })
  }
  t.equal(passportCalls(), THRESHOLD, 'the open breaker called nobody')
  t.equal(upstream.counts()['dealer.discount'], 0, 'nor the dealers')

  // The passport recovers; the breaker does not know until its probe.
  upstream.set('passport.get_client', { kind: 'normal' })
  t.equal((await profileOf(base, petrova.identity)).status, 503, 'still open before the half-open delay')
  t.equal(passportCalls(), THRESHOLD)

  await sleep(HALF_OPEN_MS + 500)
  const { status, headers, body } = await readAnswer(t, await profileOf(base, petrova.identity))
  t.equal(status, 200, 'the probe succeeded')
  t.equal(headers.get('x-degraded'), null)
  t.same((body as Profile).degraded, [], 'the profile is whole')
  t.equal(passportCalls(), THRESHOLD + 1, 'exactly one probe call')
  for (let i = 0; i < 3; i++) t.equal((await profileOf(base, petrova.identity)).status, 200, 'closed: served')
  t.equal(passportCalls(), THRESHOLD + 4, 'every later profile calls the passport again')
})

t.test('passport: a probe that fails keeps the breaker open', async t => {
  upstream.reset()
  const base = await faultService(t, upstream.url, { UPSTREAM_BREAKER_THRESHOLD: String(THRESHOLD), UPSTREAM_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS) })
  upstream.set('passport.get_client', { kind: 'garbage_json' })
  for (let i = 0; i < THRESHOLD; i++) await profileOf(base, petrova.identity)
  t.equal(upstream.counts()['passport.get_client'], THRESHOLD)
  t.equal((await profileOf(base, petrova.identity)).status, 503, 'open')

  await sleep(HALF_OPEN_MS + 500)
  t.equal((await profileOf(base, petrova.identity)).status, 502, 'the probe met the broken upstream')
  t.equal(upstream.counts()['passport.get_client'], THRESHOLD + 1, 'one probe')
  t.equal((await profileOf(base, petrova.identity)).status, 503, 'open again at once')
  t.equal(upstream.counts()['passport.get_client'], THRESHOLD + 1, 'without another call')
})
