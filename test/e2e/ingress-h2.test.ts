// The path an app takes in production: HTTPS and HTTP/2 to nginx running the site of docs/operations.md
// (deploy/nginx/dealer-bff.conf, as written but for its addresses, ports and a throwaway certificate), HTTP/1.1 with
// keep-alive from nginx to a `node src/server.ts` instance in front of the sandbox upstream. Every answer an app
// relies on (ETag and 304, br and gzip, Vary, Cache-Control, request ids, 429 with Retry-After, the 426) is compared
// with the same request sent to the instance directly: through the ingress it must arrive unchanged, its ETag
// strong, compressed once, by the service.
import { request } from 'node:http'
import { connect as connectH2, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2'
import { connect as connectTls, type ConnectionOptions } from 'node:tls'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import t from 'tap'
import { signToken } from '../../sandbox/sign.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { ivanov, petrova, unknownClient } from '../../sandbox/seed.ts'
import { APP_VERSION_HEADER } from '../../schemas/app-version.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { get, requireBinaries, startNginx, startServerProcess } from '../helpers/real-servers.ts'

// One instance, nginx and a sandbox upstream start in a few seconds; a loaded machine may take several times that.
t.setTimeout(90_000)

const PROFILE = '/api/users/profile'
const LIMIT = 20
const MIN_APP_VERSION = '2.0.0'
/** Counted per request: the ingress's answer and the direct one differ by one. */
const COUNTERS = ['x-ratelimit-remaining', 'x-ratelimit-reset']

interface Exchange { status: number, headers: Record<string, string | string[] | undefined>, body: Buffer }

const bearer = (who: { uid_client: string, login: string, vendor: string }) =>
  ({ authorization: `Bearer ${signToken({ sub: who.uid_client, login: who.login, vendor: who.vendor }, JWT_SECRET)}` })

/** One GET on a stream of the HTTP/2 session, its body as bytes (nothing decoded). */
function h2Get (session: ClientHttp2Session, path: string, headers: Record<string, string>): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'GET', ':path': path, ...headers })
    let head: IncomingHttpHeaders = {}
    const chunks: Buffer[] = []
    stream.on('response', received => { head = received })
    stream.on('data', (chunk: Buffer) => chunks.push(chunk))
    stream.on('end', () => {
      const { ':status': status, ...rest } = head
      resolve({ status: Number(status), headers: rest, body: Buffer.concat(chunks) })
    })
    stream.on('error', reject)
    stream.end()
  })
}

/** The same GET straight to the instance over HTTP/1.1, its body as bytes. */
function directGet (base: string, path: string, headers: Record<string, string>): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

// The hop's own: nginx writes its Date and Server, and HTTP/2 has no connection headers (it frames the body itself).
const HOP_HEADERS = ['date', 'server', 'connection', 'keep-alive', 'transfer-encoding']

/** The headers that must come through unchanged: all but the hop's own and `moving` (counters, clocks). */
function endToEnd (headers: Exchange['headers'], moving: string[] = []) {
  return Object.fromEntries(Object.entries(headers)
    .filter(([name]) => !HOP_HEADERS.includes(name) && !moving.includes(name)).sort(([a], [b]) => a.localeCompare(b)))
}

/** Completes a TLS handshake with `options`, or rejects with the reason; resolves with the protocol and cipher. */
function handshake (port: number, options: ConnectionOptions): Promise<{ protocol: string | null, cipher: string }> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port, ...options }, () => {
      const result = { protocol: socket.getProtocol(), cipher: socket.getCipher().name }
      socket.destroy()
      resolve(result)
    })
    socket.once('error', reject)
  })
}

const binaries = requireBinaries(t, ['nginx', 'openssl'])

if (binaries !== undefined) {
  // Inside a test, so that whatever fails in the setup, the processes it started are stopped.
  t.test('through the nginx site over HTTPS and HTTP/2', async t => {
    const upstream = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
    t.teardown(() => upstream.close())
    const instance = await startServerProcess(t, {
      UPSTREAM_URL: upstream.url,
      PASSPORT_API_KEY: PASSPORT_KEY,
      DEALER_API_KEY: DEALER_KEY,
      AUTH_JWT_SECRET: JWT_SECRET,
      RATE_LIMIT_PROFILE_PER_MINUTE: String(LIMIT),
      MIN_APP_VERSION,
      TRUST_PROXY: '127.0.0.1',
      LOG_LEVEL: 'info'
    })
    const nginx = await startNginx(t, binaries, [new URL(instance.url).host])
    const session = connectH2(nginx.url, { ca: nginx.ca })
    t.teardown(() => { session.close() })
    await new Promise((resolve, reject) => session.once('connect', resolve).once('error', reject))
    const both = async (path: string, headers: Record<string, string>) =>
      ({ ingress: await h2Get(session, path, headers), direct: await directGet(instance.url, path, headers) })

    await t.test('HTTPS with HTTP/2 by ALPN, modern TLS only, and no plain HTTP', async t => {
      t.equal(session.alpnProtocol, 'h2', 'the session negotiated HTTP/2')
      t.equal((session.socket as unknown as { getProtocol (): string }).getProtocol(), 'TLSv1.3')
      t.match(await handshake(nginx.port, { ca: nginx.ca, maxVersion: 'TLSv1.2' }),
        { protocol: 'TLSv1.2', cipher: /GCM|CHACHA20/ }, 'TLS 1.2 with an AEAD suite')
      await t.rejects(handshake(nginx.port, { ca: nginx.ca, maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA' }),
        'TLS 1.2 with a CBC suite is refused')
      // Debian's OpenSSL refuses it whatever the site says; an nginx built with another OpenSSL has the site's word.
      await t.rejects(handshake(nginx.port,
        { ca: nginx.ca, minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
      'TLS 1.1 is refused')
      const http11 = await get(`${nginx.url}/health/live`)
      t.equal(http11.status, 200, 'a client without HTTP/2 is served over HTTP/1.1')

      const plain = await get(`${nginx.plainUrl}${PROFILE}`, bearer(ivanov.identity))
      t.equal(plain.status, 403, 'plain HTTP is refused')
      t.equal(plain.body, 'HTTPS only\n')
      t.equal(plain.headers.location, undefined, 'not redirected: the token is not sent again')
    })

    await t.test('the profile, its ETag and 304, br and gzip come through HTTP/2 unchanged', async t => {
      const plain = await both(PROFILE, { ...bearer(ivanov.identity), 'x-request-id': 'ingress-h2-identity' })
      t.equal(plain.ingress.status, 200)
      t.same(endToEnd(plain.ingress.headers, COUNTERS), endToEnd(plain.direct.headers, COUNTERS),
        'the headers of the instance\'s own answer')
      t.ok(plain.ingress.headers['x-ratelimit-remaining'] !== undefined, 'the limit\'s headers too')
      t.equal(plain.ingress.body.toString(), plain.direct.body.toString(), 'the same bytes')
      const etag = plain.ingress.headers.etag as string
      t.match(etag, /^"[^"]+"$/, 'a strong ETag')
      t.ok(plain.ingress.headers['cache-control'], 'Cache-Control')
      t.match(plain.ingress.headers.vary, /accept-encoding/i, 'Vary names Accept-Encoding')
      t.match(plain.ingress.headers['strict-transport-security'], /^max-age=\d+[^,]*$/, 'HSTS, once: the service\'s')
      const profile = JSON.parse(plain.ingress.body.toString()) as unknown

      for (const [encoding, decode] of [['br', brotliDecompressSync], ['gzip', gunzipSync]] as const) {
        const packed = await both(PROFILE, { ...bearer(ivanov.identity), 'accept-encoding': encoding })
        t.equal(packed.ingress.status, 200)
        t.equal(packed.ingress.headers['content-encoding'], encoding, `${encoding} on the wire`)
        t.same(endToEnd(packed.ingress.headers, [...COUNTERS, 'x-request-id']),
          endToEnd(packed.direct.headers, [...COUNTERS, 'x-request-id']), `${encoding}: the instance's headers`)
        t.same(JSON.parse(decode(packed.ingress.body).toString()), profile, `${encoding}: decodes once to the profile`)
        t.match(packed.ingress.headers.etag, /^"[^"]+"$/, `${encoding}: the ETag stays strong`)
      }

      const revalidated = await both(PROFILE,
        { ...bearer(ivanov.identity), 'if-none-match': etag, 'accept-encoding': 'br, gzip' })
      t.equal(revalidated.ingress.status, 304, '304 for the stored tag')
      t.equal(revalidated.ingress.body.length, 0, 'no body')
      t.equal(revalidated.ingress.headers.etag, etag)
      t.same(endToEnd(revalidated.ingress.headers, [...COUNTERS, 'x-request-id']),
        endToEnd(revalidated.direct.headers, [...COUNTERS, 'x-request-id']), 'the instance\'s 304 headers')
      t.ok(revalidated.ingress.headers['cache-control'], 'Cache-Control on the 304')
    })

    await t.test('request ids pass both ways: the caller\'s echoed, a fresh one when absent', async t => {
      const sent = await h2Get(session, PROFILE, { ...bearer(petrova.identity), 'x-request-id': 'ingress-h2-req-1' })
      t.equal(sent.headers['x-request-id'], 'ingress-h2-req-1')
      const fresh = await h2Get(session, PROFILE, bearer(petrova.identity))
      const another = await h2Get(session, PROFILE, bearer(petrova.identity))
      t.match(fresh.headers['x-request-id'], /\S/, 'the service made one')
      t.not(fresh.headers['x-request-id'], another.headers['x-request-id'], 'a fresh one each time')
      t.ok(instance.logs.some(line => line.reqId === 'ingress-h2-req-1'), 'the instance logged under the caller\'s id')
    })

    await t.test('the 404, the 426 and the 429 with Retry-After arrive unchanged, nginx compressing none', async t => {
      // As an app sends them: OkHttp asks for gzip on every request. Under 1 KiB the service sends them as they are,
      // and nginx's gzip (on in the main configuration) would compress a 404 and add its Vary but for the site.
      const app = { ...bearer(petrova.identity), 'accept-encoding': 'gzip', 'x-request-id': 'ingress-h2-errors' }
      const unknown = await both(PROFILE, { ...app, ...bearer(unknownClient) })
      t.equal(unknown.ingress.status, 404)
      t.same(endToEnd(unknown.ingress.headers, COUNTERS), endToEnd(unknown.direct.headers, COUNTERS),
        'the instance\'s 404 headers')
      t.equal(unknown.ingress.body.toString(), unknown.direct.body.toString(), 'the same body, as JSON')

      const old = await both(PROFILE, { ...app, [APP_VERSION_HEADER]: '1.9.0' })
      t.equal(old.ingress.status, 426)
      t.same(endToEnd(old.ingress.headers), endToEnd(old.direct.headers), 'the instance\'s 426 headers')
      t.equal(old.ingress.body.toString(), old.direct.body.toString(), 'the same body')
      t.match(JSON.parse(old.ingress.body.toString()), { statusCode: 426 })

      let limited = await h2Get(session, PROFILE, app)
      for (let i = 0; i <= LIMIT && limited.status === 200; i++) limited = await h2Get(session, PROFILE, app)
      t.equal(limited.status, 429, `limited after ${LIMIT} a minute`)
      t.match(limited.headers['retry-after'], /^[1-9]\d*$/, 'Retry-After in seconds')
      const direct = await directGet(instance.url, PROFILE, app)
      t.equal(direct.status, 429)
      const clocks = ['retry-after', 'x-ratelimit-reset']
      t.same(endToEnd(limited.headers, clocks), endToEnd(direct.headers, clocks), 'the instance\'s 429 headers')
      t.equal(limited.body.toString(), direct.body.toString(), 'the same body')
    })
  })
}
