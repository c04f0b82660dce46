// Compression over real HTTP (the service on a port in front of the sandbox upstream), read with node:http,
// which never decompresses: br and gzip by Accept-Encoding and its q-values, the same JSON as the plain
// answer in less than half its bytes, Vary on every compressible answer, small answers plain, error
// answers the catalog body either way, metrics plain unless the scrape asks, COMPRESSION=off.
import t, { type Test } from 'tap'
import { request } from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { Compile } from 'typebox/compile'
import { ErrorBody } from '../../schemas/errors.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { signToken } from '../../sandbox/sign.ts'
import { CONSOLE_KEY, JWT_SECRET } from '../helpers/build-app.ts'
import { faultService, faultUpstream } from '../helpers/fault-upstream.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const { login, uid_client: sub, vendor } = ivanov.identity
const authorization = `Bearer ${signToken({ sub, login, vendor }, JWT_SECRET)}`
const isErrorBody = Compile(ErrorBody)

interface Raw { status: number, headers: Record<string, string | string[] | undefined>, bytes: Buffer }

/** One request as it travels: the body's bytes as sent, never decompressed. */
function raw (url: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The body as JSON, decoded by its Content-Encoding. */
function json ({ headers, bytes }: Raw): unknown {
  const encoding = headers['content-encoding']
  const plain = encoding === 'br' ? brotliDecompressSync(bytes) : encoding === 'gzip' ? gunzipSync(bytes) : bytes
  return JSON.parse(plain.toString('utf8'))
}

const varies = (t: Test, res: Raw) => t.match(String(res.headers.vary), /accept-encoding/i, 'Vary: Accept-Encoding')

async function service (t: Test, env: Record<string, string> = {}) {
  const upstream = await faultUpstream(t)
  return await faultService(t, upstream.url, { METRICS_API_KEY: METRICS_KEY, ...env })
}

t.test('br and gzip: the plain answer\'s JSON in less than half its bytes, by ' +
  'Accept-Encoding and q-values', async t => {
  const base = await service(t)
  const url = `${base}/api/users/profile`
  const plain = await raw(url, { authorization })
  t.equal(plain.status, 200)
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: identity')
  varies(t, plain)
  const expected = json(plain)
  const cases: Array<[string, string]> = [
    ['br, gzip', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'gzip'],
    ['deflate', 'identity'],
    ['identity', 'identity']
  ]
  for (const [accept, encoding] of cases) {
    const res = await raw(url, { authorization, 'accept-encoding': accept })
    t.equal(res.status, 200)
    t.equal(res.headers['content-encoding'] ?? 'identity', encoding, `Accept-Encoding: ${accept}`)
    varies(t, res)
    t.same(json(res), expected, `${accept}: the same JSON`)
    if (encoding !== 'identity') {
      t.ok(res.bytes.length * 2 < plain.bytes.length, `${encoding}: ${res.bytes.length} of ${plain.bytes.length} bytes`)
      t.equal(Number(res.headers['content-length']), res.bytes.length, 'its own length')
    }
  }
})

t.test('a small answer goes plain, with Vary all the same', async t => {
  const base = await service(t)
  const res = await raw(`${base}/health/live`, { 'accept-encoding': 'br, gzip' })
  t.equal(res.status, 200)
  t.equal(res.headers['content-encoding'], undefined)
  varies(t, res)
  t.same(json(res), { status: 'ok' })
})

t.test('an error answer is the catalog body, compressed or not', async t => {
  const base = await service(t)
  // An unknown param's name is in the message: an error body past the threshold.
  const body = JSON.stringify({ operation: 'passport.get_client', params: { ['x'.repeat(1500)]: 1 } })
  const headers = { 'content-type': 'application/json', 'x-console-key': CONSOLE_KEY }
  const plain = await raw(`${base}/request-console`, headers, 'POST', body)
  for (const accept of ['br', 'gzip']) {
    const res = await raw(`${base}/request-console`, { ...headers, 'accept-encoding': accept }, 'POST', body)
    t.equal(res.status, 400)
    t.equal(res.headers['content-encoding'], accept)
    varies(t, res)
    t.ok(isErrorBody.Check(json(res)), 'an ErrorBody')
    t.same(json(res), json(plain), 'the plain answer\'s body')
  }
  const small = await raw(`${base}/api/users/profile`, { 'accept-encoding': 'br' })
  t.equal(small.status, 401)
  t.equal(small.headers['content-encoding'], undefined, 'a small error goes plain')
  varies(t, small)
  t.match(json(small), { statusCode: 401, code: 'UNAUTHORIZED' })
})

t.test('metrics: plain to a scrape that did not ask, gzip to one that did', async t => {
  const base = await service(t)
  const headers = { authorization: `Bearer ${METRICS_KEY}` }
  const plain = await raw(`${base}/metrics`, headers)
  t.equal(plain.status, 200)
  t.equal(plain.headers['content-encoding'], undefined)
  t.match(plain.bytes.toString('utf8'), /^# HELP /m)
  const asked = await raw(`${base}/metrics`, { ...headers, 'accept-encoding': 'gzip' })
  t.equal(asked.headers['content-encoding'], 'gzip')
  t.match(gunzipSync(asked.bytes).toString('utf8'), /^# HELP /m)
})

t.test('COMPRESSION=off: every answer as it is, for an ingress that compresses', async t => {
  const base = await service(t, { COMPRESSION: 'off' })
  const res = await raw(`${base}/api/users/profile`, { authorization, 'accept-encoding': 'br, gzip' })
  t.equal(res.status, 200)
  t.equal(res.headers['content-encoding'], undefined)
  t.match(json(res), { uid_client: String })
})
