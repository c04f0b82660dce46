// Last-known profiles in a real redis-server: a copy one instance writes another serves, a rotated key
// list still opens it, nothing personal is readable in any key or value, a tampered value is a miss
// counted as a decrypt failure, a Redis that hangs never keeps a fresh profile from being answered, and a
// client the passport no longer knows is deleted from Redis even when Redis was away when it was learned.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import type { Profile } from '../../schemas/profile.ts'
import * as fx from '../../schemas/fixtures.ts'
import { petrova } from '../../sandbox/seed.ts'
import { faultService, faultUpstream, profileOf, readResponse } from '../helpers/fault-upstream.ts'
import { eventually, requireBinaries, startRedis, type RedisServer } from '../helpers/real-servers.ts'

const binaries = requireBinaries(t, ['redis-server'])
const PREFIX = 'dealer-bff:lk:'
const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const OLD_KEY = randomBytes(32).toString('base64')
const NEW_KEY = randomBytes(32).toString('base64')

function redisClient (t: Test, redis: RedisServer): Redis {
  const client = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 })
  t.teardown(() => { client.disconnect() })
  return client
}

/** Every key in Redis and its value's bytes: GET for strings, DUMP for anything else. */
async function everything (client: Redis): Promise<Array<{ key: string, value: Buffer }>> {
  const all: Array<{ key: string, value: Buffer }> = []
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', 100)
    cursor = next
    for (const key of keys) {
      const value = await client.type(key) === 'string' ? await client.getBuffer(key) : await client.dumpBuffer(key)
      all.push({ key, value: value ?? Buffer.alloc(0) })
    }
  } while (cursor !== '0')
  return all
}

const lastKnownKeys = async (client: Redis) => (await everything(client)).filter(entry => entry.key.startsWith(PREFIX))

async function metric (base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).text()
  // Every series of the metric, labels or none, summed.
  const lines = text.split('\n').filter(l => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
  return lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
}

if (binaries !== undefined) {
  const upstream = await faultUpstream(t)
  const env = (redis: RedisServer, key = OLD_KEY) => ({
    REDIS_URL: redis.url,
    PROFILE_CACHE_KEY: key,
    METRICS_API_KEY: METRICS_KEY,
    UPSTREAM_TIMEOUT_MS: '500',
    UPSTREAM_BREAKER_MIN_CALLS: '10000'
  })

  t.test('a copy written by one instance is served by another; nothing personal is readable in Redis', async t => {
    const redis = await startRedis(t, binaries['redis-server'])
    const client = redisClient(t, redis)
    const writer = await faultService(t, upstream.url, env(redis))
    const reader = await faultService(t, upstream.url, env(redis))
    upstream.reset()

    const fresh = await readResponse(t, await profileOf(writer, petrova.identity))
    t.equal(fresh.status, 200)
    await eventually(async () => (await lastKnownKeys(client)).length === 1, 'the copy reached Redis')

    const stored = await everything(client)
    const personal = [petrova.identity.uid_client, petrova.identity.uid_client.toUpperCase(), petrova.identity.login,
      'Петрова', 'Анна', 'petrova@example.ru', '5550142', petrova.passport.client.client_data_dms.fullname]
    for (const { key, value } of stored) {
      for (const text of [key, value.toString('utf8'), value.toString('latin1')]) {
        for (const secret of personal) {
          t.notOk(text.includes(secret), `no ${secret.length}-character personal value in ${key.slice(0, 20)}…`)
        }
      }
    }
    const [copy] = await lastKnownKeys(client)
    t.match(copy!.key, /^dealer-bff:lk:[0-9a-f]{64}$/, 'the name is the prefix and an HMAC')
    t.ok(await client.ttl(copy!.key) > 86_000, 'with a TTL of PROFILE_STALE_IF_ERROR_S')

    upstream.set('passport.get_client', { kind: 'status', status: 503 })
    const stale = await readResponse(t, await profileOf(reader, petrova.identity))
    t.equal(stale.status, 200, 'the other instance answers from the shared copy')
    t.strictSame(stale.body, { ...(fresh.body as Profile), stale: ['passport', 'discount', 'contractor'] })
    t.match(stale.headers.get('age'), /^\d+$/)
    t.equal(await metric(reader, 'bff_profile_stale_sections_total'), 3, 'three sections served, counted')
    t.equal(await metric(writer, 'bff_profile_copies_written_total'), 1)

    // A rotated list (a new key first, the old one still there) opens the copy the old key wrote.
    const rotated = await faultService(t, upstream.url, env(redis, `${NEW_KEY},${OLD_KEY}`))
    t.equal((await profileOf(rotated, petrova.identity)).status, 200, 'served after rotation')
    // Without the old key, the copy is nobody's.
    const stranger = await faultService(t, upstream.url, env(redis, NEW_KEY))
    t.equal((await profileOf(stranger, petrova.identity)).status, 502, 'another key: no copy')
  })

  t.test('a tampered value is a miss, a warning and a decrypt failure, never a 500', async t => {
    const redis = await startRedis(t, binaries['redis-server'])
    const client = redisClient(t, redis)
    const base = await faultService(t, upstream.url, env(redis))
    upstream.reset()
    t.equal((await profileOf(base, petrova.identity)).status, 200)
    await eventually(async () => (await lastKnownKeys(client)).length === 1, 'the copy reached Redis')
    const [copy] = await lastKnownKeys(client)
    const tampered = Buffer.from(copy!.value)
    tampered[tampered.length - 1]! ^= 1
    await client.set(copy!.key, tampered)

    upstream.set('passport.get_client', { kind: 'status', status: 503 })
    const res = await readResponse(t, await profileOf(base, petrova.identity))
    t.equal(res.status, 502, 'today\'s error: the copy could not be opened')
    t.equal(await metric(base, 'bff_profile_copy_decrypt_failures_total'), 1)
    t.equal(await metric(base, 'bff_profile_stale_sections_total'), 0, 'nothing served from a copy')
  })

  t.test('a Redis that accepts connections but never answers: fresh profiles are still answered', async t => {
    const redis = await startRedis(t, binaries['redis-server'])
    const base = await faultService(t, upstream.url, { ...env(redis), REDIS_TIMEOUT_MS: '100' })
    upstream.reset()
    t.equal((await profileOf(base, petrova.identity)).status, 200, 'Redis up')
    redis.pause()
    t.teardown(() => { redis.resume() })
    for (let i = 0; i < 3; i++) {
      const res = await readResponse(t, await profileOf(base, petrova.identity))
      t.equal(res.status, 200, 'a fresh profile, the copy write left behind')
      t.strictSame((res.body as Profile).stale, [])
    }
    // A passport failure asks Redis for the copy: the read is bounded, and its failure is today's error.
    upstream.set('passport.get_client', { kind: 'status', status: 503 })
    const failed = await readResponse(t, await profileOf(base, petrova.identity))
    t.equal(failed.status, 502)
  })

  t.test('a CLIENT_NOT_FOUND while Redis is away: never served again, and deleted once Redis is back', async t => {
    const redis = await startRedis(t, binaries['redis-server'])
    const client = redisClient(t, redis)
    const seen = await faultService(t, upstream.url, env(redis))
    const other = await faultService(t, upstream.url, env(redis))
    upstream.reset()
    t.equal((await profileOf(seen, petrova.identity)).status, 200)
    await eventually(async () => (await lastKnownKeys(client)).length === 1, 'the copy reached Redis')
    // Redis goes away with the copy on disk, and comes back with it (a restart from its snapshot).
    const saved = await client.dbsize()
    await client.save()
    client.disconnect()
    await redis.kill()

    upstream.set('passport.get_client', { kind: 'answer', status: 400, body: fx.passportNotFound })
    const gone = await readResponse(t, await profileOf(seen, petrova.identity))
    t.equal(gone.status, 404, 'the passport no longer knows the client')
    t.match(gone.body, { code: 'CLIENT_NOT_FOUND' })

    await redis.start()
    const back = redisClient(t, redis)
    // Its log, not a read: an instance that reconnects first may already have retried the delete.
    await eventually(async () => redis.loadedKeys() === saved, `Redis is back with the copy (${saved} keys saved)`)
    const ready = async (base: string) =>
      (await (await fetch(`${base}/health/ready`)).json() as { redis?: string }).redis === 'up'
    await eventually(async () => await ready(seen) && await ready(other), 'both instances reconnected')
    upstream.set('passport.get_client', { kind: 'status', status: 503 })
    const outage = await readResponse(t, await profileOf(seen, petrova.identity))
    t.equal(outage.status, 502, 'a passport outage answers as without a copy, never the deleted client\'s profile')
    await eventually(async () => (await lastKnownKeys(back)).length === 0, 'the delete reached Redis once it was back')
    t.equal((await profileOf(seen, petrova.identity)).status, 502, 'still no copy')
    t.equal((await profileOf(other, petrova.identity)).status, 502, 'nor on another instance, once the delete landed')
  })
}
