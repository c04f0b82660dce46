// Conditional requests for the profile over real HTTP (the service on a port in front of the fault upstream, read
// with node:http, which never decompresses): a strong ETag on every 200, the same whatever the encoding; a matching
// If-None-Match (listed, weak, `*`) is 304 with no body and the 200's ETag, Vary and Cache-Control; a change of
// the data, a tag that does not match or a malformed one get the 200; a stale answer has its own tag, and its 304
// keeps x-stale and Age; the 304 counts among the profile's answers in the metrics. Time is a fake clock.
import t, { type Test } from 'tap'
import { createHmac, hash, hkdfSync } from 'node:crypto'
import { request } from 'node:http'
import { brotliDecompressSync } from 'node:zlib'
import * as fx from '../../schemas/fixtures.ts'
import type { PassportParams } from '../../schemas/passport.ts'
import { ivanov, petrova } from '../../sandbox/seed.ts'
import { signToken } from '../../sandbox/sign.ts'
import { entityTags } from '../../src/profile/entity-tag.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { fakeClock, faultService, faultUpstream } from '../helpers/fault-upstream.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const STRONG_TAG = /^"[\w-]{22}"$/
const EPOCH = 'Thu, 01 Jan 1970 00:00:00 GMT'

interface Raw { status: number, headers: Record<string, string | string[] | undefined>, bytes: Buffer }

/** One profile request as it travels: the body's bytes as sent, never decompressed. */
function profile (base: string, who: PassportParams, headers: Record<string, string> = {}): Promise<Raw> {
  const token = signToken({ sub: who.uid_client, login: who.login, vendor: who.vendor }, JWT_SECRET)
  const options = { headers: { authorization: `Bearer ${token}`, ...headers } }
  return new Promise((resolve, reject) => {
    const req = request(`${base}/api/users/profile`, options, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

const tagOf = (res: Raw) => String(res.headers.etag)

/** What a 304 owes: no body nor content headers, and the headers the 200 it stands for had. */
function notModified (t: Test, res: Raw, full: Raw, what: string): void {
  t.equal(res.status, 304, what)
  t.equal(res.bytes.length, 0, `${what}: no body`)
  for (const name of ['content-type', 'content-length', 'content-encoding']) {
    t.equal(res.headers[name], undefined, `${what}: no ${name}`)
  }
  for (const name of ['etag', 'cache-control', 'vary', 'x-degraded', 'x-stale', 'age']) {
    t.equal(res.headers[name], full.headers[name], `${what}: the 200's ${name}`)
  }
  t.ok(res.headers['x-request-id'], `${what}: its own request id`)
}

const upstream = await faultUpstream(t)

async function service (t: Test, env: Record<string, string> = {}) {
  const clock = fakeClock()
  const base = await faultService(t, upstream.url, { METRICS_API_KEY: METRICS_KEY, ...env }, { now: clock.now })
  upstream.reset()
  return { base, clock }
}

t.test('the key is the deployment\'s: other upstream keys give another tag for the same bytes', async t => {
  const bytes = Buffer.from(JSON.stringify(fx.passportFound))
  const ours = entityTags({ PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY })
  const tag = ours.tag(ours.digest(bytes))
  t.equal(tag, ours.tag(entityTags({ PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY }).digest(bytes)))
  for (const keys of [{ PASSPORT_API_KEY: `${PASSPORT_KEY}x`, DEALER_API_KEY: DEALER_KEY },
    { PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: `${DEALER_KEY}x` },
    { PASSPORT_API_KEY: DEALER_KEY, DEALER_API_KEY: PASSPORT_KEY }]) {
    const theirs = entityTags(keys)
    t.not(theirs.tag(theirs.digest(bytes)), tag, 'another deployment\'s tag')
  }
})

t.test('a 200 has a strong ETag, the same with and without compression, and none of the profile in it', async t => {
  const { base } = await service(t)
  const plain = await profile(base, ivanov.identity)
  t.equal(plain.status, 200)
  t.match(tagOf(plain), STRONG_TAG, 'a strong tag: quoted, no W/')
  // The same bytes give the same tag on any instance of a deployment: HMAC-SHA256 of the JSON under the key HKDF
  // derives from the two upstream keys, base64url, 22 characters; never the bare digest a guess could be tried on.
  const key = Buffer.from(hkdfSync('sha256', PASSPORT_KEY, DEALER_KEY, 'dealer-bff profile etag', 32))
  t.equal(tagOf(plain), `"${createHmac('sha256', key).update(plain.bytes).digest('base64url').slice(0, 22)}"`,
    'the keyed digest of the bytes sent')
  t.not(tagOf(plain), `"${hash('sha256', plain.bytes, 'base64url').slice(0, 22)}"`, 'not their bare SHA-256')
  const instance = await service(t)
  t.equal(tagOf(await profile(instance.base, ivanov.identity)), tagOf(plain), 'another instance: the same tag')
  t.equal(plain.headers['cache-control'], 'private, no-store')
  for (const field of [ivanov.identity.uid_client, ivanov.identity.login]) {
    t.notOk(tagOf(plain).toLowerCase().includes(field.toLowerCase()), 'no identity in the tag')
  }

  const br = await profile(base, ivanov.identity, { 'accept-encoding': 'br' })
  t.equal(br.headers['content-encoding'], 'br', 'compressed')
  t.strictSame(brotliDecompressSync(br.bytes), plain.bytes, 'the same profile')
  t.equal(tagOf(br), tagOf(plain), 'br: the same tag')
  const gzip = await profile(base, ivanov.identity, { 'accept-encoding': 'gzip' })
  t.equal(gzip.headers['content-encoding'], 'gzip')
  t.equal(tagOf(gzip), tagOf(plain), 'gzip: the same tag')

  const other = await profile(base, petrova.identity)
  t.not(tagOf(other), tagOf(plain), 'another profile, another tag')
})

t.test('If-None-Match naming the tag: 304 without a body, with the 200\'s ETag, Vary and Cache-Control', async t => {
  const { base } = await service(t)
  const full = await profile(base, petrova.identity)
  const tag = tagOf(full)
  t.match(String(full.headers.vary), /accept-encoding/i)
  const matching: Array<[string, Record<string, string>]> = [
    ['the tag', { 'if-none-match': tag }],
    ['the tag, asking for br', { 'if-none-match': tag, 'accept-encoding': 'br' }],
    ['the tag in a list', { 'if-none-match': `"other", ${tag} ,W/"x"` }],
    ['the weak form of the tag (weak comparison)', { 'if-none-match': `W/${tag}` }],
    ['*', { 'if-none-match': '*' }],
    ['the tag with Cache-Control: no-cache (for caches)', { 'if-none-match': tag, 'cache-control': 'no-cache' }],
    ['the tag and an If-Modified-Since (ignored)', { 'if-none-match': tag, 'if-modified-since': EPOCH }]
  ]
  for (const [what, headers] of matching) notModified(t, await profile(base, petrova.identity, headers), full, what)
})

t.test('a tag that does not match, or a malformed one, gets the 200 with the profile', async t => {
  const { base } = await service(t)
  const full = await profile(base, petrova.identity)
  const tag = tagOf(full)
  const bare = tag.slice(1, -1)
  const others = ['"other"', bare, `"${bare}`, `W/${bare}`, '""', 'W/', ',', `"${bare.toLowerCase()}"`]
  for (const value of others) {
    const res = await profile(base, petrova.identity, { 'if-none-match': value })
    t.equal(res.status, 200, `If-None-Match: ${value}`)
    t.strictSame(res.bytes, full.bytes, `${value}: the whole profile`)
    t.equal(tagOf(res), tag)
  }
})

t.test('after the upstream data changes: a 200 with a new tag, which then gets its 304', async t => {
  const { base } = await service(t)
  const before = await profile(base, ivanov.identity)
  notModified(t, await profile(base, ivanov.identity, { 'if-none-match': tagOf(before) }), before, 'unchanged')

  // IVANOV gains bonuses.
  upstream.set('dealer.discount', { kind: 'answer', status: 200, body: fx.discountWithBonuses })
  const after = await profile(base, ivanov.identity, { 'if-none-match': tagOf(before) })
  t.equal(after.status, 200, 'the app\'s copy is out of date')
  t.strictSame(JSON.parse(String(after.bytes)).discount, fx.discountWithBonuses.data, 'the new data')
  t.match(tagOf(after), STRONG_TAG)
  t.not(tagOf(after), tagOf(before), 'a new tag')
  notModified(t, await profile(base, ivanov.identity, { 'if-none-match': tagOf(after) }), after, 'the new tag')
})

t.test('a stale answer has its own tag; its 304 keeps x-stale and an Age that moves on', async t => {
  const { base, clock } = await service(t, { PROFILE_STALE_IF_ERROR_S: '3600', UPSTREAM_BREAKER_MIN_CALLS: '10000' })
  const fresh = await profile(base, petrova.identity)
  t.equal(fresh.status, 200)
  clock.advance(120)
  upstream.set('passport.get_client', { kind: 'status', status: 503 })

  const stale = await profile(base, petrova.identity, { 'if-none-match': tagOf(fresh) })
  t.equal(stale.status, 200, 'the fresh tag does not match the stale answer')
  t.equal(stale.headers['x-stale'], 'passport,discount,contractor')
  t.equal(stale.headers.age, '120')
  t.match(tagOf(stale), STRONG_TAG)
  t.not(tagOf(stale), tagOf(fresh), 'its own tag: its bytes name the stale sections')

  clock.advance(60)
  const again = await profile(base, petrova.identity, { 'if-none-match': tagOf(stale) })
  t.equal(again.status, 304, 'the same stale answer')
  t.equal(again.bytes.length, 0)
  t.equal(tagOf(again), tagOf(stale))
  t.equal(again.headers['x-stale'], 'passport,discount,contractor', 'still from the copy')
  t.equal(again.headers.age, '180', 'a minute older')

  upstream.reset()
  const back = await profile(base, petrova.identity, { 'if-none-match': tagOf(stale) })
  t.equal(back.status, 200, 'the passport back: the fresh profile')
  t.equal(tagOf(back), tagOf(fresh), 'with the fresh tag again')
  t.equal(back.headers['x-stale'], undefined)
})

/** The value of one sample of a Prometheus text exposition; 0 when absent. */
function sample (text: string, name: string, labels: string): number {
  const line = text.split('\n').find(l => l.startsWith(`${name}{`) && labels.split(',').every(p => l.includes(p)))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test('metrics: a 304 counts as a profile answered, and a degraded one as sent degraded', async t => {
  const { base } = await service(t)
  upstream.set('dealer.client', { kind: 'status', status: 500 })
  const full = await profile(base, ivanov.identity)
  t.equal(full.headers['x-degraded'], 'contractor')
  notModified(t, await profile(base, ivanov.identity, { 'if-none-match': tagOf(full) }), full, 'degraded, unchanged')

  const scrape = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })
  const text = await scrape.text()
  const route = 'route="/api/users/profile",method="GET"'
  t.equal(sample(text, 'bff_http_requests_total', `${route},status_code="200"`), 1)
  t.equal(sample(text, 'bff_http_requests_total', `${route},status_code="304"`), 1, 'the 304, by its status')
  t.ok(sample(text, 'bff_http_request_duration_seconds_count', `${route},status_code="304"`) === 1, 'and its latency')
  t.equal(sample(text, 'bff_profile_degraded_sections_total', 'section="contractor"'), 2,
    'both answers went without the contractor: the app shows the degraded profile it holds')
})
