// The sandbox upstream over real sockets: the seeded answers through the real upstream client, and every
// protocol rule of docs/upstream.md through raw requests.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import t from 'tap'
import { Agent, request } from 'undici'
import { compileContract } from '../../src/upstream/contract/check.ts'
import { createUpstreamClient } from '../../src/upstream/client.ts'
import { operationNames, operations, type OperationName } from '../../schemas/operations.ts'
import { ivanov, petrova, seededClients, unknownClient, type SeededClient } from '../../sandbox/seed.ts'
import { DELAY_HEADER, startSandboxUpstream } from '../../sandbox/upstream.ts'
import { requireBinaries } from '../helpers/real-servers.ts'

const keys = { passport: 'sandbox-passport-key', dealer: 'sandbox-dealer-key' }
const sandbox = await startSandboxUpstream({ keys })
t.teardown(() => sandbox.close())
const agent = new Agent()
t.teardown(() => agent.close())

const PASSPORT = operations['passport.get_client']
const DISCOUNT = operations['dealer.discount']
const CLIENT = operations['dealer.client']
const JSON_TYPE = 'application/json; charset=utf-8'
const FORM_TYPE = 'application/x-www-form-urlencoded'

const paramsOf = (name: OperationName, who: { vendor: string, login: string, uid_client: string }) =>
  name === 'passport.get_client'
    ? { vendor: who.vendor, login: who.login, uid_client: who.uid_client }
    : { uid_client: who.uid_client }

interface RawOptions { method?: string, headers?: Record<string, string>, body?: string }

/** A raw exchange, so the test sees exactly what the sandbox sends. */
async function raw (path: string, { method = 'POST', headers = {}, body }: RawOptions = {}) {
  const res = await request(sandbox.url + path, { method, headers, body, dispatcher: agent })
  const text = await res.body.text()
  const type = res.headers['content-type']
  return { status: res.statusCode, headers: res.headers, text, json: type === JSON_TYPE ? JSON.parse(text) : undefined }
}

/** A well-formed call of an operation on its slash path; options override parts of it. */
function call (name: OperationName, params: unknown, options: RawOptions = {}) {
  const op = operations[name]
  return raw(op.path + '/', {
    ...options,
    headers: { 'content-type': FORM_TYPE, 'x-authorization': keys[op.key], ...options.headers },
    body: options.body ?? JSON.stringify(params)
  })
}

t.test('the upstream client gets every seeded answer, valid against the schemas', async t => {
  const client = createUpstreamClient({ baseUrl: sandbox.url, keys, timeoutMs: 5000 })
  t.teardown(() => client.close())
  const expected: Record<OperationName, (c: SeededClient) => unknown> = {
    'passport.get_client': c => c.passport,
    'dealer.discount': c => c.discount,
    'dealer.client': c => c.contractor
  }
  for (const seeded of seededClients) {
    for (const name of operationNames) {
      const ex = await client.exchange(name, paramsOf(name, seeded.identity) as never)
      t.equal(ex.outcome, 'ok', `${seeded.label} ${name}: ${JSON.stringify(ex.contract.errors)}`)
      t.strictSame(compileContract(operations[name].response).errors(ex.body), [],
        `${seeded.label} ${name} matches the schema`)
      t.strictSame(ex.body, expected[name](seeded), `${seeded.label} ${name} is the seeded answer`)
    }
  }
  const lower = { ...petrova.identity, uid_client: petrova.identity.uid_client.toLowerCase() }
  const found = await client.call('passport.get_client', lower)
  t.match(found, { kind: 'ok', value: { uid_client: petrova.identity.uid_client } },
    'a lower-case uid_client finds the client')
  const discount = await client.call('dealer.discount', { uid_client: lower.uid_client })
  t.equal(discount.value.success, true, 'dealer lookups ignore uid case too')
})

t.test('an unslashed operation path answers 307 to the slash path, for any method', async t => {
  for (const name of operationNames) {
    const { path } = operations[name]
    for (const method of ['POST', 'GET']) {
      const res = await raw(path, { method })
      t.equal(res.status, 307, `${method} ${path}`)
      t.equal(res.headers.location, path + '/')
      t.match(res.headers['content-type'], /^text\/html/)
      t.match(res.text, path + '/')
    }
  }
  const res = await raw(PASSPORT.path + '?a=1&b=2')
  t.equal(res.headers.location, PASSPORT.path + '/?a=1&b=2', 'the query string is kept')
})

t.test('an unknown path is 404', async t => {
  for (const path of ['/', '/bc_passport/', '/bc_passport/get_client//', '/bc_passport/nope/']) {
    const res = await raw(path, { method: 'POST' })
    t.equal(res.status, 404, path)
    t.equal(res.headers['content-type'], JSON_TYPE)
    t.equal(res.json.success, false)
  }
})

t.test('only POST is allowed on the slash path', async t => {
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const res = await call('dealer.client', { uid_client: ivanov.identity.uid_client }, { method })
    t.equal(res.status, 405, method)
    t.equal(res.headers.allow, 'POST')
    t.equal(res.json.msg_code, 'METHOD_NOT_ALLOWED')
  }
})

t.test('the form content type is required', async t => {
  for (const type of ['application/json', 'text/plain', '']) {
    const res = await call('passport.get_client', ivanov.identity, { headers: { 'content-type': type } })
    t.equal(res.status, 415, `content type "${type}"`)
    t.equal(res.headers['content-type'], JSON_TYPE)
    t.equal(res.json.msg_code, 'UNSUPPORTED_MEDIA_TYPE')
  }
  const withCharset = await call('passport.get_client', ivanov.identity,
    { headers: { 'content-type': FORM_TYPE + '; charset=UTF-8' } })
  t.equal(withCharset.status, 200, 'a charset parameter is fine')
})

t.test("each operation requires its own upstream's key", async t => {
  const cases = [
    { name: 'passport.get_client', key: undefined, why: 'missing' },
    { name: 'passport.get_client', key: 'wrong', why: 'wrong' },
    { name: 'passport.get_client', key: keys.dealer, why: "the dealer's key" },
    { name: 'dealer.discount', key: keys.passport, why: "the passport's key" },
    { name: 'dealer.client', key: keys.passport, why: "the passport's key" },
    { name: 'dealer.client', key: '', why: 'empty' }
  ] as const
  for (const { name, key, why } of cases) {
    const headers: Record<string, string> = { 'content-type': FORM_TYPE }
    if (key !== undefined) headers['x-authorization'] = key
    const res = await raw(operations[name].path + '/',
      { headers, body: JSON.stringify(paramsOf(name, ivanov.identity)) })
    t.equal(res.status, 401, `${name} with ${why} key`)
    t.equal(res.json.success, false)
    t.equal(res.json.msg_code, 'UNAUTHORIZED')
    t.match(res.json.message, /[а-я]/, 'a Russian message')
    t.notMatch(res.text, keys.passport, 'the expected key is not echoed')
    t.notMatch(res.text, keys.dealer)
  }
})

t.test('a body that is not valid JSON params is 400 with a clear message', async t => {
  const badJson = await call('passport.get_client', undefined, { body: 'vendor=kia&login=1' })
  t.equal(badJson.status, 400)
  t.equal(badJson.json.msg_code, 'INVALID_JSON')
  const empty = await call('dealer.discount', undefined, { body: '' })
  t.equal(empty.status, 400, 'an empty body')
  t.equal(empty.json.msg_code, 'INVALID_JSON')

  const badUuid = await call('dealer.discount', { uid_client: 'not-a-uuid' })
  t.equal(badUuid.status, 400)
  t.equal(badUuid.json.msg_code, 'INVALID_PARAMS')
  t.match(badUuid.json.errors, [{ path: '/uid_client' }], 'the failing field is named')
  t.match(badUuid.json.message, '/uid_client')

  const missing = await call('passport.get_client', { vendor: 'kia', uid_client: ivanov.identity.uid_client })
  t.equal(missing.status, 400, 'a missing login')
  t.equal(missing.json.msg_code, 'INVALID_PARAMS')
  const extra = await call('dealer.client', { uid_client: ivanov.identity.uid_client, login: ivanov.identity.login })
  t.equal(extra.status, 400, 'a field the operation does not take')
  const notObject = await call('dealer.client', [ivanov.identity.uid_client])
  t.equal(notObject.status, 400, 'an array')
})

t.test('a body over the size limit is 413', async t => {
  const big = JSON.stringify({ uid_client: ivanov.identity.uid_client, pad: 'x'.repeat(70 * 1024) })
  const res = await call('dealer.client', undefined, { body: big })
  t.equal(res.status, 413)
  t.equal(res.json.msg_code, 'PAYLOAD_TOO_LARGE')

  // Without a content-length the limit is enforced while reading.
  const chunks = Readable.from([big.slice(0, 40_000), big.slice(40_000)])
  const chunked = await request(sandbox.url + CLIENT.path + '/', {
    method: 'POST',
    headers: { 'content-type': FORM_TYPE, 'x-authorization': keys.dealer },
    body: chunks,
    dispatcher: agent
  })
  t.equal(chunked.statusCode, 413, 'a chunked body')
  await chunked.body.dump()
})

t.test('the passport answers 400 CLIENT_NOT_FOUND unless vendor, login and uid all match', async t => {
  const notFound = compileContract(PASSPORT.notFound.schema)
  const cases = {
    'an unknown client': unknownClient,
    'a known uid with another login': { ...ivanov.identity, login: petrova.identity.login },
    'a known uid with another vendor': { ...ivanov.identity, vendor: 'hyundai' },
    "one client's login with another's uid": { ...ivanov.identity, uid_client: petrova.identity.uid_client }
  }
  for (const [why, params] of Object.entries(cases)) {
    const res = await call('passport.get_client', params)
    t.equal(res.status, PASSPORT.notFound.status, why)
    t.equal(res.headers['content-type'], JSON_TYPE)
    t.strictSame(notFound.errors(res.json), [], 'matches PassportClientNotFound')
    t.equal(res.json.msg_code, 'CLIENT_NOT_FOUND')
    t.match(res.json.message, /[а-я]/)
  }
})

t.test('the discount is HTTP 200 with success false and data null when there are no bonuses', async t => {
  const schema = compileContract(DISCOUNT.response)
  for (const [who, uid] of [['IVANOV', ivanov.identity.uid_client], ['UNKNOWN', unknownClient.uid_client]] as const) {
    const res = await call('dealer.discount', { uid_client: uid })
    t.equal(res.status, 200, who)
    t.strictSame(schema.errors(res.json), [])
    t.equal(res.json.success, false)
    t.equal(res.json.data, null)
    t.match(res.json.message, /[а-я]/)
  }
  const bonuses = await call('dealer.discount', { uid_client: petrova.identity.uid_client })
  t.equal(bonuses.json.success, true, 'PETROVA has bonuses')
  t.strictSame(bonuses.json.data, petrova.discount.data)
})

t.test('the contractor answer carries http_code', async t => {
  const schema = compileContract(CLIENT.response)
  const known = await call('dealer.client', { uid_client: ivanov.identity.uid_client })
  t.equal(known.status, 200)
  t.strictSame(schema.errors(known.json), [])
  t.equal(known.json.http_code, 200)
  t.equal(known.json.data.id, ivanov.contractor.data.id)
  const unknown = await call('dealer.client', { uid_client: unknownClient.uid_client })
  t.equal(unknown.status, 200, 'HTTP 200 for an unknown uid too')
  t.strictSame(schema.errors(unknown.json), [])
  t.match(unknown.json, { success: false, data: null, http_code: 404 })
})

t.test('the delay is applied to every answer and can be changed', async t => {
  t.teardown(() => sandbox.setDelay(0))
  const before = await call('dealer.client', { uid_client: ivanov.identity.uid_client })
  t.equal(before.headers[DELAY_HEADER], undefined, 'no delay by default')
  sandbox.setDelay(5)
  for (const res of [
    await call('dealer.client', { uid_client: ivanov.identity.uid_client }),
    await raw(CLIENT.path),
    await raw('/nowhere')
  ]) {
    t.equal(res.headers[DELAY_HEADER], '5', `HTTP ${res.status} was held 5 ms`)
  }
  sandbox.setDelay(0)
  t.equal((await raw(CLIENT.path)).headers[DELAY_HEADER], undefined, 'back to no delay')
  t.throws(() => sandbox.setDelay(-1), RangeError)
  t.throws(() => sandbox.setDelay(1.5), RangeError)

  const slow = await startSandboxUpstream({ keys, delayMs: 7 })
  t.teardown(() => slow.close())
  const res = await request(slow.url + DISCOUNT.path, { method: 'POST', dispatcher: agent })
  await res.body.dump()
  t.equal(res.headers[DELAY_HEADER], '7', 'the delayMs option')
})

t.test('the counter counts operation requests and redirects', async t => {
  sandbox.resetCounts()
  t.strictSame(sandbox.counts(),
    { total: 0, byOperation: { 'passport.get_client': 0, 'dealer.discount': 0, 'dealer.client': 0 }, redirects: 0 })
  const client = createUpstreamClient({ baseUrl: sandbox.url, keys, timeoutMs: 5000 })
  t.teardown(() => client.close())
  const profile = async () => {
    await client.call('passport.get_client', ivanov.identity)
    await client.call('dealer.discount', { uid_client: ivanov.identity.uid_client })
    await client.call('dealer.client', { uid_client: ivanov.identity.uid_client })
  }
  await profile()
  t.strictSame(sandbox.counts(), {
    total: 3,
    byOperation: { 'passport.get_client': 1, 'dealer.discount': 1, 'dealer.client': 1 },
    redirects: 3
  }, 'the first profile: three operations, each redirected once')
  await profile()
  t.match(sandbox.counts(), { total: 6, redirects: 3 }, 'the client remembers the slash paths')

  await raw('/nowhere')
  await call('dealer.client', { uid_client: ivanov.identity.uid_client }, { headers: { 'x-authorization': 'wrong' } })
  t.match(sandbox.counts(), { total: 7, byOperation: { 'dealer.client': 3 }, redirects: 3 },
    'a refused request counts; an unknown path does not')

  const snapshot = sandbox.counts()
  snapshot.byOperation['dealer.client'] = 100
  t.equal(sandbox.counts().byOperation['dealer.client'], 3, 'counts() is a copy')
  sandbox.resetCounts()
  t.equal(sandbox.counts().total, 0)
})

t.test('start options are checked', async t => {
  await t.rejects(startSandboxUpstream({ keys: { passport: '', dealer: 'd' } }), TypeError)
  await t.rejects(startSandboxUpstream({ keys, delayMs: -5 }), RangeError)
})

t.test('close stops the server', async t => {
  const other = await startSandboxUpstream({ keys })
  await other.close()
  await t.rejects(request(other.url + DISCOUNT.path, { method: 'POST', dispatcher: agent }), { code: 'ECONNREFUSED' })
})

t.test('with a key and certificate it serves https and counts the TLS handshakes', async t => {
  // openssl makes the certificate (node:crypto makes keys, not X.509 certificates).
  const tools = requireBinaries(t, ['openssl'])
  if (tools === undefined) return
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  execFileSync(tools.openssl, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext',
    'subjectAltName=IP:127.0.0.1'],
  { stdio: 'ignore' })
  const cert = readFileSync(certFile)
  const secure = await startSandboxUpstream({ keys, tls: { key: readFileSync(keyFile), cert } })
  t.teardown(() => secure.close())
  t.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+$/)
  t.equal(secure.secureConnections(), 0)

  const trusting = new Agent({ connect: { ca: cert } })
  t.teardown(() => trusting.close())
  const post = async (dispatcher: Agent) => {
    const res = await request(secure.url + DISCOUNT.path + '/', {
      method: 'POST',
      headers: { 'content-type': FORM_TYPE, 'x-authorization': keys.dealer },
      body: JSON.stringify({ uid_client: ivanov.identity.uid_client }),
      dispatcher
    })
    return { status: res.statusCode, json: await res.body.json() }
  }
  t.strictSame(await post(trusting), { status: 200, json: ivanov.discount }, 'the seeded answer, over https')
  const first = secure.secureConnections()
  t.ok(first >= 1, 'the first request made a handshake')
  for (let i = 0; i < 9; i++) await post(trusting)
  // undici's pool may open a second connection for the request right after the first; then it reuses them.
  t.ok(secure.secureConnections() <= 2,
    `kept-alive connections: ${secure.secureConnections()} handshakes for 10 requests`)
  t.equal(secure.counts().total, 10)
  const again = new Agent({ connect: { ca: cert } })
  t.teardown(() => again.close())
  const before = secure.secureConnections()
  await post(again)
  t.equal(secure.secureConnections(), before + 1, 'a new client is a new handshake')
  await t.rejects(post(agent), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
    'a client that does not trust the certificate is refused')
  t.equal(sandbox.secureConnections(), 0, 'plain http has no handshakes')
})
