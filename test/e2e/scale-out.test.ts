// Several instances on one real Redis (REDIS_URL), each listening on its own port in front of the
// sandbox upstream: one limit per client whichever instance answers, and Redis only best-effort (down,
// killed mid-run or late at start-up, requests are served on each instance's own count; once back, the limits
// are shared again).
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { once } from 'node:events'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp, type AppOverrides } from '../../src/app.ts'
import { signToken } from '../../sandbox/sign.ts'
import { clientDigest } from '../../src/plugins/external/rate-limit/route-limits.ts'
import { connectRedis } from '../../src/shared-redis.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { ivanov, petrova } from '../../sandbox/seed.ts'
import { configProblems, CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY, testConfig } from '../helpers/build-app.ts'
import { hs256 } from '../helpers/tokens.ts'
import {
  eventually, get, requireBinaries, startRedis, type HttpResult, type RedisServer
} from '../helpers/real-servers.ts'

const LIMIT = 5
const AUTH_LIMIT = 3
const CONSOLE_LIMIT = 2
const METRICS_KEY = 'metrics-key-for-scale-out-tests'
const PROFILE = '/api/users/profile'

const bearer = (who: { uid_client: string, login: string, vendor: string }) =>
  ({ authorization: `Bearer ${signToken({ sub: who.uid_client, login: who.login, vendor: who.vendor }, JWT_SECRET)}` })
const IVANOV = bearer(ivanov.identity)
const PETROVA = bearer(petrova.identity)

async function sandbox (t: Test): Promise<string> {
  const upstream = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => upstream.close())
  return upstream.url
}

/** An instance on port 0 sharing `redis`; its origin. */
async function instance (
  t: Test, upstreamUrl: string, redis: RedisServer, overrides: AppOverrides = {}
): Promise<string> {
  const app = await buildApp(testConfig({
    UPSTREAM_URL: upstreamUrl,
    REDIS_URL: redis.url,
    RATE_LIMIT_PROFILE_PER_MINUTE: String(LIMIT),
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(AUTH_LIMIT),
    RATE_LIMIT_CONSOLE_PER_MINUTE: String(CONSOLE_LIMIT),
    METRICS_API_KEY: METRICS_KEY
  }), overrides)
  t.teardown(() => app.close())
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

const redisState = async (base: string) =>
  (JSON.parse((await get(`${base}/health/ready`)).body) as { redis?: string }).redis

/** `count` profiles of one client, alternating between the instances. */
async function alternate (bases: string[], headers: Record<string, string>, count: number): Promise<HttpResult[]> {
  const answers: HttpResult[] = []
  for (let i = 0; i < count; i++) answers.push(await get(`${bases[i % bases.length]!}${PROFILE}`, headers))
  return answers
}

/** Exactly LIMIT profiles served across the instances, remaining counting down, then 429 on each. */
async function assertSharedLimit (t: Test, bases: string[], headers: Record<string, string>): Promise<void> {
  const answers = await alternate(bases, headers, LIMIT + bases.length)
  t.same(answers.map(a => a.status), [...Array(LIMIT).fill(200), ...Array(bases.length).fill(429)],
    `${LIMIT} served across ${bases.length} instances, then refused by each`)
  t.same(answers.slice(0, LIMIT).map(a => a.headers['x-ratelimit-remaining']),
    Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)),
    'x-ratelimit-remaining counts down across instances')
}

const binaries = requireBinaries(t, ['redis-server'])

if (binaries !== undefined) {
  const redisBinary = binaries['redis-server']

  t.test('config: REDIS_URL must be redis:// or rediss://, the prefix and timeout are bounded', async t => {
    t.same(configProblems({ REDIS_URL: 'rediss://user:secret@redis.internal:6380/0' }), [])
    t.same(configProblems({ REDIS_URL: 'http://redis.internal:6379' }), ['REDIS_URL has an invalid value'])
    t.same(configProblems({ REDIS_KEY_PREFIX: 'has space' }), ['REDIS_KEY_PREFIX has an invalid value'])
    t.match(configProblems({ REDIS_TIMEOUT_MS: '0' }), [/^REDIS_TIMEOUT_MS /])
  })

  t.test('two instances on one Redis: one limit per client and per address, another client ' +
    'unaffected, keys hashed with a TTL', async t => {
    const redis = await startRedis(t, redisBinary)
    const upstream = await sandbox(t)
    const bases = [await instance(t, upstream, redis), await instance(t, upstream, redis)]

    await assertSharedLimit(t, bases, IVANOV)
    const other = await get(`${bases[1]!}${PROFILE}`, PETROVA)
    t.equal(other.status, 200, 'another client is served')
    t.equal(other.headers['x-ratelimit-remaining'], String(LIMIT - 1), 'with its own full budget')

    // The console, per address: one budget across instances too.
    const consoleStatuses: number[] = []
    for (let i = 0; i <= CONSOLE_LIMIT; i++) {
      const res = await fetch(`${bases[i % 2]!}/request-console`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-console-key': CONSOLE_KEY },
        body: JSON.stringify({ operation: 'dealer.discount', params: { uid_client: ivanov.identity.uid_client } })
      })
      consoleStatuses.push(res.status)
      await res.arrayBuffer()
    }
    t.same(consoleStatuses, [...Array(CONSOLE_LIMIT).fill(200), 429], 'console calls add up across instances')

    // Refused credentials: counted per address across instances, the next one refused with 429.
    const bad = { authorization: `Bearer ${hs256(undefined, 'not-the-secret-of-the-service-at-all-0000')}` }
    const failures = await alternate(bases, bad, AUTH_LIMIT + 1)
    t.same(failures.map(a => a.status), [...Array(AUTH_LIMIT).fill(401), 429],
      'refused credentials add up across instances')

    const client = new Redis(redis.url)
    t.teardown(() => client.quit())
    const keys = (await client.keys('*')).sort()
    t.same(keys, [
      `dealer-bff:rl:${PROFILE}:client:${clientDigest(ivanov.identity.uid_client)}`,
      `dealer-bff:rl:${PROFILE}:client:${clientDigest(petrova.identity.uid_client)}`,
      'dealer-bff:rl:auth-failures:127.0.0.1',
      'dealer-bff:rl:/request-console:127.0.0.1'
    ].sort(), 'one key per limit and client, under the prefix, the client id hashed')
    for (const key of keys) {
      const ttl = await client.pttl(key)
      t.ok(ttl > 0 && ttl <= 60_000, `${key} expires with its window`)
      t.notOk(key.includes(ivanov.identity.uid_client) || key.includes(petrova.identity.uid_client),
        'no client id in a key')
    }
    t.equal(await redisState(bases[0]!), 'up', '/health/ready reports Redis up')
  })

  t.test('Redis killed mid-run: each instance limits on its own; restarted on its port: the shared limit holds ' +
    'again', async t => {
    const redis = await startRedis(t, redisBinary)
    const upstream = await sandbox(t)
    const bases = [await instance(t, upstream, redis), await instance(t, upstream, redis)]
    t.same((await alternate(bases, IVANOV, 2)).map(a => a.status), [200, 200])

    await redis.kill()
    const during = await alternate(bases, IVANOV, 2 * LIMIT + 2)
    t.same(during.map(a => a.status), [...Array(2 * LIMIT).fill(200), 429, 429],
      'not unlimited: each instance serves the limit on its own count, then refuses')
    t.same(during.slice(0, 2).map(a => a.headers['x-ratelimit-remaining']), [String(LIMIT - 1), String(LIMIT - 1)],
      'each instance counts from its own start, not from the count Redis held')
    const ready = await get(`${bases[0]!}/health/ready`)
    t.equal(ready.status, 200, 'still ready: Redis is best-effort')
    t.same(JSON.parse(ready.body), { status: 'ready', redis: 'down' })
    const metrics = (await get(`${bases[0]!}/metrics`, { authorization: `Bearer ${METRICS_KEY}` })).body
    t.match(metrics, /^bff_redis_up 0$/m, 'the outage is in the metrics')
    t.match(metrics, /^bff_rate_limit_store_failures_total [1-9]\d*$/m, 'and so are the checks Redis failed')
    t.match(metrics, /^bff_rate_limit_local_total 1$/m, 'and the request this instance refused on its own count')

    await redis.start()
    await eventually(async () => (await redisState(bases[0]!)) === 'up' && (await redisState(bases[1]!)) === 'up',
      'both instances reconnect')
    await assertSharedLimit(t, bases, PETROVA)
  })

  t.test('a client ioredis ended on its own (as a Sentinel announcement mid-connection does) connects again; ' +
    'closed, it stays closed', async t => {
    const redis = await startRedis(t, redisBinary)
    const shared = connectRedis(Redis, {
      REDIS_URL: redis.url, REDIS_SENTINEL_NAME: 'mymaster', REDIS_TIMEOUT_MS: 100, REDIS_CONNECT_TIMEOUT_MS: 1000
    }, { info () {}, warn () {} })
    t.teardown(() => shared.close())
    await once(shared.client, 'ready')
    shared.client.disconnect()
    await once(shared.client, 'ready')
    t.equal(await shared.client.ping(), 'PONG', 'answering again')
    await shared.close()
    await sleep(300)
    t.equal(shared.client.status, 'end', 'closed stays closed')
  })

  t.test('Redis down at start-up: the instance starts and serves, and enforces once Redis appears', async t => {
    const redis = await startRedis(t, redisBinary, { started: false })
    const upstream = await sandbox(t)
    const bases = [await instance(t, upstream, redis), await instance(t, upstream, redis)]
    const answers = await alternate(bases, IVANOV, LIMIT + 2)
    t.same(answers.map(a => a.status), Array(LIMIT + 2).fill(200), 'served while Redis is down')
    t.not(await redisState(bases[0]!), 'up')

    await redis.start()
    await eventually(async () => (await redisState(bases[0]!)) === 'up' && (await redisState(bases[1]!)) === 'up',
      'both instances connect')
    await assertSharedLimit(t, bases, IVANOV)
  })

  t.test('Redis that hangs: requests served after one command timeout each, state changes logged once', async t => {
    const redis = await startRedis(t, redisBinary)
    const upstream = await sandbox(t)
    const logs: Array<{ msg: string }> = []
    const stream = new Writable({
      write (chunk: Buffer, _encoding, done) { logs.push(JSON.parse(chunk.toString())); done() }
    })
    const base = await instance(t, upstream, redis, { logger: { level: 'info', stream } })
    t.equal((await get(`${base}${PROFILE}`, IVANOV)).status, 200)

    redis.pause()
    t.teardown(() => redis.resume())
    const during = await alternate([base], IVANOV, LIMIT + 1)
    t.same(during.map(a => a.status), [...Array(LIMIT).fill(200), 429],
      'served on the instance\'s own count while Redis does not answer, then limited')
    t.equal(await redisState(base), 'down')

    redis.resume()
    await eventually(async () => {
      await get(`${base}${PROFILE}`, PETROVA)
      return (await redisState(base)) === 'up'
    }, 'a probe reaches Redis again')
    // Counted in Redis again: PETROVA's next request leaves her count there, where every instance reads it.
    const key = `dealer-bff:rl:${PROFILE}:client:${clientDigest(petrova.identity.uid_client)}`
    const client = new Redis(redis.url)
    t.teardown(() => client.quit())
    const before = Number(await client.get(key))
    const next = await get(`${base}${PROFILE}`, PETROVA)
    t.equal(Number(await client.get(key)), before + 1, 'the limit counts in Redis again')
    t.equal(next.headers['x-ratelimit-remaining'], String(LIMIT - before - 1), 'and answers from the shared count')
    const changes = logs.filter(line => /^Redis /.test(line.msg)).map(line => line.msg)
    t.same(changes, [
      'Redis connected: rate limits are shared',
      'Redis unreachable: each instance limits on its own until it answers again',
      'Redis answers again: rate limits are shared'
    ], 'one line per state change, none per request')
  })
}
