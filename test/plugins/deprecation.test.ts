// Deprecation over real HTTP, on routes registered only here (production has no deprecated route yet): a deprecated
// route's answers carry Deprecation (RFC 9745) and Sunset (RFC 8594), errors included; the OpenAPI document marks the
// operation and the field; bff_deprecated_calls_total counts the calls by app version.
import t from 'tap'
import { Type } from 'typebox'
import { AppVersionHeaders } from '../../schemas/app-version.ts'
import { ClientNotFoundError } from '../../src/errors.ts'
import { deprecated, deprecatedFields, deprecationHeaders } from '../../src/plugins/app/deprecation/deprecated.ts'
import { buildTestApp } from '../helpers/build-app.ts'
import * as fx from '../../schemas/fixtures.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
// 2026-11-01T00:00:00Z and 2027-05-01T00:00:00Z, worked out apart from the code (date -u).
const SINCE_SECONDS = 1793491200
const SUNSET_DATE = 'Sat, 01 May 2027 00:00:00 GMT'

const Card = Type.Object({
  name: Type.String(),
  nickname: Type.String({ deprecated: true, description: 'Use `name`.' }),
  tags: Type.Array(Type.Object({ label: Type.String(), colour: Type.String({ deprecated: true }) }))
})
const card = { name: 'Ivan', nickname: 'Vanya', tags: [{ label: 'vip', colour: 'gold' }] }

/** A valid token of another caller than hs256()'s, told apart by its uid_client. */
function callerToken (letter: string): Record<string, string> {
  return bearer(hs256(claimsFor({ ...fx.IVANOV, uid_client: `${letter}0000000-0000-4000-8000-000000000000` })))
}

async function deprecatedApp (t: Parameters<typeof buildTestApp>[0]) {
  const { app } = await buildTestApp(t, { METRICS_API_KEY: METRICS_KEY })
  app.get('/test/old', {
    schema: {
      ...deprecated({ since: '2026-11-01T00:00:00Z', sunset: '2027-05-01' }),
      tags: ['profile'],
      headers: AppVersionHeaders,
      response: { 200: Type.Object({ ok: Type.Boolean() }) }
    },
    onRequest: app.authenticate
  }, async request => {
    if (request.headers['x-fail'] === 'yes') throw new ClientNotFoundError()
    return { ok: true }
  })
  app.get('/test/undated-sunset', {
    schema: { ...deprecated({ since: '2026-11-01' }), tags: ['profile'], headers: AppVersionHeaders }
  }, async () => ({ ok: true }))
  app.get('/test/card', {
    schema: { tags: ['profile'], headers: AppVersionHeaders, response: { 200: Card } },
    onRequest: app.authenticate
  }, async request => {
    if (request.headers['x-fail'] === 'yes') throw new ClientNotFoundError()
    return card
  })
  app.get('/test/current', { schema: { tags: ['profile'], headers: AppVersionHeaders } }, async () => ({ ok: true }))
  const origin = await app.listen({ port: 0, host: '127.0.0.1' })
  // With a valid token unless told otherwise: only an authenticated call counts.
  const call = async (path: string, headers: Record<string, string> = {},
    token: Record<string, string> = bearer(hs256())) =>
    await fetch(`${origin}${path}`, { headers: { ...token, ...headers } })
  const scrape = async () => {
    const text = await (await call('/metrics', { authorization: `Bearer ${METRICS_KEY}` })).text()
    const calls = new Map<string, number>()
    for (const [, labels, value] of text.matchAll(/^bff_deprecated_calls_total\{(.*)\} (\S+)$/gm)) {
      calls.set(labels!, Number(value))
    }
    return calls
  }
  return { app, call, scrape }
}

t.test('a deprecated route answers with Deprecation and Sunset, error answers too; others with neither', async t => {
  const { call } = await deprecatedApp(t)
  const ok = await call('/test/old', { 'x-app-version': '3.1.0' })
  t.equal(ok.status, 200)
  t.equal(ok.headers.get('deprecation'), `@${SINCE_SECONDS}`, 'RFC 9745: @ and epoch seconds')
  t.equal(ok.headers.get('sunset'), SUNSET_DATE, 'RFC 8594: an HTTP-date')
  const refused = await call('/test/old', { 'x-app-version': 'three' })
  t.equal(refused.status, 400)
  t.equal(refused.headers.get('deprecation'), `@${SINCE_SECONDS}`, 'a refusal says so too')

  const undated = await call('/test/undated-sunset')
  t.equal(undated.headers.get('deprecation'), `@${SINCE_SECONDS}`, 'a date without a time is UTC midnight')
  t.equal(undated.headers.get('sunset'), null, 'no sunset date, no Sunset')
  const current = await call('/test/current')
  t.equal(current.headers.get('deprecation'), null)
  t.equal((await call('/test/card')).headers.get('deprecation'), null,
    'a deprecated field does not deprecate the route')
})

t.test('the OpenAPI document marks the operation, its dates and the fields', async t => {
  const { app } = await deprecatedApp(t)
  const doc = (await app.inject('/docs/json')).json()
  t.match(doc.paths['/test/old'].get,
    { deprecated: true, 'x-deprecation': '2026-11-01T00:00:00Z', 'x-sunset': '2027-05-01' })
  t.notOk('deprecated' in doc.paths['/test/current'].get, 'only where declared')
  const schema = doc.paths['/test/card'].get.responses['200'].content['application/json'].schema
  t.equal(schema.properties.nickname.deprecated, true)
  t.equal(schema.properties.tags.items.properties.colour.deprecated, true)
  t.notOk('deprecated' in schema.properties.name)
  t.notOk('deprecated' in doc.paths['/test/card'].get)
})

t.test('bff_deprecated_calls_total: calls to the route by app version, and success ' +
  'answers with deprecated fields', async t => {
  const { call, scrape } = await deprecatedApp(t)
  await call('/test/old', { 'x-app-version': '3.1.0' })
  await call('/test/old', { 'x-app-version': '3.1.0' })
  await call('/test/old')
  await call('/test/card', { 'x-app-version': '3.0.0' })
  await call('/test/card', { 'x-app-version': '3.0.0', 'x-fail': 'yes' })
  await call('/test/current', { 'x-app-version': '3.0.0' })
  // More callers of 3.1.0: three distinct ones are far too few to name it (as in bff_app_version_requests_total).
  for (const letter of ['B', 'C', 'A']) await call('/test/old', { 'x-app-version': '3.1.0' }, callerToken(letter))
  // A refused answer (a 4xx) counts nowhere, its token verified or not.
  t.equal((await call('/test/old', { 'x-app-version': '3.1.0', 'x-fail': 'yes' })).status, 404)
  // Without a valid token: the same answers' headers, and no count.
  for (const token of [{}, { authorization: 'Bearer not-a-token' }] as Array<Record<string, string>>) {
    t.equal((await call('/test/old', { 'x-app-version': '3.1.0' }, token)).status, 401)
    t.equal((await call('/test/card', { 'x-app-version': '3.0.0' }, token)).status, 401)
  }
  const calls = await scrape()
  t.strictSame(Object.fromEntries(calls), {
    // Too few callers to name a version (as in bff_app_version_requests_total) count as `other`: the first caller
    // twice, then B, C and A.
    'route="/test/old",method="GET",part="route",app_version="other"': 5,
    'route="/test/old",method="GET",part="route",app_version="none"': 1,
    'route="/test/card",method="GET",part="/nickname",app_version="other"': 1,
    'route="/test/card",method="GET",part="/tags/*/colour",app_version="other"': 1
  }, 'the 404s count nowhere; /test/current has nothing deprecated; 401s count nowhere')
})

t.test('a deprecation without a valid date, or a sunset before it, fails at start-up', async t => {
  t.throws(() => deprecationHeaders({ deprecated: true }, 'GET /x'), /GET \/x is deprecated without a valid x-deprecation/)
  t.throws(() => deprecationHeaders({ ...deprecated({ since: 'soon' }) }, 'GET /x'), /without a valid x-deprecation/)
  t.throws(() => deprecationHeaders({ ...deprecated({ since: '2026-11-01', sunset: '2026-10-01' }) }, 'GET /x'),
    /invalid x-sunset/)
  t.throws(() => deprecationHeaders({ ...deprecated({ since: '2026-11-01', sunset: 'Sat, 01 May 2027' }) }, 'GET /x'),
    /invalid x-sunset/)
  t.equal(deprecationHeaders({ tags: ['x'] }, 'GET /x'), undefined)

  const { app } = await buildTestApp(t)
  t.throws(() => app.get('/test/bad', { schema: { deprecated: true } }, async () => ({})), /without a valid x-deprecation/)
})

t.test('deprecated fields are found through shared schemas, arrays and unions; other answers are not read', async t => {
  const shared: Record<string, unknown> = {
    Inner: { type: 'object', properties: { old: { type: 'string', deprecated: true } } }
  }
  const schema = {
    response: {
      200: { content: { 'application/json': { schema: { anyOf: [{ $ref: 'Inner' }, { type: 'null' }] } } } },
      404: { type: 'object', properties: { gone: { type: 'string', deprecated: true } } }
    }
  }
  t.strictSame(deprecatedFields(schema, id => shared[id]), ['/old'])
})
