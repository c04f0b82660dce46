// The last-known store's parts: the seal (AES-256-GCM, key ids, rotation, the name bound in), identity
// names, and the in-process store's byte bound with least-recently-used eviction.
import t from 'tap'
import { randomBytes, randomUUID } from 'node:crypto'
import { decodeEntry, encodeEntry } from '../../src/profile/last-known/entry.ts'
import { cacheKey, identityName, open, seal } from '../../src/profile/last-known/keys.ts'
import { ENTRY_OVERHEAD_BYTES, memoryStore } from '../../src/profile/last-known/memory-store.ts'
import { NO_OBSERVER } from '../../src/profile/last-known/observer.ts'
import * as fx from '../../schemas/fixtures.ts'
import { ConfigSchema } from '../../src/config.ts'
import { profileExample } from '../../schemas/profile.ts'

const plain = Buffer.from(JSON.stringify({ login: fx.IVANOV.login }))

t.test('a sealed copy opens only under its key and its name', async t => {
  const key = cacheKey(randomBytes(32))
  const other = cacheKey(randomBytes(32))
  const sealed = seal(key, 'name-a', plain)
  t.notOk(sealed.includes(Buffer.from(fx.IVANOV.login)), 'the login is not readable')
  t.strictSame(open([key], 'name-a', sealed), plain)
  t.strictSame(open([other, key], 'name-a', sealed), plain, 'found by its key id in a rotated list')
  t.equal(open([other], 'name-a', sealed), undefined, 'another key: nothing')
  t.equal(open([key], 'name-b', sealed), undefined, 'moved to another name: nothing')
  const flipped = Buffer.from(sealed)
  flipped[20]! ^= 1
  t.equal(open([key], 'name-a', flipped), undefined, 'tampered: nothing')
  t.equal(open([key], 'name-a', sealed.subarray(0, 10)), undefined, 'truncated: nothing')
  t.not(seal(key, 'name-a', plain).toString('hex'), sealed.toString('hex'), 'a fresh IV each time')
})

t.test('identity names: stable per key and identity, different for any other', async t => {
  const key = cacheKey(randomBytes(32))
  const name = identityName(key, fx.IVANOV)
  t.match(name, /^[0-9a-f]{64}$/)
  t.equal(identityName(key, { ...fx.IVANOV }), name)
  t.not(identityName(key, { ...fx.IVANOV, login: '79990000000' }), name)
  t.not(identityName(key, { ...fx.IVANOV, vendor: 'hyundai' }), name)
  t.not(identityName(cacheKey(randomBytes(32)), fx.IVANOV), name)
})

t.test('the memory store stays within its bytes, the least recently used out first, each eviction counted', async t => {
  let evicted = 0
  // Each copy also counts what holding it costs: four fit, five do not.
  const bound = 1000 + 4 * ENTRY_OVERHEAD_BYTES
  const store = memoryStore(bound, { ...NO_OBSERVER, evicted: () => { evicted++ } })
  // Random bytes: compression cannot shrink them, so five copies do not fit in the bound.
  const bytes = randomBytes(200)
  for (const name of ['a', 'b', 'c', 'd']) store.write(name, [bytes])
  t.strictSame(await store.read(['a'], 0), bytes, 'a read makes `a` the most recently used')
  store.write('e', [bytes])
  store.write('f', [bytes])
  t.ok(store.size <= bound, `within the bound (${store.size} bytes)`)
  t.equal(evicted, 2)
  t.equal(await store.read(['b'], 0), undefined, 'the least recently used went first')
  t.strictSame(await store.read(['a'], 0), bytes, 'the recently read one stayed')
  store.delete(['a'])
  t.equal(await store.read(['a'], 0), undefined, 'deleted')
})

t.test('the memory store keeps an idle client\'s copy however much others write, while it has room', async t => {
  let evicted = 0
  // Others write 650 KB of copies, six and a half times the bound, but hold a twentieth of it at any time.
  const store = memoryStore(100_000, { ...NO_OBSERVER, evicted: () => { evicted++ } })
  store.write('idle', [Buffer.from('1\n'), Buffer.alloc(300, 'i')])
  for (let i = 0; i < 6000; i++) {
    store.write(`busy-${i % 20}`, [Buffer.from(`${i}\n`), Buffer.alloc(100 + (i % 7), 'b')])
  }
  t.strictSame(await store.read(['idle'], 0), Buffer.concat([Buffer.from('1\n'), Buffer.alloc(300, 'i')]))
  t.equal(evicted, 0, 'nothing pushed out: the held copies are far below the bound')
  t.ok(store.size < 5000 + 21 * ENTRY_OVERHEAD_BYTES, `the bytes held are the newest copies only (${store.size})`)
})

t.test('the memory store answers the bytes last written, whether a chunk changed or not', async t => {
  const store = memoryStore(1000, NO_OBSERVER)
  const body = Buffer.from('{"same":"profile"}')
  store.write('a', [Buffer.from('1\n'), body])
  store.write('a', [Buffer.from('2\n'), Buffer.from(body)])
  const read = await store.read(['a'], 0)
  t.equal(read?.toString(), '2\n{"same":"profile"}', 'new times, the same profile')
  store.write('a', [Buffer.from('9\n'), Buffer.from(body)])
  t.equal(read?.toString(), '2\n{"same":"profile"}', 'what a read answered is its own: later times do not reach it')
  t.equal((await store.read(['a'], 0))?.toString(), '9\n{"same":"profile"}')
  store.write('a', [Buffer.from('10\n'), Buffer.from(body)])
  t.equal((await store.read(['a'], 0))?.toString(), '10\n{"same":"profile"}', 'longer times, the same profile')
  store.write('a', [Buffer.from('3\n'), Buffer.from('{"other":"profile"}')])
  t.equal((await store.read(['a'], 0))?.toString(), '3\n{"other":"profile"}', 'a changed profile replaces the held one')
})

t.test('a copy of an older layout, or bytes that are not one, is a miss', async t => {
  t.equal(decodeEntry(Buffer.from('{"passport":{"at":1,"value":{}}}')), undefined, 'the one-object layout of before')
  t.equal(decodeEntry(Buffer.from('{"passport":1}\nnot json')), undefined, 'a broken profile')
  t.equal(decodeEntry(Buffer.from('{"passport":"1"}\n{"uid_client":"A"}')), undefined, 'a time that is not a number')
  t.equal(decodeEntry(Buffer.from('{"discount":1}\n{"uid_client":"A"}')), undefined, 'a section the profile lacks')
  const entry = decodeEntry(Buffer.concat(encodeEntry({ passport: 5, contractor: 6 },
    Buffer.from(JSON.stringify({
      uid_client: 'A', client: {}, catalog_cars_view: [], catalog_cars_favourites: [], discount: null, contractor: null
    })))))
  t.strictSame(entry, {
    passport: { at: 5, value: { uid_client: 'A', client: {}, catalog_cars_view: [], catalog_cars_favourites: [] } },
    contractor: { at: 6, value: null }
  }, 'a section not kept is not read back, though the profile has it')
})

t.test('the default memory store keeps 5,000 clients\' copies, compressed, each read back exactly', async t => {
  let evicted = 0
  const bound = (ConfigSchema.properties.PROFILE_CACHE_MAX_BYTES as { default?: number }).default!
  const store = memoryStore(bound, { ...NO_OBSERVER, evicted: () => { evicted++ } })
  const uuid = /[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/g
  // Every id its own, and from none to all of the documented cars: no two copies alike, none the example itself.
  const copyOf = (i: number) => {
    const { catalog_cars_view: viewed, catalog_cars_favourites: favourites } = profileExample
    const profile = {
      ...profileExample,
      catalog_cars_view: viewed.slice(0, i % (viewed.length + 1)),
      catalog_cars_favourites: favourites.slice(0, (i >> 2) % (favourites.length + 1))
    }
    const body = JSON.stringify(profile).replace(uuid, () => randomUUID().toUpperCase())
    return [Buffer.from(`{"passport":${i}}\n`), Buffer.from(body)]
  }
  let plain = 0
  const written = new Map<string, Buffer>()
  for (let i = 0; i < 5000; i++) {
    const chunks = copyOf(i)
    plain += chunks[0]!.length + chunks[1]!.length
    written.set(`client-${i}`, Buffer.concat(chunks))
    store.write(`client-${i}`, chunks)
  }
  t.equal(evicted, 0, 'no client pushed out')
  t.ok(store.size < plain / 3, `held ${store.size} bytes for ${plain} of profiles`)
  let exact = 0
  for (const [name, bytes] of written) if ((await store.read([name], 0))?.equals(bytes) === true) exact++
  t.equal(exact, 5000, 'every copy read back byte for byte')
})
