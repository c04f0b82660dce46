// End to end over real HTTP: the service listening on a port, the sandbox upstream on another (the fault
// upstream where an operation must fail), and nothing faked in between. Covers what a mobile app and an operator see.
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { signToken } from '../../sandbox/sign.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { ivanov, petrova, unknownClient } from '../../sandbox/seed.ts'
import type { Profile } from '../../schemas/profile.ts'
import type { ConsoleAnswer } from '../../schemas/console.ts'
import { CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY, testConfig } from '../helpers/build-app.ts'
import { faultUpstream } from '../helpers/fault-upstream.ts'

const keys = { passport: PASSPORT_KEY, dealer: DEALER_KEY }

/** The service on port 0 in front of `upstreamUrl`; both closed when the test ends. */
async function service (t: Test, upstreamUrl: string) {
  const config = testConfig({ UPSTREAM_URL: upstreamUrl })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

async function sandbox (t: Test) {
  const upstream = await startSandboxUpstream({ keys })
  t.teardown(() => upstream.close())
  return upstream
}

const bearer = (who: { uid_client: string, login: string, vendor: string }) =>
  ({ authorization: `Bearer ${signToken({ sub: who.uid_client, login: who.login, vendor: who.vendor }, JWT_SECRET)}` })

const consoleCall = (base: string, operation: string, params: object) => fetch(`${base}/request-console`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-console-key': CONSOLE_KEY },
  body: JSON.stringify({ operation, params })
})

t.test('a full profile, composed from all three upstream operations', async t => {
  const upstream = await sandbox(t)
  const base = await service(t, upstream.url)
  const res = await fetch(`${base}/api/users/profile`,
    { headers: { ...bearer(ivanov.identity), 'x-request-id': 'e2e-1' } })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-request-id'), 'e2e-1')
  t.equal(res.headers.get('x-degraded'), null, 'nothing degraded')
  const profile = await res.json() as Profile
  t.equal(profile.uid_client, ivanov.identity.uid_client)
  t.same(profile.client, ivanov.passport.client)
  t.same(profile.catalog_cars_view.map(c => c.data),
    ivanov.passport.catalog_cars_view.map(c => JSON.parse(c.data)), 'breadcrumb data decoded, order kept')
  t.equal(profile.discount, null, 'no bonuses is not a failure')
  t.same(profile.contractor, ivanov.contractor.data)
  t.same(profile.degraded, [])
  t.same(upstream.counts().byOperation, { 'passport.get_client': 1, 'dealer.discount': 1, 'dealer.client': 1 })

  const again = await fetch(`${base}/api/users/profile`, { headers: bearer(ivanov.identity) })
  t.equal(again.status, 200)
  t.equal(upstream.counts().redirects, 3, 'the slash locations were learned: no redirect the second time')
})

t.test('a client with bonuses gets the dealer discount', async t => {
  const upstream = await sandbox(t)
  const base = await service(t, upstream.url)
  const profile =
    await (await fetch(`${base}/api/users/profile`, { headers: bearer(petrova.identity) })).json() as Profile
  t.same(profile.discount, petrova.discount.data)
  t.equal(profile.client.login, petrova.identity.login)
})

t.test('an unknown client is 404 CLIENT_NOT_FOUND and the dealers are not called', async t => {
  const upstream = await sandbox(t)
  const base = await service(t, upstream.url)
  const res = await fetch(`${base}/api/users/profile`, { headers: bearer(unknownClient) })
  t.equal(res.status, 404)
  t.match(await res.json(), { statusCode: 404, code: 'CLIENT_NOT_FOUND', error: 'Not Found' })
  t.same(upstream.counts().byOperation, { 'passport.get_client': 1, 'dealer.discount': 0, 'dealer.client': 0 })
})

t.test('a dealer failure degrades its section and the profile is still served', async t => {
  // A real upstream whose discount operation is down: an HTML 500 page.
  const upstream = await faultUpstream(t)
  upstream.set('dealer.discount', { kind: 'status', status: 500 })
  const base = await service(t, upstream.url)

  const res = await fetch(`${base}/api/users/profile`, { headers: bearer(petrova.identity) })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-degraded'), 'discount')
  const profile = await res.json() as Profile
  t.same(profile.degraded, ['discount'])
  t.equal(profile.discount, null)
  t.same(profile.contractor, petrova.contractor.data, 'the other section is whole')
})

t.test('the console runs each operation and shows the whole exchange', async t => {
  const upstream = await sandbox(t)
  const base = await service(t, upstream.url)
  const cases = [
    { operation: 'passport.get_client', params: ivanov.identity, status: 200, body: ivanov.passport },
    { operation: 'passport.get_client', params: unknownClient, status: 400, body: { msg_code: 'CLIENT_NOT_FOUND' } },
    {
      operation: 'dealer.discount',
      params: { uid_client: petrova.identity.uid_client },
      status: 200,
      body: petrova.discount
    },
    {
      operation: 'dealer.client',
      params: { uid_client: ivanov.identity.uid_client },
      status: 200,
      body: ivanov.contractor
    }
  ]
  for (const c of cases) {
    const res = await consoleCall(base, c.operation, c.params)
    t.equal(res.status, 200, `${c.operation} answers 200`)
    const text = await res.text()
    const answer = JSON.parse(text) as ConsoleAnswer
    t.equal(answer.operation, c.operation)
    t.equal(answer.status, c.status, 'the upstream status is data')
    t.match(answer.body, c.body)
    t.same(answer.contract, { valid: true, errors: [] })
    t.type(answer.duration_ms, 'number')
    for (const key of [PASSPORT_KEY, DEALER_KEY, CONSOLE_KEY]) t.notOk(text.includes(key), 'no key in the answer')
  }
  // The first call of each operation met the 307; later ones went straight to the learned location.
  const first =
    await (await consoleCall(base, 'dealer.discount',
      { uid_client: ivanov.identity.uid_client })).json() as ConsoleAnswer
  t.same(first.redirects, [], 'learned location: no hop')
})

t.test('the console shows the 307 hop on the first call of an operation', async t => {
  const upstream = await sandbox(t)
  const base = await service(t, upstream.url)
  const answer =
    await (await consoleCall(base, 'dealer.client', { uid_client: ivanov.identity.uid_client })).json() as ConsoleAnswer
  t.same(answer.redirects, [{ status: 307, location: '/bc_api_web_service/client/' }])
})
