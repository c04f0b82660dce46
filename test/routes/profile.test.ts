// GET /api/users/profile through the whole app (inject) with the upstream faked by MockAgent: every rule
// of docs/api.md, the exact requests the upstream receives, and what the caller may and may not see.
import t, { type Test } from 'tap'
import type { MockAgent } from 'undici'
import * as fx from '../../schemas/fixtures.ts'
import { operations } from '../../schemas/operations.ts'
import { buildTestApp, DEALER_KEY, PASSPORT_KEY } from '../helpers/build-app.ts'
import { respondToOperations, type Reply } from '../helpers/upstream-mock.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'

const PROFILE = '/api/users/profile'
const JSON_UTF8 = 'application/json; charset=utf-8'
const IVANOV_TOKEN = hs256()

const ok = (body: unknown, delay?: number): Reply => ({ status: 200, body, ...(delay === undefined ? {} : { delay }) })
const allFine = {
  'passport.get_client': ok(fx.passportFound),
  'dealer.discount': ok(fx.discountWithBonuses),
  'dealer.client': ok(fx.contractorResult)
}

/** A breadcrumb as the front sends it, decoded here independently of the code under test. */
const decoded = (crumb: { data: string }) => ({ ...crumb, data: JSON.parse(crumb.data) })

const fullProfile = {
  uid_client: fx.IVANOV.uid_client,
  client: fx.client,
  catalog_cars_view: fx.catalogCarsView.map(decoded),
  catalog_cars_favourites: fx.catalogCarsFavourites.map(decoded),
  discount: fx.discountWithBonuses.data,
  contractor: fx.contractor,
  degraded: [],
  stale: []
}

function assertError (tt: Test, res: { statusCode: number, headers: Record<string, unknown>, json (): unknown },
  status: number, code: string) {
  tt.equal(res.statusCode, status)
  tt.match(res.json(), { statusCode: status, code, error: String, message: String })
  tt.ok(res.headers['x-request-id'], 'x-request-id on the error')
  tt.notOk(res.headers['x-degraded'])
}

const noPending = (agent: MockAgent) => agent.assertNoPendingInterceptors()

t.test('full profile: three upstream calls with the exact wire requests, composed answer', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const sent = respondToOperations(upstream, allFine)
  const res = await app.inject({
    url: PROFILE,
    headers: {
      ...bearer(IVANOV_TOKEN),
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      baggage: 'k=v',
      cookie: 'session=abc'
    }
  })
  noPending(agent)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], JSON_UTF8)
  t.notOk('x-degraded' in res.headers, 'no x-degraded header when nothing is degraded')
  t.equal(res.headers['cache-control'], 'private, no-store')
  const body = res.json()
  t.strictSame(Object.keys(body), [
    'uid_client', 'client', 'catalog_cars_view', 'catalog_cars_favourites',
    'discount', 'contractor', 'degraded', 'stale'
  ])
  t.strictSame(body, fullProfile)
  t.strictSame(body.catalog_cars_view.map((c: { id_user_breadcrumbs: number }) => c.id_user_breadcrumbs),
    [48213, 48190, 47702, 46011], 'upstream order kept')
  t.strictSame(body.catalog_cars_view[2].data,
    { car_guid: '771045', date: '2024-05-02T12:30:00.000000+03:00', type: 3 })

  const requestId = res.headers['x-request-id']
  t.equal(sent[0]?.operation, 'passport.get_client', 'the passport comes first')
  t.strictSame(sent.map(s => s.operation).sort(), ['dealer.client', 'dealer.discount', 'passport.get_client'])
  for (const call of sent) {
    const passport = call.operation === 'passport.get_client'
    t.test(call.operation, async t => {
      t.equal(call.body, passport
        ? `{"vendor":"kia","login":"79161234567","uid_client":"${fx.IVANOV.uid_client}"}`
        : `{"uid_client":"${fx.IVANOV.uid_client}"}`)
      t.equal(call.headers['content-type'], 'application/x-www-form-urlencoded')
      t.equal(call.headers['x-authorization'], passport ? PASSPORT_KEY : DEALER_KEY)
      t.equal(call.headers['x-request-id'], requestId, 'the request id travels upstream')
      t.equal(call.headers.traceparent, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
      t.equal(call.headers.baggage, 'k=v')
      t.notOk(call.headers.authorization, "the caller's token never goes upstream")
      t.notOk(call.headers.cookie)
    })
  }
})

t.test('the caller can only read its own profile', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const sent = respondToOperations(upstream, {
    'passport.get_client': ok({
      ...fx.passportFound,
      uid_client: fx.PETROVA.uid_client,
      client: { ...fx.client, uid_client: fx.PETROVA.uid_client, login: fx.PETROVA.login }
    }),
    'dealer.discount': ok(fx.discountNone),
    'dealer.client': ok(fx.contractorResult)
  })
  const other = fx.IVANOV.uid_client
  // PETROVA's token (sub in lower case), with every way a request could try to name IVANOV instead.
  const res = await app.inject({
    url: `${PROFILE}?uid_client=${other}&login=${fx.IVANOV.login}&vendor=other`,
    headers: {
      ...bearer(hs256(claimsFor({ ...fx.PETROVA, uid_client: fx.PETROVA.uid_client.toLowerCase() }))),
      'x-uid-client': other,
      'x-login': fx.IVANOV.login
    }
  })
  noPending(agent)
  t.equal(res.statusCode, 200)
  t.equal(res.json().uid_client, fx.PETROVA.uid_client)
  t.strictSame(JSON.parse(sent.find(s => s.operation === 'passport.get_client')!.body),
    { vendor: 'kia', login: fx.PETROVA.login, uid_client: fx.PETROVA.uid_client })
  for (const call of sent.filter(s => s.operation !== 'passport.get_client')) {
    t.strictSame(JSON.parse(call.body), { uid_client: fx.PETROVA.uid_client })
  }
})

t.test('a passport answer about another client is refused, dealers not called', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  respondToOperations(upstream, {
    'passport.get_client': ok({ ...fx.passportFound, uid_client: fx.PETROVA.uid_client })
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  assertError(t, res, 502, 'UPSTREAM_BAD_RESPONSE')
  t.notOk(res.body.includes('Иван'), 'nothing of the record in the error')
})

t.test('discount', async t => {
  t.test('with bonuses: the dealer data as sent, unknown fields included (its shape is not documented)', async t => {
    const { app, agent, upstream } = await buildTestApp(t)
    const bonuses = {
      ...fx.discountWithBonuses, data: { ...fx.discountWithBonuses.data, tiers: [{ from: 0, percent: 3 }] }
    }
    respondToOperations(upstream, { ...allFine, 'dealer.discount': ok(bonuses) })
    const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
    noPending(agent)
    t.strictSame(res.json().discount, bonuses.data)
  })

  t.test('no bonuses (success false, data null, HTTP 200): null and not degraded', async t => {
    const { app, agent, upstream } = await buildTestApp(t)
    respondToOperations(upstream, { ...allFine, 'dealer.discount': ok(fx.discountNone) })
    const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
    noPending(agent)
    t.equal(res.statusCode, 200)
    t.equal(res.json().discount, null)
    t.strictSame(res.json().degraded, [])
    t.notOk(res.headers['x-degraded'])
  })
})

t.test('contractor success false or data null: null and not degraded', async t => {
  const answers = [
    { ...fx.contractorResult, data: null },
    { success: false, message: 'Контрагент не найден', data: null, http_code: 200 }
  ]
  for (const answer of answers) {
    const { app, agent, upstream } = await buildTestApp(t)
    respondToOperations(upstream, { ...allFine, 'dealer.client': ok(answer) })
    const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
    noPending(agent)
    t.equal(res.json().contractor, null)
    t.strictSame(res.json().degraded, [])
    t.notOk(res.headers['x-degraded'])
  }
})

t.test('a failing dealer lookup degrades its section, the answer stays 200', async t => {
  const html = { 'content-type': 'text/html' }
  const failures: Array<[string, Reply]> = [
    ['HTTP 500', { status: 500, body: { success: false, message: 'Internal error' } }],
    ['HTTP 503 in HTML', { status: 503, body: '<html>Service Unavailable</html>', headers: html }],
    ['not JSON', { status: 200, body: '{"success": tr', headers: { 'content-type': JSON_UTF8 } }],
    ['contract break', ok({ success: 'yes', data: [] })],
    ['connection refused', { error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }],
    ['too slow', ok({}, 1000)]
  ]
  for (const [section, operation] of [['discount', 'dealer.discount'], ['contractor', 'dealer.client']] as const) {
    for (const [name, answer] of failures) {
      t.test(`${section}: ${name}`, async t => {
        const { app, agent, upstream } = await buildTestApp(t, { UPSTREAM_TIMEOUT_MS: '100' })
        respondToOperations(upstream, { ...allFine, [operation]: answer })
        const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
        noPending(agent)
        t.equal(res.statusCode, 200)
        t.equal(res.headers['x-degraded'], section)
        t.strictSame(res.json(), { ...fullProfile, [section]: null, degraded: [section] })
      })
    }
  }
})

t.test('both dealer lookups failing: both null, both named, in a fixed order', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  respondToOperations(upstream, {
    ...allFine,
    'dealer.discount': { status: 502, body: 'Bad Gateway', headers: { 'content-type': 'text/plain' } },
    'dealer.client': { status: 500, body: {} }
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-degraded'], 'discount,contractor')
  t.match(res.json(), { discount: null, contractor: null, degraded: ['discount', 'contractor'], client: fx.client })
})

t.test('dealers get only what remains of the profile budget', async t => {
  // A 5 s upstream deadline would let both dealers answer after 1 s; the 400 ms budget must not.
  const { app, agent, upstream } = await buildTestApp(t, { PROFILE_TIMEOUT_MS: '400', UPSTREAM_TIMEOUT_MS: '5000' })
  respondToOperations(upstream, {
    'passport.get_client': ok(fx.passportFound, 100),
    'dealer.discount': ok(fx.discountWithBonuses, 1000),
    'dealer.client': ok(fx.contractorResult, 1000)
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  t.equal(res.statusCode, 200)
  t.equal(res.headers['x-degraded'], 'discount,contractor')
  t.strictSame(res.json().client, fx.client)
})

t.test('passport not found: 404 CLIENT_NOT_FOUND, dealers never called', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const sent = respondToOperations(upstream, { 'passport.get_client': { status: 400, body: fx.passportNotFound } })
  const res = await app.inject({ url: PROFILE, headers: bearer(hs256(claimsFor(fx.UNKNOWN))) })
  noPending(agent)
  assertError(t, res, 404, 'CLIENT_NOT_FOUND')
  t.strictSame(sent.map(s => s.operation), ['passport.get_client'])
})

t.test('passport failures map to the catalog, dealers never called', async t => {
  const cases: Array<[string, Reply, number, string, Record<string, string>?]> = [
    ['HTTP 500', { status: 500, body: { success: false } }, 502, 'UPSTREAM_BAD_RESPONSE'],
    ['HTTP 404 in HTML', { status: 404, body: '<html>Not Found</html>', headers: { 'content-type': 'text/html' } },
      502, 'UPSTREAM_BAD_RESPONSE'],
    ['not JSON', { status: 200, body: 'not json', headers: { 'content-type': JSON_UTF8 } }, 502,
      'UPSTREAM_BAD_RESPONSE'],
    ['schema break', ok({ ...fx.passportFound, client: { ...fx.client, login: 'not-digits' } }),
      502, 'UPSTREAM_BAD_RESPONSE'],
    ['400 that is not CLIENT_NOT_FOUND',
      { status: 400, body: { success: false, message: 'Bad request', msg_code: 'BAD_PARAMS' } },
      502, 'UPSTREAM_BAD_RESPONSE'],
    ['unreachable', { error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) },
      503, 'UPSTREAM_UNAVAILABLE'],
    ['slower than UPSTREAM_TIMEOUT_MS', ok(fx.passportFound, 1000),
      504, 'UPSTREAM_TIMEOUT', { UPSTREAM_TIMEOUT_MS: '100' }],
    ['slower than PROFILE_TIMEOUT_MS', ok(fx.passportFound, 1000),
      504, 'UPSTREAM_TIMEOUT', { PROFILE_TIMEOUT_MS: '100' }]
  ]
  for (const [name, answer, status, code, env] of cases) {
    t.test(name, async t => {
      const { app, agent, upstream } = await buildTestApp(t, env)
      respondToOperations(upstream, { 'passport.get_client': answer })
      const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
      noPending(agent)
      assertError(t, res, status, code)
      t.notOk(/upstream\.test|KEY|stack/i.test(res.body), 'no internals in the message')
    })
  }
})

t.test('bad breadcrumb data keeps its item with data null', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  type Crumb = typeof fx.breadcrumb
  const [first, second, third, fourth] = fx.catalogCarsView as [Crumb, Crumb, Crumb, Crumb]
  const view = [
    { ...first, data: '{"car_guid": "C2D4E6F8' },
    { ...second, data: JSON.stringify({ car_guid: 'A1', date: 'yesterday', type: 2 }) },
    { ...third, data: '[]' },
    fourth
  ]
  respondToOperations(upstream, {
    ...allFine,
    'passport.get_client': ok({ ...fx.passportFound, catalog_cars_view: view, catalog_cars_favourites: [] })
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.strictSame(body.catalog_cars_view,
    [{ ...first, data: null }, { ...second, data: null }, { ...third, data: null }, decoded(fourth)])
  t.strictSame(body.catalog_cars_favourites, [])
  t.strictSame(body.degraded, [], 'a bad breadcrumb is not a degraded section')
})

t.test('upstream fields outside the contract never reach the caller', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const leak = { leaked_field: 'LEAKED-VALUE' }
  const crumb = { ...fx.breadcrumb, ...leak, data: JSON.stringify({ ...fx.breadcrumbData, ...leak }) }
  respondToOperations(upstream, {
    'passport.get_client': ok({
      ...fx.passportFound,
      ...leak,
      cookies: [{ name: 'sid', value: 'LEAKED-COOKIE' }],
      client: {
        ...fx.client,
        ...leak,
        password_hash: 'LEAKED-HASH',
        client_data: { ...fx.clientDataReg, ...leak },
        client_data_dms: { ...fx.clientDataDms, ...leak }
      },
      catalog_cars_view: [crumb],
      catalog_cars_favourites: [crumb]
    }),
    'dealer.discount': ok({ ...fx.discountNone, ...leak }),
    'dealer.client': ok({
      ...fx.contractorResult,
      ...leak,
      data: {
        ...fx.contractor,
        ...leak,
        contacts: [{ ...fx.contact, ...leak, type_contact_info: { ...fx.contact.type_contact_info, ...leak } }]
      }
    })
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  t.equal(res.statusCode, 200)
  t.notOk(res.body.includes('LEAKED'), 'no unknown field anywhere in the answer')
  t.notOk(res.body.includes('leaked_field'))
  t.strictSame(res.json(), {
    ...fullProfile,
    catalog_cars_view: [decoded(fx.breadcrumb)],
    catalog_cars_favourites: [decoded(fx.breadcrumb)],
    discount: null
  })
})

t.test('the upstream as it really answers: 307 to the slash path first, then straight there', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  for (const op of Object.values(operations)) {
    upstream.intercept({ path: op.path, method: 'POST' }).reply(307, '<html>Temporary Redirect</html>',
      { headers: { location: `${op.path}/`, 'content-type': 'text/html' } })
  }
  const answers = {
    [`${operations['passport.get_client'].path}/`]: fx.passportFound,
    [`${operations['dealer.discount'].path}/`]: fx.discountWithBonuses,
    [`${operations['dealer.client'].path}/`]: fx.contractorResult
  }
  for (const [path, body] of Object.entries(answers)) {
    upstream.intercept({ path, method: 'POST' }).reply(200, body, { headers: { 'content-type': JSON_UTF8 } }).times(2)
  }
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
    t.equal(res.statusCode, 200)
    t.strictSame(res.json(), fullProfile)
  }
  noPending(agent)
})

t.test('every answer carries x-request-id, the inbound one when well formed', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const sent = respondToOperations(upstream, allFine)
  const res = await app.inject({ url: PROFILE, headers: { ...bearer(IVANOV_TOKEN), 'x-request-id': 'mobile-7f3a.42' } })
  noPending(agent)
  t.equal(res.headers['x-request-id'], 'mobile-7f3a.42')
  t.ok(sent.length === 3 && sent.every(s => s.headers['x-request-id'] === 'mobile-7f3a.42'))
  const refused = await app.inject({ url: PROFILE, headers: { 'x-request-id': 'bad id\twith spaces' } })
  t.equal(refused.statusCode, 401)
  t.match(refused.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'a fresh id replaces a malformed one')
})

t.test('undocumented upstream objects are passed on whole: last_dealer and the discount data', async t => {
  const { app, agent, upstream } = await buildTestApp(t)
  const lastDealer = { id: 'B1C2D3E4-F5A6-4B7C-8D9E-0F1A2B3C4D5E', name: 'Киа Центр Москва' }
  respondToOperations(upstream, {
    'passport.get_client': ok(fx.passportFound),
    'dealer.discount': ok(fx.discountWithBonuses),
    'dealer.client': ok({ ...fx.contractorResult, data: { ...fx.contractor, last_dealer: lastDealer } })
  })
  const res = await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })
  noPending(agent)
  t.strictSame(res.json().contractor.last_dealer, lastDealer)
  t.strictSame(res.json().discount, fx.discountWithBonuses.data)
})
