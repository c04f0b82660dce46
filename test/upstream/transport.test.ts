// The upstream client over real sockets, where MockAgent cannot show the truth: what reaches the
// wire, a cross-origin hop that must never carry the key, a refused connection, a body that streams
// past the cap, and a deadline that ends a stalled body.
import t from 'tap'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as fx from '../../schemas/fixtures.ts'
import { createUpstreamClient, type UpstreamClientOptions } from '../../src/upstream/client.ts'
import { isUpstreamError } from '../../src/upstream/errors.ts'
import { pickTracingHeaders } from '../../src/upstream/transport/tracing-headers.ts'
import { KEYS } from '../helpers/upstream-mock.ts'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

interface Received { method?: string, url?: string, headers: IncomingMessage['headers'], body: string }

/** A port-0 server that records every request it gets; closed with the test. */
async function upstream (t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', chunk => { body += chunk })
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body })
      handle(req, res)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { origin, received }
}

function client (t: Test, options: Partial<UpstreamClientOptions> & { baseUrl: string }) {
  const c = createUpstreamClient({ keys: { ...KEYS }, timeoutMs: 2000, ...options })
  t.teardown(() => c.close())
  return c
}

async function reason (promise: Promise<unknown>) {
  const error = await promise.then(() => undefined, (err: unknown) => err)
  if (!isUpstreamError(error)) throw new Error(`expected an upstream error, got ${String(error)}`)
  return error
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body))
}

t.test('the wire request carries the body, the key and the tracing headers, nothing else', async t => {
  const up = await upstream(t, (req, res) => {
    if (!req.url?.endsWith('/')) {
      return res.writeHead(307,
        { location: `${req.url}/`, 'content-type': 'text/html' }).end('<html></html>')
    }
    json(res, 200, fx.contractorResult)
  })
  const c = client(t, { baseUrl: up.origin })
  const inbound = {
    host: 'bff.example.ru',
    authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln',
    cookie: 'session=abc123',
    baggage: 'sentry-environment=production',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'x-request-id': 'req-7f3a9c'
  }

  const result = await c.call('dealer.client', fx.dealerParams, { headers: pickTracingHeaders(inbound) })

  t.equal(result.kind, 'ok')
  t.equal(up.received.length, 2)
  for (const [i, path] of ['/bc_api_web_service/client', '/bc_api_web_service/client/'].entries()) {
    const got = up.received[i]!
    t.equal(got.method, 'POST')
    t.equal(got.url, path)
    t.equal(got.body, JSON.stringify(fx.dealerParams))
    t.equal(got.headers['content-type'], 'application/x-www-form-urlencoded')
    t.equal(got.headers['x-authorization'], KEYS.dealer)
    t.equal(got.headers.baggage, inbound.baggage)
    t.equal(got.headers.traceparent, inbound.traceparent)
    t.equal(got.headers['x-request-id'], inbound['x-request-id'])
    t.equal(got.headers.host, new URL(up.origin).host, 'the upstream host, not the inbound one')
    t.strictSame(Object.keys(got.headers).sort(), [
      'baggage', 'connection', 'content-length', 'content-type', 'host', 'traceparent', 'x-authorization',
      'x-request-id'
    ])
  }
})

t.test('a redirect to another origin is refused before anything is sent there', async t => {
  const other = await upstream(t, (_req, res) => json(res, 200, fx.passportFound))
  const up = await upstream(t, (req, res) => {
    res.writeHead(307, { location: `${other.origin}${req.url}/` }).end()
  })
  const c = client(t, { baseUrl: up.origin })

  const error = await reason(c.call('passport.get_client', fx.passportParams))

  t.equal(error.reason, 'redirect_refused')
  t.equal(error.statusCode, 502)
  t.equal(up.received.length, 1)
  t.equal(other.received.length, 0, 'the other origin never saw a request, nor the key')
})

t.test('a refused connection is unavailable', async t => {
  // A port that was just free: nothing listens there.
  const closed = createServer()
  await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise(resolve => closed.close(resolve))
  const c = client(t, { baseUrl: `http://127.0.0.1:${port}` })

  const error = await reason(c.call('dealer.discount', fx.dealerParams))

  t.equal(error.reason, 'connect')
  t.equal(error.statusCode, 503)
  t.equal(error.code, 'UPSTREAM_UNAVAILABLE')
  t.equal(error.exchange.status, null)
  t.notOk(error.message.includes(String(port)), 'the message names the operation, not the address')
})

t.test('a body streaming past the cap is cut off while it is read', async t => {
  // The answer never ends: only a cap enforced while reading can stop it before the deadline.
  const up = await upstream(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
    res.write(`{"success":false,"message":"${'x'.repeat(4096)}`)
  })
  const c = client(t, { baseUrl: up.origin, maxBodyBytes: 2048, timeoutMs: 1000 })

  const error = await reason(c.call('dealer.discount', fx.dealerParams))

  t.equal(error.reason, 'too_large')
  t.equal(error.statusCode, 502)
})

// Both ways an answer can be framed take their own reading path: a declared length (read by undici, which
// checks the length) and chunks (counted while read).
const framings = {
  'with a declared length': { 'content-length': '64' },
  chunked: {}
}

for (const [framing, headers] of Object.entries(framings)) {
  t.test(`the deadline ends an answer whose body stalls, ${framing}`, async t => {
    const up = await upstream(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...headers })
      res.write('{"success":false,')
    })
    const c = client(t, { baseUrl: up.origin, timeoutMs: 100 })

    const error = await reason(c.call('dealer.discount', fx.dealerParams))

    t.equal(error.reason, 'timeout')
    t.equal(error.statusCode, 504)
    t.equal(error.exchange.status, 200, 'the headers had arrived')
  })

  t.test(`an answer cut off in its body is no answer, ${framing}`, async t => {
    const up = await upstream(t, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...headers })
      res.write('{"success":false,', () => { res.socket?.destroy() })
    })
    const c = client(t, { baseUrl: up.origin, timeoutMs: 2000 })

    const error = await reason(c.call('dealer.discount', fx.dealerParams))

    t.equal(error.reason, 'connect', 'the upstream did not deliver its answer')
    t.equal(error.statusCode, 503)
    t.equal(error.exchange.status, 200, 'the headers had arrived')
    t.equal(up.received.length, 1, 'never sent again: an answer had begun')
  })
}

t.test("a redirect's long body does not stop the hop (response-reader.test.ts: it is not read through)", async t => {
  const up = await upstream(t, (req, res) => {
    if (!req.url?.endsWith('/')) {
      // Chunked and far past what is read of a redirect's body (64 KiB).
      res.writeHead(307, { location: `${req.url}/`, 'content-type': 'text/html' })
      res.end('<p>moved</p>'.repeat(16 * 1024))
      return
    }
    json(res, 200, fx.discountWithBonuses)
  })
  const c = client(t, { baseUrl: up.origin })

  const result = await c.call('dealer.discount', fx.dealerParams)

  t.equal(result.kind, 'ok')
  t.strictSame(result.exchange.redirects, [{ status: 307, location: '/bc_api_web_service/discount/' }])
  t.equal(up.received.length, 2)
})

t.test('a deadline that passes while the call waits for a connection ends it there', async t => {
  // One connection, held by a call the upstream never answers: the second call can only wait in the pool.
  const up = await upstream(t, () => {})
  const c = client(t, { baseUrl: up.origin, connections: 1, timeoutMs: 2000 })
  let firstSettled = false
  const first = reason(c.call('dealer.discount', fx.dealerParams)).finally(() => { firstSettled = true })

  const error = await reason(c.call('dealer.client', fx.dealerParams, { timeoutMs: 50 }))

  t.equal(error.reason, 'timeout')
  t.equal(error.exchange.status, null)
  t.notOk(firstSettled, 'failed while the connection was still taken, not once it freed up')
  t.equal(up.received.length, 1, 'the waiting call was never sent')
  t.equal((await first).reason, 'timeout')
})

for (const [framing, length] of Object.entries({ 'with a declared length': true, chunked: false })) {
  t.test(`an answer that starts with a byte order mark is read as its JSON, ${framing}`, async t => {
    // RFC 8259 section 8.1: a JSON text must not begin with one, and a reader may ignore it.
    const body = Buffer.concat([Buffer.from([0xEF, 0xBB, 0xBF]), Buffer.from(JSON.stringify(fx.discountWithBonuses))])
    const up = await upstream(t, (_req, res) => {
      res.writeHead(200,
        {
          'content-type': 'application/json; charset=utf-8',
          ...(length ? { 'content-length': String(body.length) } : {})
        })
      res.end(body)
    })
    const c = client(t, { baseUrl: up.origin })

    const result = await c.call('dealer.discount', fx.dealerParams)

    t.equal(result.kind, 'ok')
    t.strictSame(result.value, fx.discountWithBonuses)
  })
}
