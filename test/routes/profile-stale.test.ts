// The last-known profile over real HTTP (the service on a port, the fault upstream on another): a client
// whose passport or dealers fail gets their last good profile with `stale`, x-stale and Age; a client
// without a copy gets today's error; not-found and another client's record forget the copy; a copy older
// than the window is never served; PROFILE_FRESH_S answers without the upstream. Time is a fake clock.
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import type { Profile } from '../../schemas/profile.ts'
import { ivanov, petrova } from '../../sandbox/seed.ts'
import {
  fakeClock, faultService, faultUpstream, profileOf, readResponse, type Fault
} from '../helpers/fault-upstream.ts'

const TIMEOUT_MS = 500
const WINDOW_S = 3600
const ENV = {
  UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
  PROFILE_TIMEOUT_MS: '4000',
  UPSTREAM_BREAKER_MIN_CALLS: '10000',
  PROFILE_STALE_IF_ERROR_S: String(WINDOW_S)
}

interface Case { name: string, fault: Fault, status: number, code: string }
const BAD = { status: 502, code: 'UPSTREAM_BAD_RESPONSE' }
const cases: Case[] = [
  { name: '5xx', fault: { kind: 'status', status: 503 }, ...BAD },
  { name: 'garbage JSON', fault: { kind: 'garbage_json' }, ...BAD },
  {
    name: 'an answer outside the contract',
    fault: { kind: 'answer', status: 200, body: { success: true, uid_client: 42 } },
    ...BAD
  },
  { name: 'a refused cross-origin redirect', fault: { kind: 'cross_origin' }, ...BAD },
  { name: 'a redirect loop', fault: { kind: 'redirect_loop', mode: 'self' }, ...BAD },
  { name: 'a timeout', fault: { kind: 'slow', ms: TIMEOUT_MS * 5 }, status: 504, code: 'UPSTREAM_TIMEOUT' },
  { name: 'a connection reset', fault: { kind: 'reset' }, status: 503, code: 'UPSTREAM_UNAVAILABLE' }
]

const upstream = await faultUpstream(t)

async function service (t: Test, env: Record<string, string> = {}) {
  const clock = fakeClock()
  const base = await faultService(t, upstream.url, { ...ENV, ...env }, { now: clock.now })
  upstream.reset()
  return { base, clock }
}

/** A fresh, whole profile of `who`: the copy the later requests may fall back on. */
async function warm (t: Test, base: string, who = petrova.identity): Promise<Profile> {
  upstream.reset()
  const res = await profileOf(base, who)
  const { status, headers, body } = await readResponse(t, res)
  t.equal(status, 200, 'a fresh profile')
  t.strictSame((body as Profile).stale, [], 'fresh: nothing stale')
  t.equal(headers.get('x-stale'), null, 'no x-stale header when fresh')
  t.equal(headers.get('age'), null, 'no Age header when fresh')
  return body as Profile
}

for (const c of cases) {
  t.test(`passport ${c.name}: the last good profile, named stale; ` +
    `a client without a copy gets ${c.status}`, async t => {
    const { base, clock } = await service(t)
    const good = await warm(t, base)
    clock.advance(120)
    upstream.reset()
    upstream.set('passport.get_client', c.fault)

    const { status, headers, body } = await readResponse(t, await profileOf(base, petrova.identity))
    t.equal(status, 200)
    t.strictSame(body, { ...good, stale: ['passport', 'discount', 'contractor'] },
      'the whole copy, every section named')
    t.equal(headers.get('x-stale'), 'passport,discount,contractor')
    t.equal(headers.get('age'), '120')
    t.equal(headers.get('x-degraded'), null)
    t.equal(headers.get('cache-control'), 'private, no-store')
    t.equal(upstream.counts()['dealer.discount'] + upstream.counts()['dealer.client'], 0, 'no dealer call')

    const other = await readResponse(t, await profileOf(base, ivanov.identity))
    t.equal(other.status, c.status, 'no copy of this client: today\'s error')
    t.match(other.body, { code: c.code })
  })
}

t.test('passport breaker open: the copy answers, and the passport is not called', async t => {
  const { base, clock } = await service(t, { UPSTREAM_BREAKER_MIN_CALLS: '3', UPSTREAM_BREAKER_HALF_OPEN_MS: '600000' })
  const good = await warm(t, base)
  clock.advance(5)
  upstream.reset()
  upstream.set('passport.get_client', { kind: 'status', status: 500 })
  // Two callers: one caller's failures count for no more than its share of the window (docs/security.md).
  t.equal((await profileOf(base, petrova.identity)).status, 200, 'a failure answered from the copy')
  t.equal((await profileOf(base, petrova.identity)).status, 200, 'and again: her share of the window is full')
  t.equal((await profileOf(base, ivanov.identity)).status, 502, 'no copy of this client: its failure opens it')
  const calls = upstream.counts()['passport.get_client']

  const { status, headers, body } = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(status, 200)
  t.strictSame(body, { ...good, stale: ['passport', 'discount', 'contractor'] })
  t.equal(headers.get('age'), '5')
  t.equal(upstream.counts()['passport.get_client'], calls, 'the open breaker kept the call from the passport')
  const other = await readResponse(t, await profileOf(base, ivanov.identity))
  t.equal(other.status, 503)
  t.match(other.body, { code: 'UPSTREAM_UNAVAILABLE' })
})

t.test('dealers down: their sections come from the copy, the passport part is fresh', async t => {
  const { base, clock } = await service(t)
  const good = await warm(t, base)
  clock.advance(60)
  upstream.reset()
  upstream.set('dealer.discount', { kind: 'status', status: 503 })
  upstream.set('dealer.client', { kind: 'reset' })

  const { status, headers, body } = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(status, 200)
  t.strictSame(body, { ...good, stale: ['discount', 'contractor'] }, 'not degraded: filled from the copy')
  t.equal(headers.get('x-stale'), 'discount,contractor')
  t.equal(headers.get('x-degraded'), null)
  t.equal(headers.get('age'), '60')

  // A minute later, the discount back: only the contractor is stale, and still as old as when fetched.
  clock.advance(60)
  upstream.set('dealer.discount', { kind: 'normal' })
  const next = await readResponse(t, await profileOf(base, petrova.identity))
  t.strictSame(next.body, { ...good, stale: ['contractor'] })
  t.equal(next.headers.get('age'), '120', 'the age of the contractor section, fetched two minutes ago')

  const other = await readResponse(t, await profileOf(base, ivanov.identity))
  t.equal(other.status, 200)
  t.match(other.body, { contractor: null, degraded: ['contractor'], stale: [] }, 'no copy: degraded as before')
  t.equal(other.headers.get('x-degraded'), 'contractor')
})

t.test('a passport not-found forgets the copy at once', async t => {
  const { base } = await service(t)
  await warm(t, base)
  upstream.set('passport.get_client', { kind: 'answer', status: 400, body: fx.passportNotFound })
  const gone = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(gone.status, 404)
  t.match(gone.body, { code: 'CLIENT_NOT_FOUND' })

  upstream.set('passport.get_client', { kind: 'status', status: 503 })
  const after = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(after.status, 502, 'no copy left to answer from')
})

t.test('a passport answer for another client forgets the copy', async t => {
  const { base } = await service(t)
  await warm(t, base)
  upstream.set('passport.get_client', { kind: 'answer', status: 200, body: ivanov.passport })
  const wrong = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(wrong.status, 502, 'another client\'s record is a bad answer')
  t.notOk(JSON.stringify(wrong.body).includes(ivanov.identity.uid_client), 'nothing of the other client')

  upstream.set('passport.get_client', { kind: 'status', status: 503 })
  t.equal((await profileOf(base, petrova.identity)).status, 502, 'no copy left to answer from')
})

t.test('a copy older than PROFILE_STALE_IF_ERROR_S is never served', async t => {
  const { base, clock } = await service(t)
  await warm(t, base)
  upstream.set('passport.get_client', { kind: 'status', status: 503 })
  clock.advance(WINDOW_S - 1)
  t.equal((await profileOf(base, petrova.identity)).status, 200, 'a second inside the window: served')
  clock.advance(1)
  const old = await readResponse(t, await profileOf(base, petrova.identity))
  t.equal(old.status, 502, 'at the window: not served')

  // Nor a dealer section of that age, beside a fresh passport.
  upstream.set('passport.get_client', { kind: 'normal' })
  upstream.set('dealer.client', { kind: 'status', status: 503 })
  const partial = await readResponse(t, await profileOf(base, petrova.identity))
  t.match(partial.body, { contractor: null, degraded: ['contractor'], stale: [] })
})

t.test('the same identity only: another login or vendor of the same uid gets no copy', async t => {
  const { base } = await service(t)
  await warm(t, base)
  upstream.set('passport.get_client', { kind: 'status', status: 503 })
  for (const who of [{ ...petrova.identity, login: '79990000000' }, { ...petrova.identity, vendor: 'hyundai' }]) {
    const res = await readResponse(t, await profileOf(base, who))
    t.equal(res.status, 502)
  }
})

t.test('PROFILE_STALE_IF_ERROR_S=0: no copy is kept or served', async t => {
  const { base } = await service(t, { PROFILE_STALE_IF_ERROR_S: '0' })
  await warm(t, base)
  upstream.set('passport.get_client', { kind: 'status', status: 503 })
  t.equal((await profileOf(base, petrova.identity)).status, 502)
})

t.test('PROFILE_FRESH_S: a copy younger than it answers without the upstream, an older one does not', async t => {
  const { base, clock } = await service(t, { PROFILE_FRESH_S: '30' })
  const good = await warm(t, base)
  clock.advance(10)
  upstream.reset()
  const cached = await readResponse(t, await profileOf(base, petrova.identity))
  t.strictSame(cached.body, good, 'the copy, not named stale: nothing failed')
  t.equal(cached.headers.get('age'), '10')
  t.strictSame(upstream.counts(), { 'passport.get_client': 0, 'dealer.discount': 0, 'dealer.client': 0 },
    'no upstream call')

  clock.advance(20)
  const fresh = await readResponse(t, await profileOf(base, petrova.identity))
  t.strictSame(fresh.body, good)
  t.equal(fresh.headers.get('age'), null)
  t.equal(upstream.counts()['passport.get_client'], 1, 'past PROFILE_FRESH_S: the upstream again')
})
