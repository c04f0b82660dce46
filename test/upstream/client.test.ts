// The upstream client against a MockAgent upstream: the wire request of each operation, the 307/308
// hops, the learned slash location, and every way an answer can fail (docs/upstream.md).
import t from 'tap'
import { inspect } from 'node:util'
import * as fx from '../../schemas/fixtures.ts'
import type { OperationName } from '../../schemas/operations.ts'
import { isUpstreamError, type FailureReason, type UpstreamError } from '../../src/upstream/errors.ts'
import { pickTracingHeaders, type TracingHeaders } from '../../src/upstream/transport/tracing-headers.ts'
import type { UpstreamClient } from '../../src/upstream/client.ts'
import { JSON_UTF8, KEYS, mockUpstream, ORIGIN, slashRedirect } from '../helpers/upstream-mock.ts'

interface Op { name: OperationName, path: string, key: string, params: Record<string, string>, answer: object }

const ops: Op[] = [
  {
    name: 'passport.get_client',
    path: '/bc_passport/get_client',
    key: KEYS.passport,
    params: fx.passportParams,
    answer: fx.passportFound
  },
  {
    name: 'dealer.discount',
    path: '/bc_api_web_service/discount',
    key: KEYS.dealer,
    params: fx.dealerParams,
    answer: fx.discountWithBonuses
  },
  {
    name: 'dealer.client',
    path: '/bc_api_web_service/client',
    key: KEYS.dealer,
    params: fx.dealerParams,
    answer: fx.contractorResult
  }
]
const passport = ops[0]!
const discount = ops[1]!
const contractor = ops[2]!

// The table loses the link between an operation's name and its params type; the fixtures are typed
// against their schemas in test/schemas/fixtures.test.ts.
type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const call = (client: UpstreamClient, op: Op, options?: Parameters<UpstreamClient['call']>[2]) =>
  client.call(op.name, op.params as never, options)
const exchange = (client: UpstreamClient, op: Op, options?: Parameters<UpstreamClient['exchange']>[2]) =>
  client.exchange(op.name, op.params as never, options)

// What a mobile caller's request carries: only the tracing headers may travel upstream.
const inbound = {
  host: 'bff.example.ru',
  authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
  cookie: 'session=abc123',
  'x-authorization': 'caller-supplied-key',
  'x-console-key': 'console-key-0123456789',
  'x-forwarded-for': '203.0.113.7',
  'content-type': 'application/json',
  'user-agent': 'DealerApp/3.14.2 (Android 14)',
  baggage: 'sentry-environment=production,sentry-release=3.14.2',
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  tracestate: 'rojo=00f067aa0ba902b7',
  'sentry-trace': '4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1',
  'x-trace-id': '4bf92f3577b34da6a3ce929d0e0e4736',
  'x-request-id': 'req-7f3a9c'
}
const tracing = {
  baggage: inbound.baggage,
  traceparent: inbound.traceparent,
  tracestate: inbound.tracestate,
  'sentry-trace': inbound['sentry-trace'],
  'x-trace-id': inbound['x-trace-id'],
  'x-request-id': inbound['x-request-id']
}

/** The failure a call rejects with, checked to be a typed upstream error with no key in it. */
async function failure (t: Test, promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(() => undefined, (err: unknown) => err)
  if (!isUpstreamError(error)) {
    t.fail('expected a typed upstream error', { error })
    throw new Error('not an upstream error')
  }
  assertNoKey(t, error)
  return error
}

function assertNoKey (t: Test, error: UpstreamError) {
  // The cause is the transport's own error, kept for logs; what we build must hold no key.
  const { cause: _cause, ...own } = error as UpstreamError & { cause?: unknown }
  const texts = [error.message, JSON.stringify(own), inspect(own, { depth: 10 }), String(error), error.stack ?? '']
  for (const key of Object.values(KEYS)) {
    t.notOk(texts.some(text => text.includes(key)), 'no key in the error, its serialization or its stack')
  }
}

async function rejects (t: Test, promise: Promise<unknown>, reason: FailureReason, statusCode: number, code: string) {
  const error = await failure(t, promise)
  t.equal(error.reason, reason, 'reason')
  t.equal(error.statusCode, statusCode, 'status')
  t.equal(error.code, code, 'code')
  return error
}

for (const op of ops) {
  t.test(`${op.name}: the exact wire request`, async t => {
    const up = mockUpstream(t)
    up.post(op.path).reply(200, op.answer, { headers: JSON_UTF8 })

    const result = await call(up.client, op, { headers: pickTracingHeaders(inbound) })

    t.equal(result.kind, 'ok')
    t.same(result.value, op.answer)
    const calls = up.calls()
    t.equal(calls.length, 1, 'one round trip')
    const [sent] = calls
    t.equal(sent?.method, 'POST')
    t.equal(sent?.origin, ORIGIN)
    t.equal(sent?.path, op.path)
    t.equal(sent?.body, JSON.stringify(op.params), 'the body is the JSON text of the params')
    t.strictSame(sent?.headers, {
      ...tracing,
      'content-type': 'application/x-www-form-urlencoded',
      'x-authorization': op.key
    }, 'the key with no prefix, the tracing headers and nothing else')
  })

  t.test(`${op.name}: only tracing headers travel, even when handed the raw inbound headers`, async t => {
    const up = mockUpstream(t)
    up.post(op.path).reply(200, op.answer, { headers: JSON_UTF8 })

    await call(up.client, op, { headers: inbound as TracingHeaders })

    t.strictSame(up.calls()[0]?.headers, {
      ...tracing,
      'content-type': 'application/x-www-form-urlencoded',
      'x-authorization': op.key
    })
  })

  for (const status of [307, 308]) {
    t.test(`${op.name}: a ${status} is followed with the same body and headers`, async t => {
      const up = mockUpstream(t)
      up.post(op.path).reply(...slashRedirect(op.path, status))
      up.post(`${op.path}/`).reply(200, op.answer, { headers: JSON_UTF8 })

      const result = await call(up.client, op, { headers: pickTracingHeaders(inbound) })

      t.equal(result.kind, 'ok')
      t.same(result.value, op.answer)
      t.strictSame(result.exchange.redirects, [{ status, location: `${op.path}/` }], 'the hop is recorded')
      t.equal(result.exchange.status, 200)
      const [first, second] = up.calls()
      t.equal(up.calls().length, 2)
      t.equal(second?.method, 'POST')
      t.equal(second?.path, `${op.path}/`)
      t.equal(second?.body, JSON.stringify(op.params))
      t.equal(second?.body, first?.body)
      t.strictSame(second?.headers, first?.headers)
      t.equal(second?.headers?.['x-authorization'], op.key)
    })
  }

  t.test(`${op.name}: the learned slash location is used next time`, async t => {
    const up = mockUpstream(t)
    up.post(op.path).reply(...slashRedirect(op.path))
    up.post(`${op.path}/`).reply(200, op.answer, { headers: JSON_UTF8 }).times(2)

    await call(up.client, op)
    const second = await call(up.client, op)

    t.equal(second.kind, 'ok')
    t.strictSame(second.exchange.redirects, [], 'no hop')
    t.strictSame(up.calls().map(c => c.path), [op.path, `${op.path}/`, `${op.path}/`], 'one round trip the second time')
  })
}

t.test('the learned location is kept per operation', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(...slashRedirect(passport.path))
  up.post(`${passport.path}/`).reply(200, passport.answer, { headers: JSON_UTF8 })
  up.post(discount.path).reply(200, discount.answer, { headers: JSON_UTF8 })

  await call(up.client, passport)
  const result = await call(up.client, discount)

  t.equal(result.kind, 'ok')
  t.equal(up.calls()[2]?.path, discount.path)
})

t.test('a 404 on the learned location falls back to the documented path', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(...slashRedirect(passport.path))
  up.post(`${passport.path}/`).reply(200, passport.answer, { headers: JSON_UTF8 })
  await call(up.client, passport)

  // The upstream stopped redirecting: the slash path is gone, the documented one answers.
  up.post(`${passport.path}/`).reply(404, 'Not Found', { headers: { 'content-type': 'text/html' } })
  up.post(passport.path).reply(200, passport.answer, { headers: JSON_UTF8 }).times(2)
  const moved = await call(up.client, passport)
  t.equal(moved.kind, 'ok')
  t.equal(moved.exchange.status, 200)
  t.strictSame(moved.exchange.redirects, [])

  await call(up.client, passport)
  t.strictSame(up.calls().map(c => c.path), [
    passport.path, `${passport.path}/`,
    `${passport.path}/`, passport.path,
    passport.path
  ], 'the stale location is forgotten')
})

t.test('a new redirect on the learned location falls back to the documented path, and a redirect ' +
  'elsewhere is never followed nor learned', async t => {
  const up = mockUpstream(t)
  const v2 = `/v2${contractor.path}/`
  up.post(contractor.path).reply(...slashRedirect(contractor.path))
  up.post(`${contractor.path}/`).reply(200, contractor.answer, { headers: JSON_UTF8 })
  await call(up.client, contractor)

  up.post(`${contractor.path}/`).reply(307, '', { headers: { location: v2 } })
  up.post(contractor.path).reply(307, '', { headers: { location: v2 } })
  const error = await rejects(t, call(up.client, contractor), 'redirect_invalid', 502, 'UPSTREAM_BAD_RESPONSE')
  t.strictSame(error.exchange.redirects, [{ status: 307, location: v2 }], 'the refused hop is recorded')

  t.strictSame(up.calls().map(c => c.path), [
    contractor.path, `${contractor.path}/`,
    `${contractor.path}/`, contractor.path
  ], 'v2 is never asked')

  // The upstream is itself again: the learned location was never wrong, so the next call takes one round trip.
  up.post(`${contractor.path}/`).reply(200, contractor.answer, { headers: JSON_UTF8 })
  const next = await call(up.client, contractor)
  t.equal(next.kind, 'ok')
  t.strictSame(next.exchange.redirects, [], 'no 307 round trip')
  t.equal(up.calls().at(-1)?.path, `${contractor.path}/`, 'the learned location is kept, v2 never learned')
})

t.test('a refused redirect of the fallback never erases the learned location', async t => {
  const up = mockUpstream(t)
  up.post(discount.path).reply(...slashRedirect(discount.path))
  up.post(`${discount.path}/`).reply(200, discount.answer, { headers: JSON_UTF8 })
  await call(up.client, discount)

  up.post(`${discount.path}/`).reply(404, 'Not Found', { headers: { 'content-type': 'text/html' } })
  up.post(discount.path).reply(307, '', { headers: { location: 'http://elsewhere.test/x' } })
  await rejects(t, call(up.client, discount), 'redirect_refused', 502, 'UPSTREAM_BAD_RESPONSE')

  up.post(`${discount.path}/`).reply(200, discount.answer, { headers: JSON_UTF8 })
  t.equal((await call(up.client, discount)).kind, 'ok')
  t.strictSame(up.calls().map(c => c.path), [
    discount.path, `${discount.path}/`,
    `${discount.path}/`, discount.path,
    `${discount.path}/`
  ], 'one round trip after the refused redirect')
})

t.test('the passport key reaches no other path: only the documented path plus a slash is followed', async t => {
  const sameOrigin = [
    '/bc_api_web_service/client/',
    '/bc_api_web_service/discount',
    `${ORIGIN}/bc_passport/other/`,
    '/bc_passport/get_client/?next=1',
    '/bc_passport/get_client//',
    '/bc_passport/'
  ]
  for (const location of sameOrigin) {
    t.test(location, async t => {
      const up = mockUpstream(t)
      up.post(passport.path).reply(307, '', { headers: { location } })
      const error = await rejects(t, call(up.client, passport), 'redirect_invalid', 502, 'UPSTREAM_BAD_RESPONSE')
      // Kept as sent, but for its query: the upstream's to write, so never logged.
      t.strictSame(error.exchange.redirects, [{ status: 307, location: location.split('?')[0] }])
      t.strictSame(up.calls().map(c => c.path), [passport.path], 'the key went to the documented path only')
    })
  }
})

t.test('a redirect to another origin is refused and the key never leaves', async t => {
  const elsewhere = [
    'http://evil.test/bc_passport/get_client/',
    '//evil.test/bc_passport/get_client/',
    'https://upstream.test/bc_passport/get_client/',
    'http://upstream.test:8080/bc_passport/get_client/'
  ]
  for (const location of elsewhere) {
    t.test(location, async t => {
      const up = mockUpstream(t)
      up.post(passport.path).reply(307, '', { headers: { location } })

      const error = await rejects(t, call(up.client, passport), 'redirect_refused', 502, 'UPSTREAM_BAD_RESPONSE')

      const { origin, pathname } = new URL(location, ORIGIN)
      t.strictSame(error.exchange.redirects, [{ status: 307, location: origin + pathname }], 'origin and path kept')
      t.strictSame(up.calls().map(c => c.origin), [ORIGIN], 'nothing was sent anywhere else')
    })
  }
})

t.test('a second redirect is a loop: the slash path redirecting again, to itself or back', async t => {
  for (const location of [`${discount.path}/`, discount.path]) {
    t.test(location, async t => {
      const up = mockUpstream(t)
      up.post(discount.path).reply(...slashRedirect(discount.path))
      up.post(`${discount.path}/`).reply(307, '', { headers: { location } })

      const error = await rejects(t, call(up.client, discount), 'redirect_loop', 502, 'UPSTREAM_BAD_RESPONSE')

      t.equal(up.calls().length, 2, 'the first POST and one hop')
      t.equal(error.exchange.redirects.length, 2, 'every redirect answer is recorded, the refused one too')
    })
  }
})

t.test('a redirect without a location, or one that would turn the POST into a GET, is refused', async t => {
  for (const [status, headers] of [[307, {}], [302, { location: `${discount.path}/` }],
    [303, { location: `${discount.path}/` }]] as const) {
    t.test(`${status}`, async t => {
      const up = mockUpstream(t)
      up.post(discount.path).reply(status, '', { headers })
      await rejects(t, call(up.client, discount), 'redirect_invalid', 502, 'UPSTREAM_BAD_RESPONSE')
      t.equal(up.calls().length, 1)
    })
  }
})

t.test('the deadline ends a slow exchange', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(200, passport.answer, { headers: JSON_UTF8 }).delay(2000)

  const error = await rejects(t, call(up.client, passport, { timeoutMs: 30 }), 'timeout', 504, 'UPSTREAM_TIMEOUT')

  t.equal(error.exchange.status, null, 'no answer arrived')
  t.equal(error.exchange.operation, 'passport.get_client')
})

t.test("the client's own timeout applies when the call gives none", async t => {
  const up = mockUpstream(t, { timeoutMs: 30 })
  up.post(discount.path).reply(200, discount.answer, { headers: JSON_UTF8 }).delay(2000)

  await rejects(t, call(up.client, discount), 'timeout', 504, 'UPSTREAM_TIMEOUT')
})

t.test('a call cannot extend the client timeout', async t => {
  const up = mockUpstream(t, { timeoutMs: 30 })
  up.post(discount.path).reply(200, discount.answer, { headers: JSON_UTF8 }).delay(2000)

  await rejects(t, call(up.client, discount, { timeoutMs: 60_000 }), 'timeout', 504, 'UPSTREAM_TIMEOUT')
})

t.test('one deadline covers every hop', async t => {
  const up = mockUpstream(t)
  // Each answer comes well inside the deadline, the two together do not.
  up.post(contractor.path).reply(...slashRedirect(contractor.path)).delay(50)
  up.post(`${contractor.path}/`).reply(200, contractor.answer, { headers: JSON_UTF8 }).delay(50)

  const error = await rejects(t, call(up.client, contractor, { timeoutMs: 80 }), 'timeout', 504, 'UPSTREAM_TIMEOUT')

  t.strictSame(error.exchange.redirects, [{ status: 307, location: `${contractor.path}/` }])
})

t.test('a remaining budget that is fractional or spent is a timeout, not a crash', async t => {
  for (const timeoutMs of [25.5, 0, -3]) {
    t.test(String(timeoutMs), async t => {
      const up = mockUpstream(t)
      up.post(discount.path).reply(200, discount.answer, { headers: JSON_UTF8 }).delay(2000)
      await rejects(t, call(up.client, discount, { timeoutMs }), 'timeout', 504, 'UPSTREAM_TIMEOUT')
    })
  }
})

t.test("the caller's signal ends the exchange as aborted", async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(200, passport.answer, { headers: JSON_UTF8 }).delay(2000)
  const budget = new AbortController()
  setTimeout(() => budget.abort(), 10)

  await rejects(t, call(up.client, passport, { signal: budget.signal }), 'aborted', 504, 'UPSTREAM_TIMEOUT')
})

t.test('a 5xx is a bad response', async t => {
  for (const [status, body, headers] of [
    [500, '<html><body>Internal Server Error</body></html>', { 'content-type': 'text/html' }],
    [503, { success: false, message: 'Сервис недоступен' }, JSON_UTF8]
  ] as const) {
    t.test(String(status), async t => {
      const up = mockUpstream(t)
      up.post(contractor.path).reply(status, body, { headers })

      const error = await rejects(t, call(up.client, contractor), 'status', 502, 'UPSTREAM_BAD_RESPONSE')
      t.equal(error.exchange.status, status)

      up.post(contractor.path).reply(status, body, { headers })
      const ex = await exchange(up.client, contractor)
      t.equal(ex.outcome, 'status')
      t.equal(ex.status, status)
      t.equal(ex.contract.valid, false)
    })
  }
})

t.test('an answer that is not JSON is a bad response', async t => {
  for (const headers of [{ 'content-type': 'text/html; charset=utf-8' }, { 'content-type': 'application/jsonp' }, {}]) {
    t.test(JSON.stringify(headers), async t => {
      const up = mockUpstream(t)
      up.post(discount.path).reply(200, JSON.stringify(discount.answer), { headers })
      await rejects(t, call(up.client, discount), 'content_type', 502, 'UPSTREAM_BAD_RESPONSE')
    })
  }
})

t.test('an answer labelled JSON that does not parse is a bad response', async t => {
  const up = mockUpstream(t)
  up.post(discount.path).reply(200, '{"success": false, "message": "Бонусы', { headers: JSON_UTF8 })

  await rejects(t, call(up.client, discount), 'json', 502, 'UPSTREAM_BAD_RESPONSE')
})

t.test('an answer that breaks the schema is a bad response naming the broken fields', async t => {
  const cases: Array<[Op, object, string]> = [
    [passport, { ...fx.passportFound, client: { ...fx.client, uid_client: 'not-a-uuid' } }, '/client/uid_client'],
    [discount, { ...fx.discountNone, success: 'false' }, '/success'],
    [contractor, { ...fx.contractorResult, data: { ...fx.contractor, contacts: [{ ...fx.contact, is_main: 'да' }] } },
      '/data/contacts/0/is_main']
  ]
  for (const [op, body, path] of cases) {
    t.test(op.name, async t => {
      const up = mockUpstream(t)
      up.post(op.path).reply(200, body, { headers: JSON_UTF8 }).times(2)

      const ex = await exchange(up.client, op)
      t.equal(ex.outcome, 'contract')
      t.equal(ex.status, 200)
      t.equal(ex.contract.valid, false)
      t.ok(ex.contract.errors.some(e => e.path === path), `the errors name ${path}`)
      t.same(ex.body, body, 'the answer is kept for the console')

      const error = await rejects(t, call(up.client, op), 'contract', 502, 'UPSTREAM_BAD_RESPONSE')
      t.ok(error.exchange.contract?.errors.some(e => e.path === path), 'the error carries the contract errors')
    })
  }
})

t.test('an answer bigger than the cap is refused', async t => {
  const big = JSON.stringify({ ...fx.discountNone, message: 'Б'.repeat(1024) })
  for (const declared of [true, false]) {
    t.test(declared ? 'with content-length' : 'without content-length', async t => {
      const up = mockUpstream(t, { maxBodyBytes: 1024 })
      const headers = declared ? { ...JSON_UTF8, 'content-length': String(Buffer.byteLength(big)) } : JSON_UTF8
      up.post(discount.path).reply(200, big, { headers })

      const error = await rejects(t, call(up.client, discount), 'too_large', 502, 'UPSTREAM_BAD_RESPONSE')
      t.equal(error.exchange.status, 200)
    })
  }

  t.test('an answer at the cap is read', async t => {
    const exact = JSON.stringify(fx.discountNone)
    const up = mockUpstream(t, { maxBodyBytes: Buffer.byteLength(exact) })
    up.post(discount.path).reply(200, exact, { headers: JSON_UTF8 })
    t.equal((await call(up.client, discount)).kind, 'ok')
  })
})

t.test('passport: 400 CLIENT_NOT_FOUND is a typed not-found', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(...slashRedirect(passport.path))
  up.post(`${passport.path}/`).reply(400, fx.passportNotFound, { headers: JSON_UTF8 })

  const result = await up.client.call('passport.get_client', fx.UNKNOWN)

  t.equal(result.kind, 'not_found')
  t.strictSame(result.value, fx.passportNotFound)
  t.equal(result.exchange.status, 400)
  t.equal(result.exchange.outcome, 'not_found')
  t.strictSame(result.exchange.contract, { valid: true, errors: [] })
})

t.test('passport: a 400 that is not CLIENT_NOT_FOUND is a bad response', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(400, { success: false, message: 'Неверные параметры запроса', msg_code: 'BAD_PARAMS' },
    { headers: JSON_UTF8 })

  const error = await rejects(t, call(up.client, passport), 'contract', 502, 'UPSTREAM_BAD_RESPONSE')
  t.ok(error.exchange.contract?.errors.some(e => e.path === '/msg_code'))
})

t.test('dealer: a 400 is not an answer', async t => {
  const up = mockUpstream(t)
  up.post(contractor.path).reply(400, fx.passportNotFound, { headers: JSON_UTF8 })

  await rejects(t, call(up.client, contractor), 'status', 502, 'UPSTREAM_BAD_RESPONSE')
})

t.test('discount: success false with data null is a normal answer', async t => {
  const up = mockUpstream(t)
  up.post(discount.path).reply(200, fx.discountNone, { headers: JSON_UTF8 })

  const result = await up.client.call('dealer.discount', fx.dealerParams)

  t.equal(result.kind, 'ok')
  t.strictSame(result.value, fx.discountNone)
})

t.test('an exchange record never holds a key', async t => {
  const up = mockUpstream(t)
  up.post(passport.path).reply(...slashRedirect(passport.path))
  up.post(`${passport.path}/`).reply(500, 'Internal Server Error', { headers: { 'content-type': 'text/plain' } })

  const ex = await exchange(up.client, passport)

  t.equal(ex.outcome, 'status')
  const text = JSON.stringify(ex) + inspect(ex, { depth: 10 })
  t.notOk(text.includes(KEYS.passport) || text.includes(KEYS.dealer))
})

t.test('the observer hears every ended exchange: answers, failures and hops, never params or keys', async t => {
  const events: unknown[] = []
  const up = mockUpstream(t, { observer: { exchange: event => { events.push(event) } } })
  up.post(passport.path).reply(...slashRedirect(passport.path))
  up.post(`${passport.path}/`).reply(200, fx.passportFound, { headers: JSON_UTF8 })
  up.post(`${passport.path}/`).reply(200, { ...fx.passportFound, uid_client: 'not-a-uuid' }, { headers: JSON_UTF8 })
  up.post(discount.path).reply(503, 'busy', { headers: { 'content-type': 'text/plain' } })
  await call(up.client, passport)
  await exchange(up.client, passport)
  await call(up.client, discount).catch(() => {})
  t.match(events, [
    { operation: 'passport.get_client', outcome: 'ok', status: 200, hops: 1, contractErrors: [] },
    {
      operation: 'passport.get_client',
      outcome: 'contract',
      status: 200,
      hops: 0,
      contractErrors: [{ path: '/uid_client' }]
    },
    { operation: 'dealer.discount', outcome: 'status', status: 503, hops: 0 }
  ])
  t.equal(events.length, 3, 'one event per exchange')
  const text = JSON.stringify(events)
  t.notMatch(text, fx.IVANOV.login, 'no params')
  for (const key of Object.values(KEYS)) t.notOk(text.includes(key), 'no key')
})

t.test('the observer hears exchanges that got no answer, with their reason', async t => {
  const events: Array<{ outcome: string, status: number | null }> = []
  const up = mockUpstream(t, { timeoutMs: 30, observer: { exchange: event => { events.push(event) } } })
  up.post(contractor.path).reply(200, fx.contractorResult, { headers: JSON_UTF8 }).delay(200)
  await call(up.client, contractor).catch(() => {})
  t.match(events, [{ outcome: 'timeout', status: null }])
})

/** `[[[...]]]` nested `levels` deep, as JSON text. */
const nested = (levels: number, inner = '') => `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`
const DEEP = 200_000

t.test('an answer nested too deep where it is passed on is a bad response, kept as text', async t => {
  const cases: Array<[Op, string]> = [
    [discount, `{"success":true,"message":"","data":{"bonuses":${nested(DEEP)}}}`],
    [contractor, JSON.stringify(fx.contractorResult).replace('"last_dealer":null',
      `"last_dealer":{"x":${nested(DEEP)}}`)],
    [contractor, JSON.stringify(fx.contractorResult).replace('"contact_persons":[]',
      `"contact_persons":[${nested(DEEP)}]`)],
    [passport, JSON.stringify(fx.passportFound).replace('"cookies":[]', `"cookies":[${nested(DEEP)}]`)]
  ]
  for (const [op, text] of cases) {
    t.test(op.name, async t => {
      t.not(text, JSON.stringify(op.answer), 'the hostile value is in place')
      const up = mockUpstream(t)
      up.post(op.path).reply(200, text, { headers: JSON_UTF8 }).times(2)

      const ex = await exchange(up.client, op)
      t.equal(ex.outcome, 'too_deep')
      t.equal(ex.body, text, 'the console gets the text, safe to redact and serialize')
      t.strictSame(ex.contract,
        { valid: false, errors: [{ path: '/', message: 'nests objects or arrays deeper than 64 levels' }] })

      await rejects(t, call(up.client, op), 'too_deep', 502, 'UPSTREAM_BAD_RESPONSE')
    })
  }
})

t.test('nesting up to the limit is served; undescribed extra fields are bounded only for the console', async t => {
  const up = mockUpstream(t)
  // 62 arrays inside data (depth 1) inside the answer: 63 levels below the root, 64 with the innermost.
  const atLimit = `{"success":true,"message":"","data":{"b":${nested(62)}}}`
  up.post(discount.path).reply(200, atLimit, { headers: JSON_UTF8 })
  t.equal((await call(up.client, discount)).kind, 'ok')

  // A deep field the passport schema does not name: dropped by the profile's serializer, so the profile
  // path does not pay for scanning it; the console, which shows every field, refuses to recurse into it.
  const extra = JSON.stringify(fx.passportFound).replace(/}$/, `,"extra":${nested(DEEP)}}`)
  up.post(passport.path).reply(200, extra, { headers: JSON_UTF8 }).times(2)
  t.equal((await call(up.client, passport)).kind, 'ok')
  const ex = await exchange(up.client, passport, { breaker: false, wholeBodyDepth: true })
  t.equal(ex.outcome, 'too_deep')
  t.equal(ex.body, extra)
})

t.test('contract errors are capped: the first 20, found at about the cost of the check', async t => {
  const up = mockUpstream(t)
  // 450,000 numbers where breadcrumbs belong, about 900 KB: TypeBox's own error walk visits every one.
  const hostile = { ...fx.passportFound, catalog_cars_view: new Array(450_000).fill(1) }
  up.post(passport.path).reply(200, hostile, { headers: JSON_UTF8 })

  const ex = await exchange(up.client, passport)
  t.equal(ex.outcome, 'contract')
  t.equal(ex.contract.errors.length, 20)
  t.strictSame(ex.contract.errors.slice(0, 2), [
    { path: '/catalog_cars_view/0', message: 'must be object' },
    { path: '/catalog_cars_view/1', message: 'must be object' }
  ])
  t.equal(up.client.contracts['passport.get_client'].response.errors(hostile, 1000).length, 20,
    'no caller can raise the cap')

  // The work stops with the cap: items past the first violations are never looked at.
  const watched = new Array<unknown>(10_000).fill(1)
  let visited = 0
  for (let i = 100; i < watched.length; i++) {
    Object.defineProperty(watched, i, { get: () => { visited++; return 1 }, enumerable: true })
  }
  up.client.contracts['passport.get_client'].response.errors({ ...fx.passportFound, catalog_cars_view: watched })
  t.equal(visited, 0, 'no item past the first violations was read')
})
