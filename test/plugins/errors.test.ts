import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { Type } from 'typebox'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import errors from '../../src/plugins/app/errors.ts'
import { toErrorBody } from '../../src/error-body.ts'
import requestIdPlugin, { requestId } from '../../src/plugins/app/request-id.ts'
import { ClientNotFoundError, UpstreamBadResponseError } from '../../src/errors.ts'

// A small app with the real error handler and a few routes that fail in each way a route can.
async function build (t: Test) {
  const app = Fastify({ logger: false, genReqId: requestId, requestIdHeader: false, bodyLimit: 64 })
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  await app.register(requestIdPlugin)
  await app.register(errors)
  app.get('/boom', async () => { throw new Error('db password is hunter2 at /srv/app.ts:12') })
  app.get('/not-found', async () => { throw new ClientNotFoundError() })
  app.get('/upstream', async () => { throw new UpstreamBadResponseError('passport.get_client', { cause: new Error('socket to 10.0.0.5') }) })
  app.post('/body', { schema: { body: Type.Object({ uid: Type.String({ format: 'uuid' }) }, { additionalProperties: false }) } }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  return app
}

const isErrorBody = (t: Test, body: Record<string, unknown>, statusCode: number, code: string) => {
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode'], 'exactly the four fields')
  t.equal(body.statusCode, statusCode)
  t.equal(body.code, code)
  t.type(body.message, 'string')
}

t.test('an unexpected 500 says nothing of its internals', async t => {
  const app = await build(t)
  const res = await app.inject('/boom')
  t.equal(res.statusCode, 500)
  isErrorBody(t, res.json(), 500, 'INTERNAL_ERROR')
  t.notMatch(res.body, /hunter2|srv|stack|at /)
  t.ok(res.headers['x-request-id'])
})

t.test('catalog errors keep their code and status', async t => {
  const app = await build(t)
  const res = await app.inject('/not-found')
  isErrorBody(t, res.json(), 404, 'CLIENT_NOT_FOUND')
  const up = await app.inject('/upstream')
  t.equal(up.statusCode, 502)
  isErrorBody(t, up.json(), 502, 'UPSTREAM_BAD_RESPONSE')
  t.notMatch(up.body, /10\.0\.0\.5|socket/, 'the cause stays in the logs')
})

t.test('an unknown route is a 404 NOT_FOUND without its query', async t => {
  const app = await build(t)
  const res = await app.inject('/nowhere?token=secret')
  isErrorBody(t, res.json(), 404, 'NOT_FOUND')
  t.notMatch(res.body, /secret/)
})

t.test('validation failures are 400 BAD_REQUEST naming the field', async t => {
  const app = await build(t)
  const bad = await app.inject({ method: 'POST', url: '/body', payload: { uid: 'nope' } })
  isErrorBody(t, bad.json(), 400, 'BAD_REQUEST')
  t.match(bad.json().message, /uid/)
  const extra = await app.inject({ method: 'POST', url: '/body', payload: { uid: '9F1C3B2A-6D4E-4C1B-8A7F-2E5D6C7B8A90', admin: true } })
  isErrorBody(t, extra.json(), 400, 'BAD_REQUEST')
})

t.test('body parser failures speak our codes', async t => {
  const app = await build(t)
  const json = await app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'application/json' }, payload: '{"uid":' })
  isErrorBody(t, json.json(), 400, 'BAD_REQUEST')
  const type = await app.inject({ method: 'POST', url: '/body', headers: { 'content-type': 'text/csv' }, payload: 'a,b' })
  isErrorBody(t, type.json(), 415, 'UNSUPPORTED_MEDIA_TYPE')
  const large = await app.inject({ method: 'POST', url: '/body', payload: { uid: 'x'.repeat(200) } })
  isErrorBody(t, large.json(), 413, 'PAYLOAD_TOO_LARGE')
})

t.test('x-request-id: a well-formed inbound id is kept, anything else replaced', async t => {
  const app = await build(t)
  const kept = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'trace-42.a:b' } })
  t.equal(kept.headers['x-request-id'], 'trace-42.a:b')
  const replaced = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'x'.repeat(200) } })
  t.match(replaced.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  const error = await app.inject('/boom')
  t.match(error.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'errors carry it too')
})

t.test('toErrorBody maps statuses it does not know by name, and never passes a 5xx message', async t => {
  const teapot = toErrorBody(Object.assign(new Error('short and stout'), { statusCode: 418, code: 'X' }))
  t.same(teapot, { statusCode: 418, code: 'I_M_A_TEAPOT', error: "I'm a Teapot", message: 'short and stout' })
  const limited = toErrorBody(Object.assign(new Error('Rate limit exceeded, retry in 1 minute'), { statusCode: 429, code: 'FST_ERR_RATE_LIMIT' }))
  t.equal(limited.code, 'RATE_LIMITED')
  const gateway = toErrorBody(Object.assign(new Error('connect ECONNREFUSED 10.1.1.1'), { statusCode: 502, code: 'UND_ERR' }))
  t.same(gateway, { statusCode: 500, code: 'INTERNAL_ERROR', error: 'Internal Server Error', message: 'Internal server error' })
})
