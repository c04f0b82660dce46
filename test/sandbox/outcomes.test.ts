// `npm run dev`'s test identities (sandbox/outcomes.ts): each request of one reaches the state it names, as the app
// sees it (status, code, degraded, stale and their headers, Age); the 429 from a lower limit; none of them opens a
// circuit breaker for the healthy clients; Swagger UI names them in dev and the production document never does.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { startDev, type DevRun } from '../../sandbox/dev.ts'
import { OUTCOME_CLIENTS } from '../../sandbox/outcomes.ts'
import { generateOpenapi, OPENAPI_FILE } from '../../scripts/openapi.ts'
import { fetchUnlessShed } from '../helpers/shed-retry.ts'

const PROFILE = '/api/users/profile'

interface Seen { status: number, headers: Headers, body: Record<string, any> }

/** GET the profile with `token`, retried while a fresh run sheds it, as an app does. */
async function profileOf (run: DevRun, token: string, headers: Record<string, string> = {}): Promise<Seen> {
  const init = { headers: { authorization: `Bearer ${token}`, ...headers } }
  const res = await fetchUnlessShed(`${run.url}${PROFILE}`, init)
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, any> }
}

const tokenOf = (run: DevRun, label: string) =>
  [...run.clients, ...run.outcomes].find(c => c.label === label)!.token

t.test('each test identity reaches its state, as the app sees it', async t => {
  const run = await startDev({ port: 0, logLevel: 'silent', log: { write: () => {} } })
  t.teardown(() => run.close())
  t.strictSame(run.outcomes.map(c => c.state),
    ['discount-missing', 'contractor-missing', 'stale', 'passport-502', 'passport-503', 'passport-504'],
    'one identity for each state')

  for (const client of OUTCOME_CLIENTS) {
    const printed = run.outcomes.find(c => c.label === client.name)!
    t.ok(run.banner.includes(printed.token) && run.banner.includes(client.about), `the banner shows ${client.name}`)
    for (let i = 0; i < client.warmUpRequests; i++) {
      const first = await profileOf(run, printed.token)
      t.equal(first.status, 200, `${client.name}: the first request loads the profile`)
      t.strictSame([first.body.degraded, first.body.stale], [[], []], `${client.name}: fresh and whole at first`)
    }
    const { status, headers, body } = await profileOf(run, printed.token)
    const { sees } = client
    t.equal(status, sees.status, `${client.name}: status`, { body })
    if (sees.code !== null) {
      t.equal(body.code, sees.code, `${client.name}: code`)
      t.equal(headers.get('retry-after'), null, `${client.name}: no Retry-After (not an open breaker, not shed)`)
      continue
    }
    t.equal(body.uid_client, client.uid_client, `${client.name}: the identity's own profile`)
    t.strictSame(body.degraded, sees.degraded, `${client.name}: degraded`)
    t.strictSame(body.stale, sees.stale, `${client.name}: stale`)
    t.equal(headers.get('x-degraded'), sees.degraded.length === 0 ? null : sees.degraded.join(','),
      `${client.name}: x-degraded`)
    t.equal(headers.get('x-stale'), sees.stale.length === 0 ? null : sees.stale.join(','), `${client.name}: x-stale`)
    t.equal(headers.get('age') !== null, sees.age, `${client.name}: Age ${sees.age ? 'present' : 'absent'}`)
    if (sees.age) t.match(headers.get('age'), /^\d+$/, 'Age in whole seconds')
    for (const section of sees.degraded) t.equal(body[section], null, `${client.name}: ${section} is null`)
    if (sees.stale.includes('discount')) t.not(body.discount, null, 'the copy\'s discount stands in')
  }
})

t.test('no identity opens a circuit breaker for the healthy clients', async t => {
  const run = await startDev({ port: 0, logLevel: 'silent', log: { write: () => {} } })
  t.teardown(() => run.close())
  // Within one breaker window: were every failure counted, 14 of the 20 passport calls and 14 of the 20 discount
  // calls failing would open both breakers (more than 50 % of at least 20 calls).
  for (let i = 0; i < 6; i++) t.equal((await profileOf(run, tokenOf(run, 'IVANOV'))).status, 200, 'IVANOV: 200')
  for (let i = 0; i < 14; i++) {
    const seen = await profileOf(run, tokenOf(run, 'PASSPORT_503'))
    t.strictSame([seen.status, seen.body.code], [503, 'UPSTREAM_UNAVAILABLE'], 'PASSPORT_503: its own 503')
  }
  for (let i = 0; i < 14; i++) {
    const seen = await profileOf(run, tokenOf(run, 'DISCOUNT_MISSING'))
    t.strictSame([seen.status, seen.body.degraded], [200, ['discount']], 'DISCOUNT_MISSING: degraded, the passport ' +
      'answering')
  }
  const petrova = await profileOf(run, tokenOf(run, 'PETROVA'))
  t.equal(petrova.status, 200, 'the passport still answers a healthy client')
  t.strictSame(petrova.body.degraded, [], 'and so does the dealer\'s discount')
  t.not(petrova.body.discount, null)
})

t.test('RATE_LIMIT_PROFILE_PER_MINUTE from the environment: the 429 and its Retry-After in a few requests', async t => {
  const run = await startDev({
    env: { RATE_LIMIT_PROFILE_PER_MINUTE: '2' }, port: 0, logLevel: 'silent', log: { write: () => {} }
  })
  t.teardown(() => run.close())
  t.match(run.banner, 'more than 2 profile requests of one token in a minute')
  const token = tokenOf(run, 'PETROVA')
  let seen = await profileOf(run, token)
  let answered = 0
  while (seen.status === 200 && answered < 10) {
    answered++
    seen = await profileOf(run, token)
  }
  t.equal(answered, 2, 'two profiles a minute')
  t.equal(seen.status, 429)
  t.equal(seen.body.code, 'RATE_LIMITED')
  t.match(seen.headers.get('retry-after'), /^[1-9]\d*$/, 'Retry-After in seconds')
  t.equal((await profileOf(run, tokenOf(run, 'IVANOV'))).status, 200, 'per token: another client is still served')
})

t.test('Swagger UI names the identities in dev only; the production document never does', async t => {
  const run = await startDev({
    env: { MIN_APP_VERSION: '2.3.0' }, port: 0, logLevel: 'silent', log: { write: () => {} }
  })
  t.teardown(() => run.close())
  const served = await (await fetch(`${run.url}/docs/json`)).json() as any
  const operation = served.paths[PROFILE].get
  for (const client of OUTCOME_CLIENTS) {
    t.match(operation.description, `\`${client.uid_client}\``, `the dev document names ${client.name}`)
    t.match(operation.responses[String(client.sees.status)].description, client.name,
      `its ${client.sees.status} answer names ${client.name}`)
  }
  t.match(operation.description, 'x-app-version below 2.3.0', 'and says how to reach the 426 in this run')
  t.match(operation.description, 'no single client can open a breaker')
  t.equal(served.paths['/request-console'].post.responses['502'].description.includes('PASSPORT_502'), false,
    'the console\'s answers are its own')

  const production = [await generateOpenapi(), readFileSync(OPENAPI_FILE, 'utf8')]
  for (const document of production) {
    for (const client of OUTCOME_CLIENTS) {
      t.notOk(document.includes(client.uid_client) || document.includes(client.login) ||
        document.includes(`\`${client.name}\``),
        `the production document does not name ${client.name}`)
    }
  }
})
