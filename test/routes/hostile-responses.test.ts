// Hostile upstream answers through the whole app: nesting deep enough to overflow any recursion, and
// contract violations by the hundred thousand. Each is a 502 for the passport, a degraded section for a
// dealer, data for the console, never a 500; and the process keeps answering its liveness probe.
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildTestApp, CONSOLE_KEY, type TestApp } from '../helpers/build-app.ts'
import { randomUUID } from 'node:crypto'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { respondToOperation } from '../helpers/upstream-mock.ts'

const PROFILE = '/api/users/profile'
const DEEP = 200_000
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`

const deepDiscount = `{"success":true,"message":"","data":{"bonuses":${nested(DEEP)}}}`
const deepContractor = JSON.stringify(fx.contractorResult).replace('"last_dealer":null',
  `"last_dealer":{"x":${nested(DEEP)}}`)
const deepPassport = JSON.stringify(fx.passportFound).replace('"cookies":[]', `"cookies":[${nested(DEEP)}]`)
const hugePassport = JSON.stringify({ ...fx.passportFound, catalog_cars_view: new Array(450_000).fill(1) })

const profile = (app: TestApp['app'], token = hs256()) => app.inject({ url: PROFILE, headers: bearer(token) })
/** A token of a client of its own: concurrent requests of one client would share one upstream call. */
const anotherClient = () => hs256(claimsFor({ ...fx.IVANOV, uid_client: randomUUID().toUpperCase() }))

t.test('a discount nested 200,000 deep degrades its section instead of failing the profile', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 200, body: deepDiscount })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: fx.contractorResult })
  const res = await profile(app)
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(res.json().degraded, ['discount'])
  t.equal(res.json().discount, null)
  t.same(res.json().contractor, fx.contractor)
})

t.test('a contractor whose last_dealer nests 200,000 deep degrades the contractor section', async t => {
  const { app, upstream } = await buildTestApp(t)
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 200, body: fx.discountWithBonuses })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: deepContractor })
  const res = await profile(app)
  t.equal(res.statusCode, 200, res.body)
  t.strictSame(res.json().degraded, ['contractor'])
})

t.test('a passport nested 200,000 deep is 502 UPSTREAM_BAD_RESPONSE, and does not open the breaker', async t => {
  const { app, upstream } = await buildTestApp(t, { UPSTREAM_BREAKER_MIN_CALLS: '2' })
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: deepPassport, times: 3 })
  for (let i = 0; i < 3; i++) {
    const res = await profile(app)
    t.equal(res.statusCode, 502, res.body)
    t.equal(res.json().code, 'UPSTREAM_BAD_RESPONSE')
  }
  // One client's absurd record says nothing of the upstream's health: the next client is served.
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: fx.passportFound })
  respondToOperation(upstream, 'dealer.discount', { status: 200, body: fx.discountWithBonuses })
  respondToOperation(upstream, 'dealer.client', { status: 200, body: fx.contractorResult })
  t.equal((await profile(app)).statusCode, 200)
})

t.test('the console shows a too deep answer as text, redacted, instead of a 500', async t => {
  const { app, upstream, config } = await buildTestApp(t)
  // A field the schema does not name, carrying an echoed key: the console shows every field.
  const text = JSON.stringify({ ...fx.passportFound, echo: config.PASSPORT_API_KEY }).replace(/}$/, `,"extra":${nested(DEEP)}}`)
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: text })
  const res = await app.inject({
    method: 'POST',
    url: '/request-console',
    headers: { 'x-console-key': CONSOLE_KEY },
    payload: { operation: 'passport.get_client', params: fx.passportParams }
  })
  t.equal(res.statusCode, 200, res.body.slice(0, 200))
  const body = res.json()
  t.match(body, { status: 200, contract: { valid: false, errors: [{ path: '/', message: /deeper than 64 levels/ }] } })
  t.equal(typeof body.body, 'string')
  t.notOk(res.body.includes(config.PASSPORT_API_KEY), 'the echoed key is redacted')
})

t.test('liveness is answered while several hostile answers are processed', async t => {
  const { app, upstream, agent } = await buildTestApp(t, { UPSTREAM_BREAKER_MIN_CALLS: '100' })
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: deepPassport, times: 3 })
  respondToOperation(upstream, 'passport.get_client', { status: 200, body: hugePassport, times: 3 })
  const hostile = Array.from({ length: 6 }, () => profile(app, anotherClient()))
  const live = app.inject('/health/live')
  const answers = await Promise.all(hostile)
  t.equal((await live).statusCode, 200, 'liveness answered')
  for (const res of answers) t.equal(res.statusCode, 502, 'each hostile passport is a 502, never a 500')
  agent.assertNoPendingInterceptors()
})
