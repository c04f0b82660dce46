// The Redis store's deletes (the passport no longer knows a client): while Redis refuses them this instance
// serves no copy under the name, they are sent again until Redis confirms them, and at their bounds (the
// copies' TTL, MAX_PENDING_DELETES names) the store still serves nothing a pending delete covers.
import { EventEmitter } from 'node:events'
import t from 'tap'
import type { FastifyBaseLogger } from 'fastify'
import type { SharedRedis } from '../../src/shared-redis.ts'
import { cacheKey, seal } from '../../src/profile/last-known/keys.ts'
import { NO_OBSERVER } from '../../src/profile/last-known/observer.ts'
import { MAX_PENDING_DELETES, redisStore } from '../../src/profile/last-known/redis-store.ts'

const key = cacheKey(Buffer.alloc(32, 7))
const copy = Buffer.from('{"passport":1}\n{}')

/** A Redis of one map: `up` false makes writes and deletes fail as with Redis away; 'ready' is its reconnection. */
function fakeRedis () {
  const values = new Map<string, Buffer>()
  const dels: string[][] = []
  const client = Object.assign(new EventEmitter(), {
    up: true,
    async mgetBuffer (...names: string[]) {
      return names.map(name => values.get(name) ?? null)
    },
    async set (name: string, value: Buffer) {
      if (!client.up) throw new Error('Connection is closed.')
      values.set(name, value)
      return 'OK'
    },
    async del (...names: string[]) {
      dels.push(names)
      if (!client.up) throw new Error('Connection is closed.')
      for (const name of names) values.delete(name)
      return names.length
    }
  })
  const redis = { client, state: 'up', failures: 0, usable: () => true, failed () {}, succeeded () {} }
  return { client, values, dels, redis: redis as unknown as SharedRedis }
}

const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']
const log = Object.fromEntries([...levels.map(level => [level, () => {}]), ['child', () => log]]) as FastifyBaseLogger

const settle = () => new Promise(resolve => setImmediate(resolve))

function store (redis: SharedRedis, now = Date.now) {
  const built = redisStore({ redis, keys: [key], ttlSeconds: 60, observer: NO_OBSERVER, log, now })
  t.teardown(() => { built.clear() })
  return built
}

t.test('a delete Redis refused: no copy served under the name, sent again on reconnection, then gone', async t => {
  const fake = fakeRedis()
  const copies = store(fake.redis)
  fake.values.set('a', seal(key, 'a', copy))
  fake.values.set('b', seal(key, 'b', copy))
  t.strictSame(await copies.read(['a'], 1000), copy, 'served before the delete')

  fake.client.up = false
  copies.delete(['a'])
  await settle()
  fake.client.up = true
  t.ok(fake.values.has('a'), 'the copy is still in Redis (its delete failed)')
  t.equal(await copies.read(['a'], 1000), undefined, 'but this instance does not serve it')
  t.strictSame(await copies.read(['b'], 1000), copy, 'another client\'s copy is served')

  fake.client.emit('ready')
  await settle()
  t.notOk(fake.values.has('a'), 'the delete is sent again as Redis comes back')
  t.ok(fake.dels.length >= 2 && fake.dels.every(names => names.join() === 'a'), 'the same delete, sent again')
  copies.write('a', [copy])
  await settle()
  t.strictSame(await copies.read(['a'], 1000), copy, 'a new copy (the client is found again) is served')
})

t.test('a copy Redis stored after the delete supersedes it: the delete is not sent again', async t => {
  const fake = fakeRedis()
  const copies = store(fake.redis)
  fake.client.up = false
  copies.delete(['a'])
  await settle()
  fake.client.up = true
  copies.write('a', [copy])
  await settle()
  fake.client.emit('ready')
  await settle()
  t.strictSame(fake.dels, [['a']], 'one attempt only')
  t.strictSame(await copies.read(['a'], 1000), copy)
})

t.test('a copy Redis refused to store does not end a pending delete', async t => {
  const fake = fakeRedis()
  const copies = store(fake.redis)
  fake.values.set('a', seal(key, 'a', copy))
  fake.client.up = false
  copies.delete(['a'])
  copies.write('a', [Buffer.from('{"passport":2}\n{}')])
  await settle()
  t.equal(await copies.read(['a'], 1000), undefined, 'the old copy is still not served')
  fake.client.up = true
  fake.client.emit('ready')
  await settle()
  t.notOk(fake.values.has('a'), 'and is deleted once Redis is back')
})

t.test('a pending delete ends with the copies\' TTL: by then Redis has let the copy go anyway', async t => {
  const fake = fakeRedis()
  let now = 1_000_000
  const copies = store(fake.redis, () => now)
  fake.values.set('a', seal(key, 'a', copy))
  fake.client.up = false
  copies.delete(['a'])
  await settle()
  now += 59_999
  t.equal(await copies.read(['a'], 1000), undefined, 'refused within the TTL')
  now += 1
  // Redis's own TTL, as the fake has none; a copy written since would be served.
  fake.values.set('a', seal(key, 'a', copy))
  t.strictSame(await copies.read(['a'], 1000), copy, 'past it, the name is asked again')
  const attempts = fake.dels.length
  fake.client.up = true
  fake.client.emit('ready')
  await settle()
  t.equal(fake.dels.length, attempts, 'and the delete is not sent any more')
})

t.test('past MAX_PENDING_DELETES names, no copy at all is served from Redis until theirs expire', async t => {
  const fake = fakeRedis()
  let now = 1_000_000
  const copies = store(fake.redis, () => now)
  fake.values.set('other', seal(key, 'other', copy))
  fake.client.up = false
  for (let i = 0; i < MAX_PENDING_DELETES; i++) copies.delete([`gone-${i}`])
  t.strictSame(await copies.read(['other'], 1000), copy, 'at the bound, other copies are served')
  copies.delete(['one-more'])
  await settle()
  t.equal(await copies.read(['other'], 1000), undefined, 'past it, none: the name not kept could be any')
  now += 60_000
  t.strictSame(await copies.read(['other'], 1000), copy, 'once the copies it covers have expired, served again')
})
