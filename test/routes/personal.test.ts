// A personal route built from the parts, as docs/architecture.md's "Adding a route" builds one: a test-only
// `GET /api/users/passport` over `passport.get_client`, registered beside the app's routes (never served by the
// registry), declaring `config: { personal }` and asking `fastify.passport` for the caller's record, and nothing
// else. It gets the bearer check, no-store, the app version's 426, its own per-client limit, CLIENT_NOT_FOUND and
// the refusal of another client's record from the parts, and the standard answers in its documented schema.
import { setImmediate as nextTurn } from 'node:timers/promises'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import * as fx from '../../schemas/fixtures.ts'
import { Client } from '../../schemas/passport.ts'
import app, { serverOptions } from '../../src/app.ts'
import personalRoutes from '../../src/routes/personal.ts'
import { callerOf } from '../../src/auth/caller.ts'
import { ClientNotFoundError } from '../../src/errors.ts'
import { errorResponse } from '../../src/plugins/app/errors/error-response.ts'
import { ref } from '../../src/plugins/app/shared-schemas/refs.ts'
import { testConfig } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { respondToOperations, mockAgent } from '../helpers/upstream-mock.ts'

const PASSPORT = '/api/users/passport'
const PROFILE = '/api/users/profile'
const IVANOV_TOKEN = hs256()

/** The route of the recipe: its own schema, the personal option, and the passport part. */
const passportRoute: FastifyPluginAsyncTypebox = async fastify => {
  fastify.get(PASSPORT, {
    config: { personal: { operation: 'passport.get_client' } },
    schema: {
      operationId: 'getPassport',
      tags: ['profile'],
      summary: "The caller's passport record",
      response: {
        200: ref(Client),
        404: errorResponse('The passport service does not know the client the token names.',
          [new ClientNotFoundError()])
      }
    }
  }, async request => {
    const record = await fastify.passport.recordOf(callerOf(request), {
      headers: fastify.upstream.forwardedHeaders(request.headers, request.id),
      signal: request.signal
    })
    return record.client
  })
}

async function passportApp (t: Test, env: Record<string, string> = {}) {
  const config = testConfig(env)
  const agent = mockAgent()
  const fastify = Fastify(serverOptions(config)).withTypeProvider<TypeBoxTypeProvider>()
  await fastify.register(fp(app, { name: 'app' }), { config, dispatcher: agent })
  await fastify.register(passportRoute)
  await fastify.ready()
  t.teardown(async () => {
    await fastify.close()
    await agent.close()
  })
  return { app: fastify, agent, upstream: agent.get(new URL(config.UPSTREAM_URL).origin) }
}

const found = (body: unknown = fx.passportFound) => ({ 'passport.get_client': { status: 200, body } })
const everything = {
  ...found(),
  'dealer.discount': { status: 200, body: fx.discountWithBonuses },
  'dealer.client': { status: 200, body: fx.contractorResult }
}

t.test('the caller\'s record, authenticated, never stored, limited per client', async t => {
  const { app, agent, upstream } = await passportApp(t)
  const sent = respondToOperations(upstream, found())
  const res = await app.inject({ url: PASSPORT, headers: bearer(IVANOV_TOKEN) })
  agent.assertNoPendingInterceptors()
  t.equal(res.statusCode, 200)
  t.strictSame(res.json(), JSON.parse(JSON.stringify(fx.client)), 'the record, serialized by the route schema')
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(res.headers['x-ratelimit-limit'], '120', 'RATE_LIMIT_PROFILE_PER_MINUTE')
  t.strictSame(JSON.parse(sent[0]!.body), fx.passportParams, 'the lookup names the token\'s client and nothing else')
})

t.test('no token: 401 with its challenge and no-store, and the upstream is not called', async t => {
  const { app, agent } = await passportApp(t)
  const res = await app.inject({ url: PASSPORT })
  t.equal(res.statusCode, 401)
  t.match(res.json(), { code: 'UNAUTHORIZED', reason: 'token_missing' })
  t.match(res.headers['www-authenticate'], /^Bearer/)
  t.equal(res.headers['cache-control'], 'no-store')
  t.equal(agent.getCallHistory()?.calls().length ?? 0, 0, 'the upstream is not called')
})

t.test('an app older than MIN_APP_VERSION: 426, whatever its token', async t => {
  const { app } = await passportApp(t, { MIN_APP_VERSION: '2.0.0' })
  const res = await app.inject({ url: PASSPORT, headers: { 'x-app-version': '1.9.0' } })
  t.equal(res.statusCode, 426)
  t.match(res.json(), { code: 'APP_UPDATE_REQUIRED' })
  const malformed = await app.inject({ url: PASSPORT, headers: { ...bearer(IVANOV_TOKEN), 'x-app-version': 'new' } })
  t.equal(malformed.statusCode, 400)
})

t.test('the per-client limit: its own counter, not the profile\'s', async t => {
  const { app, upstream } = await passportApp(t, { RATE_LIMIT_PROFILE_PER_MINUTE: '2' })
  respondToOperations(upstream, found())
  respondToOperations(upstream, found())
  for (let i = 0; i < 2; i++) {
    t.equal((await app.inject({ url: PASSPORT, headers: bearer(IVANOV_TOKEN) })).statusCode, 200)
  }
  const limited = await app.inject({ url: PASSPORT, headers: bearer(IVANOV_TOKEN) })
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { code: 'RATE_LIMITED' })
  t.ok(limited.headers['retry-after'])
  t.equal(limited.headers['cache-control'], 'no-store')
  // Another client is not limited by this one's count.
  respondToOperations(upstream, found({ ...fx.passportFound, uid_client: fx.PETROVA.uid_client }))
  const petrova = await app.inject({ url: PASSPORT, headers: bearer(hs256(claimsFor(fx.PETROVA))) })
  t.equal(petrova.statusCode, 200, 'another client has a count of their own')
  // The profile of the same client counts apart (each path its counter).
  respondToOperations(upstream, everything)
  t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })).statusCode, 200)
})

t.test('an unknown client: 404 CLIENT_NOT_FOUND, and the client\'s last-known profile is forgotten', async t => {
  const { app, upstream, lastKnown } = await withProfileCopy(t)
  respondToOperations(upstream, { 'passport.get_client': { status: 400, body: fx.passportNotFound } })
  const res = await app.inject({ url: PASSPORT, headers: bearer(IVANOV_TOKEN) })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { code: 'CLIENT_NOT_FOUND' })
  t.equal(res.headers['cache-control'], 'no-store')
  await nextTurn()
  t.equal(lastKnown.size, 0, 'the copy is forgotten')
})

t.test('another client\'s record: refused as a bad upstream answer, nothing of it shown, the copy forgotten',
  async t => {
    const { app, upstream, lastKnown } = await withProfileCopy(t)
    respondToOperations(upstream, found({ ...fx.passportFound, uid_client: fx.PETROVA.uid_client }))
    const res = await app.inject({ url: PASSPORT, headers: bearer(IVANOV_TOKEN) })
    t.equal(res.statusCode, 502)
    t.match(res.json(), { code: 'UPSTREAM_BAD_RESPONSE' })
    t.notOk(res.body.includes('Иван'), 'nothing of the record in the error')
    await nextTurn()
    t.equal(lastKnown.size, 0, 'the copy is forgotten')
  })

t.test('its document: bearer security, x-app-version, and the standard answers beside its own', async t => {
  const { app } = await passportApp(t)
  const operation = (app.swagger() as { paths: Record<string, { get: Record<string, unknown> }> })
    .paths[PASSPORT]!.get as {
    security: unknown, parameters: Array<{ name: string, in: string }>, responses: Record<string, unknown>
  }
  t.strictSame(operation.security, [{ bearerAuth: [] }])
  t.ok(operation.parameters.some(p => p.in === 'header' && p.name === 'x-app-version'), 'x-app-version')
  t.strictSame(Object.keys(operation.responses).sort(),
    ['200', '400', '401', '404', '426', '429', '500', '502', '503', '504'])
  t.match(operation.responses['429'], { headers: { 'retry-after': {} } })
})

t.test('registered after the limits, whose hook would not see the limit it sets, the personal routes fail the boot',
  async t => {
    const config = testConfig()
    const fastify = Fastify(serverOptions(config))
    t.teardown(() => fastify.close())
    // Stand-ins for the plugins it declares, and the rate-limit plugin's decorator, as if registered before it.
    fastify.register(fp(async () => {}, { name: 'errors' }))
    fastify.register(fp(async () => {}, { name: 'cache-control' }))
    fastify.decorate('createRateLimit', (() => async () => ({})) as never)
    fastify.register(personalRoutes, { config })
    await t.rejects(async () => { await fastify.ready() }, /before rate-limit/)
  })

/** The passport route's app after IVANOV's profile has left his last-known copy. */
async function withProfileCopy (t: Test) {
  const { app, upstream } = await passportApp(t)
  const lastKnown = app.profile.lastKnown!
  respondToOperations(upstream, everything)
  t.equal((await app.inject({ url: PROFILE, headers: bearer(IVANOV_TOKEN) })).statusCode, 200)
  await nextTurn()
  t.ok(lastKnown.size > 0, 'the profile left a copy')
  return { app, upstream, lastKnown }
}
