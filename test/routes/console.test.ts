// POST /request-console (docs/api.md) against a MockAgent upstream: the exact wire
// request of each operation, the exchange shown as data whatever the upstream answered, the errors of
// the console itself, and no key in any answer.
import { createHash } from 'node:crypto'
import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import * as fx from '../../schemas/fixtures.ts'
import { consoleRequestVariants } from '../../schemas/console.ts'
import { operationNames, type OperationName } from '../../schemas/operations.ts'
import { consoleOperatorCheck } from '../../src/auth/key-check.ts'
import {
  buildTestApp, configProblems, CONSOLE_KEY, DEALER_KEY, PASSPORT_KEY,
  type TestApp
} from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

const SECRETS = [PASSPORT_KEY, DEALER_KEY, CONSOLE_KEY]
const JSON_UTF8 = { 'content-type': 'application/json; charset=utf-8' }
const HTML = { 'content-type': 'text/html' }

interface Op { name: OperationName, path: string, key: string, params: Record<string, string>, answer: object }

const ops: Op[] = [
  {
    name: 'passport.get_client',
    path: '/bc_passport/get_client',
    key: PASSPORT_KEY,
    params: fx.passportParams,
    answer: fx.passportFound
  },
  {
    name: 'dealer.discount',
    path: '/bc_api_web_service/discount',
    key: DEALER_KEY,
    params: fx.dealerParams,
    answer: fx.discountWithBonuses
  },
  {
    name: 'dealer.client',
    path: '/bc_api_web_service/client',
    key: DEALER_KEY,
    params: fx.dealerParams,
    answer: fx.contractorResult
  }
]
const [passport, discount, contractor] = ops as [Op, Op, Op]

const tracing = {
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  baggage: 'sentry-environment=production',
  'x-request-id': 'console-req-7f3a9c'
}

/**
 * What the upstream must receive: the operation's own key and nothing of the caller's credentials,
 * the form content type, and the tracing headers. A request that differs matches no interceptor and
 * the MockAgent refuses it, so the console answers 503 instead of 200.
 */
function wireHeaders (key: string, expectTracing = true) {
  return (headers: Record<string, string>) =>
    headers['x-authorization'] === key &&
    headers['content-type'] === 'application/x-www-form-urlencoded' &&
    headers['x-console-key'] === undefined &&
    headers.authorization === undefined &&
    (!expectTracing || Object.entries(tracing).every(([name, value]) => headers[name] === value))
}

/** Intercepts one POST of `op` at `path` whose headers and body text are exactly what the client must send. */
function expectCall (up: TestApp, op: Op, path = op.path, expectTracing = true) {
  return up.upstream.intercept({
    path,
    method: 'POST',
    headers: wireHeaders(op.key, expectTracing),
    body: JSON.stringify(op.params)
  })
}

async function consoleApp (t: Test, env: Record<string, string | undefined> = {}): Promise<TestApp> {
  const up = await buildTestApp(t, env)
  up.agent.disableNetConnect()
  return up
}

/** A console request; every answer is checked to carry no key, whatever the test asserts next. */
async function send (
  t: Test, up: TestApp, payload: unknown, headers: Record<string, string> = { 'x-console-key': CONSOLE_KEY }
): Promise<LightMyRequestResponse> {
  const res = await up.app.inject({
    method: 'POST',
    url: '/request-console',
    headers,
    ...(typeof payload === 'string' ? { payload } : { payload: payload as object })
  })
  const text = JSON.stringify(res.headers) + res.body
  for (const secret of SECRETS) t.notOk(text.includes(secret), 'no key in the answer or its headers')
  t.ok(res.headers['x-request-id'], 'the answer carries x-request-id')
  return res
}

const runOp = (op: Op) => ({ operation: op.name, params: op.params })

function errorBody (t: Test, res: LightMyRequestResponse, statusCode: number, code: string) {
  t.equal(res.statusCode, statusCode, res.body)
  const body = res.json()
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'])
  t.match(body, { statusCode, code, error: String, message: String })
  return body as { message: string }
}

t.test('each operation: the exact wire request, the 307 hop, and the exchange as the answer', async t => {
  for (const op of ops) {
    t.test(op.name, async t => {
      const up = await consoleApp(t)
      expectCall(up, op).reply(307, '<html><body>Temporary Redirect</body></html>',
        { headers: { location: `${op.path}/`, ...HTML } })
      expectCall(up, op, `${op.path}/`).reply(200, op.answer, { headers: JSON_UTF8 })

      const res = await send(t, up, runOp(op), { 'x-console-key': CONSOLE_KEY, ...tracing })
      t.equal(res.statusCode, 200, res.body)
      t.equal(res.headers['x-request-id'], tracing['x-request-id'])
      const answer = res.json()
      t.same(Object.keys(answer).sort(), ['body', 'contract', 'duration_ms', 'operation', 'redirects', 'status'])
      t.equal(answer.operation, op.name)
      t.equal(answer.status, 200)
      t.same(answer.redirects, [{ status: 307, location: `${op.path}/` }])
      t.type(answer.duration_ms, 'number')
      t.ok(answer.duration_ms >= 0)
      t.same(answer.contract, { valid: true, errors: [] })
      t.same(answer.body, op.answer, 'the upstream body as received')
      up.agent.assertNoPendingInterceptors()
    })
  }
})

t.test('the generated request id travels upstream when the caller sends none', async t => {
  const up = await consoleApp(t)
  let seen: string | undefined
  up.upstream.intercept({
    path: `${discount.path}/`,
    method: 'POST',
    headers: (headers: Record<string, string>) => {
      seen = headers['x-request-id']
      return wireHeaders(DEALER_KEY, false)(headers)
    }
  }).reply(200, fx.discountNone, { headers: JSON_UTF8 })
  up.upstream.intercept({ path: discount.path, method: 'POST' }).reply(307, '',
    { headers: { location: `${discount.path}/` } })

  const res = await send(t, up, runOp(discount))
  t.equal(res.statusCode, 200, res.body)
  t.equal(seen, res.headers['x-request-id'])
  t.same(res.json().body, fx.discountNone, 'no bonuses is an answer like any other')
})

t.test('an upstream error status is data, not a console error', async t => {
  t.test('passport 400 CLIENT_NOT_FOUND is the documented not-found answer', async t => {
    const up = await consoleApp(t)
    expectCall(up, passport, passport.path, false).reply(400, fx.passportNotFound, { headers: JSON_UTF8 })
    const res = await send(t, up, runOp(passport))
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json(), {
      operation: passport.name,
      status: 400,
      redirects: [],
      contract: { valid: true, errors: [] },
      body: fx.passportNotFound
    })
  })

  t.test('an upstream 500 is shown with contract.valid false and its text body', async t => {
    const up = await consoleApp(t)
    expectCall(up, contractor, contractor.path, false).reply(500, '<html><body>Internal Server Error</body></html>',
      { headers: HTML })
    const res = await send(t, up, runOp(contractor))
    t.equal(res.statusCode, 200, res.body)
    const answer = res.json()
    t.equal(answer.status, 500)
    t.equal(answer.contract.valid, false)
    t.same(answer.contract.errors, [{ path: '/', message: 'HTTP 500 is not an answer of dealer.client' }])
    t.equal(answer.body, '<html><body>Internal Server Error</body></html>')
  })

  t.test('a body that breaks the schema lists each violation by path', async t => {
    const up = await consoleApp(t)
    const { name: _dropped, ...withoutName } = fx.contractor
    const broken = { ...fx.contractorResult, data: { ...withoutName, id: 'not-a-uuid', contacts: 'none' } }
    expectCall(up, contractor, contractor.path, false).reply(200, broken, { headers: JSON_UTF8 })
    const res = await send(t, up, runOp(contractor))
    t.equal(res.statusCode, 200, res.body)
    const answer = res.json()
    t.equal(answer.status, 200)
    t.equal(answer.contract.valid, false)
    const paths = answer.contract.errors.map((e: { path: string }) => e.path)
    t.ok(paths.includes('/data/id'), `the bad id is named: ${paths.join(' ')}`)
    t.ok(paths.includes('/data/contacts'), 'the bad contacts are named')
    t.ok(paths.some((p: string) => p === '/data' || p === '/data/name'), 'the missing name is named')
    for (const error of answer.contract.errors) t.match(error, { path: String, message: String })
    t.same(answer.body, broken, 'the body is shown as received')
  })

  t.test('a key the upstream echoes back is redacted', async t => {
    const up = await consoleApp(t)
    expectCall(up, passport, passport.path, false)
      .reply(403, { success: false, message: `unknown key ${PASSPORT_KEY}`, [PASSPORT_KEY]: [DEALER_KEY] },
        { headers: JSON_UTF8 })
    const res = await send(t, up, runOp(passport))
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().body, { success: false, message: 'unknown key [redacted]', '[redacted]': ['[redacted]'] })
  })

  t.test('a key echoed percent- or HTML-encoded is redacted too', async t => {
    const percentAll = [...PASSPORT_KEY].map(c => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')
    const htmlAll = [...PASSPORT_KEY].map(c => `&#${c.charCodeAt(0)};`).join('')
    const htmlHex = [...DEALER_KEY].map(c => `&#x${c.charCodeAt(0).toString(16)};`).join('')
    const doubled = percentAll.replaceAll('%', '%25')
    const echoes = [`https://upstream.example/login?key=${percentAll}`, `<p>key: ${htmlAll}</p>`, htmlHex, doubled]
    const up = await consoleApp(t)
    expectCall(up, passport, passport.path, false)
      .reply(403, { success: false, message: 'bad key', echoes, [percentAll]: 1 }, { headers: JSON_UTF8 })
    const res = await send(t, up, runOp(passport))
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().body, {
      success: false,
      message: 'bad key',
      echoes: ['[redacted]', '[redacted]', '[redacted]', '[redacted]'],
      '[redacted]': 1
    })
    for (const echo of [percentAll, htmlAll, htmlHex]) t.notOk(res.body.includes(echo), 'no encoded key in the answer')
    t.ok(res.body.includes('bad key'), 'the rest is shown')
  })

  t.test('the content type quoted in a contract message is redacted', async t => {
    const up = await consoleApp(t)
    expectCall(up, passport, passport.path, false).reply(200, 'nope',
      { headers: { 'content-type': `text/plain; key=${PASSPORT_KEY}` } })
    const res = await send(t, up, runOp(passport))
    t.equal(res.statusCode, 200, res.body)
    t.strictSame(res.json().contract.errors,
      [{ path: '/', message: 'content type text/plain; key=[redacted] is not application/json' }])
  })

  t.test('percent signs and ampersands without a key are shown as received', async t => {
    const up = await consoleApp(t)
    const body = { success: false, message: '100% sure & done: %41 &amp; &#65;' }
    expectCall(up, passport, passport.path, false).reply(403, body, { headers: JSON_UTF8 })
    const res = await send(t, up, runOp(passport))
    t.same(res.json().body, body)
  })
})

t.test('an exchange that got no answer is the console\'s own error', async t => {
  t.test('timeout: 504 UPSTREAM_TIMEOUT', async t => {
    const up = await consoleApp(t, { UPSTREAM_TIMEOUT_MS: '50' })
    expectCall(up, discount, discount.path, false).reply(200, fx.discountNone, { headers: JSON_UTF8 }).delay(2000)
    const res = await send(t, up, runOp(discount))
    errorBody(t, res, 504, 'UPSTREAM_TIMEOUT')
  })

  t.test('unreachable: 503 UPSTREAM_UNAVAILABLE', async t => {
    const up = await consoleApp(t)
    up.upstream.intercept({ path: discount.path, method: 'POST' }).replyWithError(new Error('connect ECONNREFUSED'))
    const res = await send(t, up, runOp(discount))
    errorBody(t, res, 503, 'UPSTREAM_UNAVAILABLE')
  })

  t.test('a redirect to another origin: 502 UPSTREAM_BAD_RESPONSE, the key never leaves', async t => {
    const up = await consoleApp(t)
    expectCall(up, passport, passport.path, false).reply(307, '', { headers: { location: 'http://elsewhere.test/bc_passport/get_client/' } })
    const res = await send(t, up, runOp(passport))
    const body = errorBody(t, res, 502, 'UPSTREAM_BAD_RESPONSE')
    t.notMatch(body.message, /elsewhere|http:/, 'no upstream URL in the message')
    up.agent.assertNoPendingInterceptors()
  })
})

t.test('bad bodies are 400 BAD_REQUEST naming the field, and nothing goes upstream', async t => {
  const up = await consoleApp(t)
  const cases: Array<[string, unknown, RegExp]> = [
    ['unknown operation', { operation: 'passport.delete_client', params: {} }, /^body\/operation must be one of passport\.get_client, dealer\.discount, dealer\.client$/],
    ['missing operation', { params: fx.dealerParams }, /^body\/operation must be one of/],
    ['extra property in the body', { ...runOp(discount), verbose: true }, /^body\/verbose is not allowed$/],
    ['extra property in params', { operation: discount.name, params: { ...fx.dealerParams, login: fx.IVANOV.login } }, /^body\/params\/login is not allowed$/],
    ['bad uuid', { operation: contractor.name, params: { uid_client: 'not-a-uuid' } }, /^body\/params\/uid_client must match format "uuid"$/],
    ['bad login', { operation: passport.name, params: { ...fx.passportParams, login: '+7 916' } }, /^body\/params\/login must match pattern/],
    ['missing params', { operation: passport.name }, /^body must have required properties params$/],
    ['missing param', { operation: passport.name, params: { vendor: 'kia', uid_client: fx.IVANOV.uid_client } }, /^body\/params must have required properties login$/],
    ['not an object', [runOp(discount)], /^body must be an object with operation and params$/],
    ['not JSON', '{"operation":', /JSON/]
  ]
  for (const [name, payload, message] of cases) {
    const res = await up.app.inject({
      method: 'POST',
      url: '/request-console',
      headers: { 'x-console-key': CONSOLE_KEY, 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
    })
    const body = errorBody(t, res, 400, 'BAD_REQUEST')
    t.match(body.message, message, name)
  }
  // No interceptor was set: any upstream call would have made one of these a 503.
})

t.test('the console key', async t => {
  const up = await consoleApp(t)
  const mobileToken = hs256()
  const profile = await up.app.inject({ url: '/api/users/profile', headers: bearer(mobileToken) })
  t.not(profile.statusCode, 401, 'the mobile token is valid: it passes the profile\'s authentication')
  const refused: Array<[string, Record<string, string>]> = [
    ['missing', {}],
    ['empty', { 'x-console-key': '' }],
    ['wrong, same length', { 'x-console-key': CONSOLE_KEY.replace(/.$/, c => (c === 'x' ? 'y' : 'x')) }],
    ['wrong, a prefix of the key', { 'x-console-key': CONSOLE_KEY.slice(0, 8) }],
    ['the key with a suffix', { 'x-console-key': `${CONSOLE_KEY}x` }],
    ['an upstream key', { 'x-console-key': PASSPORT_KEY }],
    ['a valid mobile bearer token', bearer(mobileToken)],
    ['the console key as a bearer token', { authorization: `Bearer ${CONSOLE_KEY}` }]
  ]
  for (const [name, headers] of refused) {
    const res = await send(t, up, runOp(discount), headers)
    errorBody(t, res, 401, 'UNAUTHORIZED')
    t.equal(res.headers['www-authenticate'], 'x-console-key realm="request-console"', name)
  }
  // Checked before the body is read: an unauthenticated caller learns nothing about its body.
  const bad = await send(t, up, { operation: 'nope' }, {})
  errorBody(t, bad, 401, 'UNAUTHORIZED')
})

t.test('CONSOLE_API_KEY unset: the route does not exist, the same 404 as any unknown route', async t => {
  const up = await consoleApp(t, { CONSOLE_API_KEY: undefined })
  const res = await send(t, up, runOp(discount), { 'x-console-key': CONSOLE_KEY })
  const body = errorBody(t, res, 404, 'NOT_FOUND')
  const unknown = await up.app.inject({ method: 'POST', url: '/request-consoles', payload: runOp(discount) })
  t.same(body, { ...unknown.json(), message: unknown.json().message.replace('/request-consoles', '/request-console') })
  t.notOk((await up.app.inject('/docs/json')).json().paths['/request-console'], 'and it is not documented')
})

t.test('transport limits: 16 KiB body, JSON only', async t => {
  const up = await consoleApp(t)
  const large = JSON.stringify({
    operation: discount.name, params: { uid_client: fx.IVANOV.uid_client, pad: 'x'.repeat(16 * 1024) }
  })
  const tooLarge = await send(t, up, large, { 'x-console-key': CONSOLE_KEY, 'content-type': 'application/json' })
  errorBody(t, tooLarge, 413, 'PAYLOAD_TOO_LARGE')

  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    const res = await send(t, up, JSON.stringify(runOp(discount)),
      { 'x-console-key': CONSOLE_KEY, 'content-type': type })
    errorBody(t, res, 415, 'UNSUPPORTED_MEDIA_TYPE')
  }
})

t.test('the request union is the registry: one closed variant per operation', async t => {
  t.equal(consoleRequestVariants.length, operationNames.length)
  operationNames.forEach((name, i) => {
    const variant = consoleRequestVariants[i] as unknown as {
      additionalProperties?: boolean
      properties: { operation: { const: string }, params: { additionalProperties?: boolean } }
    }
    t.equal(variant.properties.operation.const, name)
    t.equal(variant.additionalProperties, false, `${name} accepts no other property`)
    t.equal(variant.properties.params.additionalProperties, false, `${name} params accept no other property`)
  })
})

const ALICE_KEY = 'alice-console-key-0123456789'
const BORIS_KEY = 'boris-console-key-9876543210'

/** A console app whose log lines are captured as objects. */
async function auditedApp (t: Test, env: Record<string, string | undefined>, level = 'info') {
  const lines: Array<Record<string, unknown>> = []
  const stream = { write: (line: string) => { lines.push(JSON.parse(line)) } }
  const up = await buildTestApp(t, { LOG_LEVEL: level, ...env }, { logger: { level, stream } })
  const audits = () => lines.filter(line => line.audit === 'console')
  return { up, lines, audits }
}

t.test('CONSOLE_API_KEYS: one key per operator, each named in one audit line per call', async t => {
  const { up, lines, audits } = await auditedApp(t,
    { CONSOLE_API_KEY: undefined, CONSOLE_API_KEYS: `alice:${ALICE_KEY}, boris:${BORIS_KEY}` })
  expectCall(up, passport, passport.path, false).reply(200, passport.answer, { headers: JSON_UTF8 })
  expectCall(up, discount, discount.path, false).reply(503, 'down', { headers: HTML })

  t.equal((await send(t, up, runOp(passport), { 'x-console-key': ALICE_KEY })).statusCode, 200)
  t.equal((await send(t, up, runOp(discount), { 'x-console-key': BORIS_KEY })).statusCode, 200)
  t.equal((await send(t, up, runOp(discount), { 'x-console-key': CONSOLE_KEY })).statusCode, 401,
    'a key of no operator')
  t.equal((await send(t, up, { operation: 'nope' }, { 'x-console-key': ALICE_KEY })).statusCode, 400)

  const subject = createHash('sha256').update(fx.IVANOV.uid_client.toUpperCase()).digest('hex').slice(0, 32)
  t.match(audits(), [
    { operator: 'alice', operation: passport.name, outcome: 'ok', status_code: 200, subject, level: 30 },
    { operator: 'boris', operation: discount.name, outcome: 'status', status_code: 200, subject },
    { operator: null, operation: null, outcome: 'http_401', status_code: 401, subject: null },
    { operator: 'alice', operation: null, outcome: 'http_400', status_code: 400, subject: null }
  ])
  t.equal(audits().length, 4, 'one line per call')
  const logged = JSON.stringify(lines)
  const personals = [fx.IVANOV.login, fx.IVANOV.uid_client, fx.IVANOV.uid_client.toLowerCase(), ALICE_KEY, BORIS_KEY]
  for (const personal of personals) {
    t.notOk(logged.includes(personal), 'no login, client id or key in any log line')
  }
})

t.test('the single CONSOLE_API_KEY is still accepted, as the operator "console", beside CONSOLE_API_KEYS', async t => {
  const { up, audits } = await auditedApp(t, { CONSOLE_API_KEYS: `alice:${ALICE_KEY}` })
  expectCall(up, discount, discount.path, false).reply(200, discount.answer, { headers: JSON_UTF8 }).times(2)
  t.equal((await send(t, up, runOp(discount))).statusCode, 200)
  t.equal((await send(t, up, runOp(discount), { 'x-console-key': ALICE_KEY })).statusCode, 200)
  t.strictSame(audits().map(line => line.operator), ['console', 'alice'])
})

for (const level of ['warn', 'silent']) {
  t.test(`at LOG_LEVEL=${level}, every console call and every refused key still leaves one audit record`, async t => {
    const { up, lines, audits } = await auditedApp(t, {}, level)
    expectCall(up, passport, passport.path, false).reply(200, passport.answer, { headers: JSON_UTF8 })
    const ok = await send(t, up, runOp(passport))
    t.equal(ok.statusCode, 200)
    const refused = await send(t, up, runOp(passport), { 'x-console-key': 'not-a-console-key-at-all' })
    t.equal(refused.statusCode, 401)
    const subject = createHash('sha256').update(fx.IVANOV.uid_client.toUpperCase()).digest('hex').slice(0, 32)
    t.match(audits(), [
      {
        operator: 'console',
        operation: passport.name,
        subject,
        outcome: 'ok',
        reqId: ok.headers['x-request-id'],
        time: Number
      },
      { operator: null, operation: null, subject: null, outcome: 'http_401', reqId: refused.headers['x-request-id'] }
    ])
    t.equal(audits().length, 2, 'one record each')
    t.notOk(lines.some(line => line.msg === 'request completed'), `no access line at ${level}`)
    const logged = JSON.stringify(lines)
    for (const personal of [fx.IVANOV.login, fx.IVANOV.uid_client, CONSOLE_KEY, 'not-a-console-key-at-all']) {
      t.notOk(logged.includes(personal), 'no login, client id or key in the audit stream')
    }
  })
}

t.test('an upstream failure is audited with its reason', async t => {
  const { up, audits } = await auditedApp(t, {})
  expectCall(up, passport, passport.path, false).reply(307, '', { headers: { location: 'http://elsewhere.test/bc_passport/get_client/' } })
  t.equal((await send(t, up, runOp(passport))).statusCode, 502)
  t.match(audits(), [{ operator: 'console', operation: passport.name, outcome: 'redirect_refused', status_code: 502 }])
})

t.test('consoleOperatorCheck finds the operator of a key and nobody for anything else', async t => {
  const operatorOf = consoleOperatorCheck(new Map([['alice', ALICE_KEY], ['boris', BORIS_KEY]]))
  t.equal(operatorOf(ALICE_KEY), 'alice')
  t.equal(operatorOf(BORIS_KEY), 'boris')
  for (const other of [undefined, '', ALICE_KEY.slice(0, -1), `${ALICE_KEY} `, ['x'], 42]) {
    t.equal(operatorOf(other), undefined)
  }
})

t.test('config: CONSOLE_API_KEYS pairs are checked, names and keys unique', async t => {
  t.strictSame(configProblems({ CONSOLE_API_KEYS: `alice:${ALICE_KEY},boris:${BORIS_KEY}` }), [])
  for (const value of ['alice', 'alice:short', `:${ALICE_KEY}`, `al ice:${ALICE_KEY}`, `alice:${ALICE_KEY},`,
    `alice:${ALICE_KEY} boris:${BORIS_KEY}`]) {
    t.strictSame(configProblems({ CONSOLE_API_KEYS: value }), ['CONSOLE_API_KEYS has an invalid value'], value)
  }
  t.match(configProblems({ CONSOLE_API_KEYS: `alice:${ALICE_KEY},alice:${BORIS_KEY}` }), [/names an operator twice/])
  t.match(configProblems({ CONSOLE_API_KEYS: `console:${ALICE_KEY}` }), [/names an operator twice/], 'console is CONSOLE_API_KEY\'s operator')
  t.match(configProblems({ CONSOLE_API_KEYS: `alice:${ALICE_KEY},boris:${ALICE_KEY}` }), [/the same key/])
})
