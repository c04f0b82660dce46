// Every upstream operation, one fault at a time, over real sockets: the service from buildApp on a port,
// the fault upstream on another. A passport fault fails the profile with 502/503/504 and the dealers are
// never called; a dealer fault degrades its section only; the console shows an answer that arrived as
// data and a transport failure as 502/503/504. No fault lets a key out or an unmapped 500 through.
import t, { type Test } from 'tap'
import { petrova } from '../../sandbox/seed.ts'
import type { ConsoleAnswer } from '../../schemas/console.ts'
import type { Profile } from '../../schemas/profile.ts'
import type { OperationName } from '../../schemas/operations.ts'
import {
  consoleCall, faultService, faultUpstream, MiB, profileOf, readResponse, until,
  type Fault, type FaultUpstream
} from '../helpers/fault-upstream.ts'

// Small enough to meet quickly, large enough that a normal exchange on a loaded CI box stays within it.
const TIMEOUT_MS = 500
// One service per fault, its breakers out of the way: breaker behaviour is breaker.test.ts's subject; and
// without last-known copies, so the warm-up profile cannot answer for a failure (profile-stale.test.ts).
const ENV = {
  UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
  PROFILE_TIMEOUT_MS: '4000',
  UPSTREAM_BREAKER_MIN_CALLS: '10000',
  PROFILE_STALE_IF_ERROR_S: '0'
}

/** What the console answers: the upstream's own status as data, or the service's error. */
type ConsoleExpectation = { data: number } | { error: number, code: string }

interface Case {
  name: string
  fault: Fault
  /** The profile's error when the passport meets this fault. */
  passport: { status: number, code: string }
  console: ConsoleExpectation
}

const BAD = { status: 502, code: 'UPSTREAM_BAD_RESPONSE' }
const cases: Case[] = [
  {
    name: 'slow beyond the deadline',
    fault: { kind: 'slow', ms: TIMEOUT_MS * 5 },
    passport: { status: 504, code: 'UPSTREAM_TIMEOUT' },
    console: { error: 504, code: 'UPSTREAM_TIMEOUT' }
  },
  { name: '5xx', fault: { kind: 'status', status: 503 }, passport: BAD, console: { data: 503 } },
  {
    name: 'connection reset',
    fault: { kind: 'reset' },
    passport: { status: 503, code: 'UPSTREAM_UNAVAILABLE' },
    console: { error: 503, code: 'UPSTREAM_UNAVAILABLE' }
  },
  { name: 'garbage JSON', fault: { kind: 'garbage_json' }, passport: BAD, console: { data: 200 } },
  { name: 'wrong content type', fault: { kind: 'wrong_type' }, passport: BAD, console: { data: 200 } },
  {
    name: 'a 40 MiB body, chunked',
    fault: { kind: 'huge', bytes: 40 * MiB },
    passport: BAD,
    console: { error: 502, code: 'UPSTREAM_BAD_RESPONSE' }
  },
  {
    name: 'a 40 MiB body, declared',
    fault: { kind: 'huge', bytes: 40 * MiB, declared: true },
    passport: BAD,
    console: { error: 502, code: 'UPSTREAM_BAD_RESPONSE' }
  },
  {
    name: 'a redirect loop to itself',
    fault: { kind: 'redirect_loop', mode: 'self' },
    passport: BAD,
    console: { error: 502, code: 'UPSTREAM_BAD_RESPONSE' }
  },
  {
    name: 'a ping-pong redirect loop',
    fault: { kind: 'redirect_loop', mode: 'ping_pong' },
    passport: BAD,
    console: { error: 502, code: 'UPSTREAM_BAD_RESPONSE' }
  },
  {
    name: 'a cross-origin redirect',
    fault: { kind: 'cross_origin' },
    passport: BAD,
    console: { error: 502, code: 'UPSTREAM_BAD_RESPONSE' }
  }
]

const sections = { 'dealer.discount': 'discount', 'dealer.client': 'contractor' } as const
const paramsOf = (operation: OperationName) => operation === 'passport.get_client'
  ? petrova.identity
  : { uid_client: petrova.identity.uid_client }

/** What each fault must leave behind besides the answer: the other origin untouched, a huge body not read. */
async function checkAftermath (t: Test, upstream: FaultUpstream, fault: Fault, exchanges: number): Promise<void> {
  if (fault.kind === 'cross_origin') {
    t.same(upstream.elsewhere.received(), [], 'the other origin received no request: the key never left')
  }
  if (fault.kind === 'huge') {
    t.ok(await until(() => upstream.huge().length === exchanges), 'every huge answer ended')
    for (const report of upstream.huge()) {
      t.notOk(report.complete, 'the client closed the connection before the end')
      t.ok(report.bytesWritten < 16 * MiB,
        `the server got to write ${(report.bytesWritten / MiB).toFixed(1)} MiB of 40`)
    }
  }
}

const upstream = await faultUpstream(t)

for (const c of cases) {
  t.test(c.name, async t => {
    const base = await faultService(t, upstream.url, ENV)
    // A first, normal profile: the service is warm and knows the slash locations before any fault.
    upstream.reset()
    t.equal((await profileOf(base, petrova.identity)).status, 200, 'warm-up profile')
    t.same(upstream.counts(), { 'passport.get_client': 2, 'dealer.discount': 2, 'dealer.client': 2 },
      'each operation met the upstream\'s 307 to its slash path once')
    t.test('passport: the profile fails with its mapped error and the dealers are not called', async t => {
      upstream.reset()
      upstream.set('passport.get_client', c.fault)
      const rssBefore = process.memoryUsage.rss()
      const { status, body } = await readResponse(t, await profileOf(base, petrova.identity))
      t.equal(status, c.passport.status)
      t.match(body, { code: c.passport.code, message: /passport\.get_client/ })
      t.equal(upstream.counts()['dealer.discount'] + upstream.counts()['dealer.client'], 0, 'no dealer call')
      t.ok(upstream.counts()['passport.get_client'] >= 1, 'the passport was called')
      await checkAftermath(t, upstream, c.fault, 1)
      if (c.fault.kind === 'huge') {
        // Buffering the whole body would cost at least its 40 MiB (and its string again).
        const growth = process.memoryUsage.rss() - rssBefore
        t.ok(growth < 32 * MiB, `RSS grew by ${(growth / MiB).toFixed(1)} MiB, well under the 40 MiB offered`)
      }
    })

    for (const operation of ['dealer.discount', 'dealer.client'] as const) {
      t.test(`${operation}: its section degrades, the rest of the profile is whole`, async t => {
        upstream.reset()
        upstream.set(operation, c.fault)
        const { status, headers, body } = await readResponse(t, await profileOf(base, petrova.identity))
        t.equal(status, 200)
        const profile = body as Profile
        const section = sections[operation]
        t.same(profile.degraded, [section])
        t.equal(headers.get('x-degraded'), section)
        t.equal(profile[section], null)
        if (section === 'discount') t.same(profile.contractor, petrova.contractor.data, 'the contractor is whole')
        else t.same(profile.discount, petrova.discount.data, 'the discount is whole')
        t.equal(profile.client.login, petrova.identity.login, 'the passport part is whole')
        await checkAftermath(t, upstream, c.fault, 1)
      })
    }

    for (const operation of ['passport.get_client', 'dealer.discount', 'dealer.client'] as const) {
      t.test(`console, ${operation}`, async t => {
        upstream.reset()
        upstream.set(operation, c.fault)
        const { status, body } = await readResponse(t, await consoleCall(base, operation, paramsOf(operation)))
        if ('data' in c.console) {
          t.equal(status, 200, 'an answer that arrived is data')
          const answer = body as ConsoleAnswer
          t.equal(answer.operation, operation)
          t.equal(answer.status, c.console.data, 'the upstream status as received')
          t.equal(answer.contract.valid, false, 'and it breaks the contract')
          t.ok(answer.contract.errors.length > 0)
        } else {
          t.equal(status, c.console.error)
          t.match(body, { code: c.console.code })
        }
        await checkAftermath(t, upstream, c.fault, 1)
      })
    }
  })
}
