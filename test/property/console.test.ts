// Properties of the request console over whatever an operator's client can send: random JSON, random
// operation names and params, extra fields, deep nesting, strings near the body limit, other content
// types and keys. Every answer has a documented status, a well-formed body, an x-request-id and no
// secret; only a valid request with the right key runs an operation.
import fc from 'fast-check'
import t from 'tap'
import { seededClients } from '../../sandbox/seed.ts'
import { CONSOLE_BODY_LIMIT } from '../../src/routes/console/schema.ts'
import { operationNames } from '../../schemas/operations.ts'
import { IVANOV } from '../../schemas/fixtures.ts'
import { operations } from '../../schemas/operations.ts'
import { buildTestApp, CONSOLE_KEY, DEALER_KEY, PASSPORT_KEY } from '../helpers/build-app.ts'
import { assertWellFormed, fieldValue, holds, propertyApp, stillServing } from './responses.ts'

const { app } = await propertyApp(t)

const identity = fc.constantFrom(...seededClients.map(c => c.identity))
const operation = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...operationNames) },
  { weight: 1, arbitrary: fc.constantFrom('passport.get_client ', 'PASSPORT.GET_CLIENT', 'dealer.*', '../bc_passport/get_client', 'http://127.0.0.1/', '__proto__', 'constructor') },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }
)
const uid = fc.oneof(fc.uuid(), identity.map(i => i.uid_client), fc.string({ maxLength: 60 }), fc.integer())
const params = fc.oneof(
  identity.map(i => ({ ...i })),
  fc.record({ uid_client: uid }),
  fc.record({ vendor: fc.string({ maxLength: 70 }), login: fc.oneof(fc.stringMatching(/^\d{1,20}$/), fc.string()), uid_client: uid }, { requiredKeys: [] }),
  fc.tuple(
    identity, fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 })
  )
    .map(([i, extra]) => ({ ...extra, ...i })),
  fc.jsonValue({ maxDepth: 3 })
)
/** A request the console must run: any operation, a seeded or unknown client. */
const valid = fc.tuple(
  fc.constantFrom(...operationNames), identity, fc.uuid(), fc.boolean()
).map(([name, who, other, seeded]) => {
  const uidClient = seeded ? who.uid_client : other
  return {
    operation: name,
    params: name === 'passport.get_client' ? { ...who, uid_client: uidClient } : { uid_client: uidClient }
  }
})
const request = fc.oneof(
  { weight: 2, arbitrary: valid },
  { weight: 4, arbitrary: fc.record({ operation, params }) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.record({ operation, params }),
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 2 })
    ).map(([r, extra]) => ({ ...extra, ...r }))
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }
)

/** Deep nesting, within the body limit. */
const deep = fc.tuple(fc.integer({ min: 1, max: 8000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => {
  const close = open === '[' ? ']' : '}'
  return `{"operation":"dealer.discount","params":{"uid_client":${open.repeat(depth)}1${close.repeat(depth)}}}`
})
/** A request whose one string brings the body within 300 bytes of the limit, either side. */
const nearLimit = fc.tuple(
  fc.constantFrom(...operationNames), fc.integer({ min: -300, max: 300 })
).map(([name, delta]) => {
  const frame = JSON.stringify({ operation: name, params: { uid_client: '' } })
  return frame.replace('"uid_client":""',
    `"uid_client":"${'A'.repeat(Math.max(0, CONSOLE_BODY_LIMIT - frame.length + delta))}"`)
})
/** The request as sent: JSON, or something else a client might send. */
const body = fc.oneof(
  { weight: 6, arbitrary: request.map(value => JSON.stringify(value) ?? 'null') },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: nearLimit },
  { weight: 1, arbitrary: fc.string({ maxLength: 500 }) }
)

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain',
      'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'APPLICATION/JSON',
      '')
  },
  { weight: 1, arbitrary: fieldValue(60) }
)
const key = fc.oneof({ weight: 8, arbitrary: fc.constant(CONSOLE_KEY) }, { weight: 1, arbitrary: fieldValue(60) })

await holds(t, 'any console request: a documented, well-formed answer without secrets',
  fc.asyncProperty(body, contentType, key, async (payload, type, consoleKey) => {
    const headers: Record<string, string> = { 'x-console-key': consoleKey }
    if (type !== '') headers['content-type'] = type
    const res = await app.inject({ method: 'POST', url: '/request-console', headers, payload })
    assertWellFormed(res, 'console')
    const refused = res.statusCode === 401 || res.statusCode === 429
    if (consoleKey !== CONSOLE_KEY && !refused) throw new Error(`a wrong key got ${res.statusCode}`)
    if (Buffer.byteLength(payload) > CONSOLE_BODY_LIMIT && res.statusCode === 200) {
      throw new Error('a body over the limit ran')
    }
  }), 200)

await holds(t, 'a valid request with the key always runs its operation', fc.asyncProperty(valid, async payload => {
  const name = payload.operation
  const res = await app.inject({
    method: 'POST',
    url: '/request-console',
    headers: { 'x-console-key': CONSOLE_KEY },
    payload
  })
  assertWellFormed(res, 'console')
  if (res.statusCode !== 200 || (res.json() as { operation: string }).operation !== name) {
    throw new Error(`status ${res.statusCode}: ${res.body}`)
  }
}), 50)

// Echoes of a key as an upstream may send them back: cut short, re-cased, with invisible characters
// inside, encoded (once or twice), split over two adjacent fields, inside other text. None reaches the
// operator; ordinary strings beside them are shown as received.
const toHex = (s: string) => Buffer.from(s).toString('hex')
const percentAll = (s: string) => [...Buffer.from(s)].map(b => `%${b.toString(16).padStart(2, '0')}`).join('')
const encodings: Record<string, (s: string) => string> = {
  base64: s => Buffer.from(s).toString('base64'),
  base64url: s => Buffer.from(s).toString('base64url'),
  hex: toHex,
  HEX: s => toHex(s).toUpperCase(),
  percent: percentAll,
  PERCENT: s => percentAll(s).toUpperCase(),
  uri: encodeURIComponent,
  'html decimal': s => [...s].map(c => `&#${c.codePointAt(0)};`).join(''),
  'html hex': s => [...s].map(c => `&#x${c.codePointAt(0)!.toString(16)};`).join('')
}
const casings: Record<string, (s: string) => string> = {
  as: s => s,
  upper: s => s.toUpperCase(),
  lower: s => s.toLowerCase(),
  alternate: s => [...s].map((c, i) => i % 2 === 0 ? c.toUpperCase() : c.toLowerCase()).join('')
}
const ZERO_WIDTH = ['\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF']
const echo = fc.record({
  secret: fc.constantFrom(PASSPORT_KEY, DEALER_KEY, CONSOLE_KEY),
  cutStart: fc.integer({ min: 0, max: 2 }),
  cutEnd: fc.integer({ min: 0, max: 2 }),
  casing: fc.constantFrom(...Object.keys(casings)),
  invisible: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...ZERO_WIDTH)), { maxLength: 3 }),
  encoded: fc.array(fc.constantFrom(...Object.keys(encodings)), { maxLength: 2 }),
  split: fc.option(fc.integer({ min: 12, max: 17 }), { nil: undefined }),
  before: fc.constantFrom('', 'key: ', 'https://sso.example/login?api_key=', '<p>', 'x'),
  after: fc.constantFrom('', '&login=79161234567', '</p>', ' end')
}).map(e => {
  let plain = casings[e.casing]!(e.secret.slice(e.cutStart, e.secret.length - e.cutEnd))
  for (const [at, char] of e.invisible) {
    const i = at % plain.length
    plain = plain.slice(0, i) + char + plain.slice(i)
  }
  const encode = (s: string) => e.encoded.reduce((text, name) => encodings[name]!(text), s)
  // Split, each part is encoded alone: the text before goes with the first, the text after with the last.
  const parts = (e.split === undefined ? [plain] : [plain.slice(0, e.split), plain.slice(e.split)]).map(encode)
  parts[0] = e.before + parts[0]!
  parts[parts.length - 1] += e.after
  return { ...e, parts }
})
const ordinary = fc.oneof(fc.string({ maxLength: 40 }), fc.uuid(), fc.stringMatching(/^7\d{10}$/),
  fc.uint8Array({ minLength: 8, maxLength: 40 }).map(bytes => Buffer.from(bytes).toString('base64')))

let echoed: unknown = null

// A subtest: the root test must not end while the app is built.
await t.test('transformed echoes of a key', async t => {
  const echoApp = await buildTestApp(t, {
    RATE_LIMIT_CONSOLE_PER_MINUTE: '1000000', UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
  })
  const passportPath = operations['passport.get_client'].path
  echoApp.upstream.intercept({ path: p => p === passportPath || p === `${passportPath}/`, method: 'POST' })
    .reply(() => ({
      statusCode: 403,
      data: echoed as object,
      responseOptions: { headers: { 'content-type': 'application/json' } }
    }))
    .persist()

  await holds(t, 'a key echoed in any form never reaches the operator',
    fc.asyncProperty(echo, ordinary, async (e, note) => {
      const fields = Object.fromEntries(e.parts.map((part, i) => [`echo${i}`, part]))
      // `success` between: the note is never next to a part of the key, so it must be shown as it is.
      echoed = { note, success: false, ...fields }
      const res = await echoApp.app.inject({
        method: 'POST',
        url: '/request-console',
        headers: { 'x-console-key': CONSOLE_KEY },
        payload: { operation: 'passport.get_client', params: IVANOV }
      })
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${res.body}`)
      const body = (res.json() as { body: Record<string, unknown> }).body
      for (const [name, part] of Object.entries(fields)) {
        // A key echoed verbatim is cut out in place; any other form of it hides the whole field.
        const expected = part.includes(e.secret) ? part.replaceAll(e.secret, '[redacted]') : '[redacted]'
        if (body[name] !== expected) {
          throw new Error(`${name} shown: ${JSON.stringify(body[name])} for ${JSON.stringify(part)}`)
        }
      }
      for (const part of e.parts) {
        if (res.body.includes(part)) throw new Error(`the echo ${JSON.stringify(part)} is in the answer`)
      }
      if (body.note !== note) {
        throw new Error(`an ordinary string was changed: ${JSON.stringify(note)} -> ${JSON.stringify(body.note)}`)
      }
    }), 300)
})

await stillServing(t, app)
