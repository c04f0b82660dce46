// GET and HEAD of a route draw from one limit: HEAD runs the whole profile (three upstream calls), so a counter of
// its own would double every client's upstream work. Held in memory (no Redis), in Redis, and in the in-memory
// fallback while Redis is away.
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildTestApp, CONSOLE_KEY, type TestApp } from '../helpers/build-app.ts'
import { requireBinaries, startRedis } from '../helpers/real-servers.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import { respondToOperation } from '../helpers/upstream-mock.ts'

const PROFILE = '/api/users/profile'
const TOKEN = bearer(hs256())

/** Two requests a minute, the passport answering "not found" to those that reach it. */
async function limitedApp (t: Test, env: Record<string, string> = {}): Promise<TestApp> {
  const built = await buildTestApp(t, { RATE_LIMIT_PROFILE_PER_MINUTE: '2', ...env })
  respondToOperation(built.upstream, 'passport.get_client', { status: 400, body: fx.passportNotFound, times: 10 })
  return built
}

async function drawsFromOneLimit (t: Test, app: TestApp['app']): Promise<void> {
  const get = await app.inject({ method: 'GET', url: PROFILE, headers: TOKEN })
  t.equal(get.statusCode, 404, 'GET reaches the upstream')
  t.equal(get.headers['x-ratelimit-remaining'], '1')
  const head = await app.inject({ method: 'HEAD', url: PROFILE, headers: TOKEN })
  t.equal(head.statusCode, 404, 'HEAD reaches the upstream')
  t.equal(head.headers['x-ratelimit-remaining'], '0', 'HEAD counted on the GET\'s counter')
  t.equal((await app.inject({ method: 'HEAD', url: PROFILE, headers: TOKEN })).statusCode, 429, 'HEAD: limit spent')
  t.equal((await app.inject({ method: 'GET', url: PROFILE, headers: TOKEN })).statusCode, 429, 'GET: limit spent')
}

t.test('in memory (one instance without Redis): GET then HEAD spend one limit', async t => {
  const { app } = await limitedApp(t)
  await drawsFromOneLimit(t, app)
})

t.test('the console\'s limit per address and the refused-credential limiter stay apart from the profile\'s',
  async t => {
    const { app } = await limitedApp(t, { RATE_LIMIT_CONSOLE_PER_MINUTE: '1' })
    await drawsFromOneLimit(t, app)
    const console = await app.inject({
      method: 'POST', url: '/request-console', headers: { 'x-console-key': CONSOLE_KEY }, payload: {}
    })
    t.equal(console.statusCode, 400, 'the console still has its own minute')
    t.equal((await app.inject({ url: PROFILE, headers: bearer('not-a-token') })).statusCode, 401,
      'refused credentials count on their own')
  })

const binaries = requireBinaries(t, ['redis-server'])
if (binaries !== undefined) {
  t.test('in Redis: GET then HEAD spend one limit', async t => {
    const redis = await startRedis(t, binaries['redis-server'])
    const { app } = await limitedApp(t, { REDIS_URL: redis.url })
    await drawsFromOneLimit(t, app)
  })

  t.test('in the fallback while Redis is away: GET then HEAD spend one limit', async t => {
    const redis = await startRedis(t, binaries['redis-server'], { started: false })
    const { app } = await limitedApp(t, { REDIS_URL: redis.url })
    await drawsFromOneLimit(t, app)
  })
}
