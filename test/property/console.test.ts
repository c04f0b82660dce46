// Properties of the request console over whatever an operator's client can send: random JSON, random
// operation names and params, extra fields, deep nesting, strings near the body limit, other content
// types and keys. Every answer has a documented status, a well-formed body, an x-request-id and no
// secret; only a valid request with the right key runs an operation.
import fc from 'fast-check'
import t from 'tap'
import { seededClients } from '../../sandbox/seed.ts'
import { CONSOLE_BODY_LIMIT } from '../../src/routes/console.ts'
import { operationNames } from '../../schemas/operations.ts'
import { CONSOLE_KEY } from '../helpers/build-app.ts'
import { assertWellFormed, fieldValue, holds, propertyApp, stillServing } from './answers.ts'

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
  return { operation: name, params: name === 'passport.get_client' ? { ...who, uid_client: uidClient } : { uid_client: uidClient } }
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
  return frame.replace('"uid_client":""', `"uid_client":"${'A'.repeat(Math.max(0, CONSOLE_BODY_LIMIT - frame.length + delta))}"`)
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
  { weight: 2, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'APPLICATION/JSON', '') },
  { weight: 1, arbitrary: fieldValue(60) }
)
const key = fc.oneof({ weight: 8, arbitrary: fc.constant(CONSOLE_KEY) }, { weight: 1, arbitrary: fieldValue(60) })

await holds(t, 'any console request: a documented, well-formed answer without secrets', fc.asyncProperty(body, contentType, key, async (payload, type, consoleKey) => {
  const headers: Record<string, string> = { 'x-console-key': consoleKey }
  if (type !== '') headers['content-type'] = type
  const res = await app.inject({ method: 'POST', url: '/request-console', headers, payload })
  assertWellFormed(res, 'console')
  if (consoleKey !== CONSOLE_KEY && res.statusCode !== 401 && res.statusCode !== 429) throw new Error(`a wrong key got ${res.statusCode}`)
  if (Buffer.byteLength(payload) > CONSOLE_BODY_LIMIT && res.statusCode === 200) throw new Error('a body over the limit ran')
}), 200)

await holds(t, 'a valid request with the key always runs its operation', fc.asyncProperty(valid, async payload => {
  const name = payload.operation
  const res = await app.inject({ method: 'POST', url: '/request-console', headers: { 'x-console-key': CONSOLE_KEY }, payload })
  assertWellFormed(res, 'console')
  if (res.statusCode !== 200 || (res.json() as { operation: string }).operation !== name) throw new Error(`status ${res.statusCode}: ${res.body}`)
}), 50)

await stillServing(t, app)
