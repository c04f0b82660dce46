// Shared by the property tests: the app over a MockAgent upstream that answers every operation as the
// sandbox would (seeded clients found, others not), what every answer owes its caller, and arbitraries
// for what HTTP lets a caller put in a header.
import fc from 'fast-check'
import type { Test } from 'tap'
import type { LightMyRequestResponse as InjectResponse } from 'fastify'
import { Compile } from 'typebox/compile'
import { ErrorBody } from '../../schemas/errors.ts'
import { Profile } from '../../schemas/profile.ts'
import { ConsoleAnswer } from '../../schemas/console.ts'
import { seededClients, unknownResponses } from '../../sandbox/seed.ts'
import { errorCodes } from '../../src/errors.ts'
import { operations } from '../../schemas/operations.ts'
import { buildTestApp, CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY, type TestApp } from '../helpers/build-app.ts'

const SECRETS = { PASSPORT_KEY, DEALER_KEY, CONSOLE_KEY, JWT_SECRET }

/** The statuses the routes document; anything else (an unmapped 500 first) is a bug. */
const DOCUMENTED = new Set([200, 304, 400, 401, 404, 413, 415, 426, 429, 502, 503, 504])
const catalog = new Set<string>(errorCodes)

const isErrorBody = Compile(ErrorBody)
const isProfile = Compile(Profile)
const isConsoleResponse = Compile(ConsoleAnswer)

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' }
/** The property app's MIN_APP_VERSION. */
export const MIN_APP_VERSION = '2.0.0'

/**
 * One app for a whole file: limits high and load shedding off, so every run reaches the route; a minimum app version
 * and a trusted proxy, so that x-app-version and the forwarded-for headers are read as in production.
 */
export async function propertyApp (t: Test): Promise<TestApp> {
  const built = await buildTestApp(t, {
    MIN_APP_VERSION,
    TRUST_PROXY: 'true',
    RATE_LIMIT_PROFILE_PER_MINUTE: '1000000',
    RATE_LIMIT_CONSOLE_PER_MINUTE: '1000000',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000',
    UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
  })
  const params = (body: unknown) => JSON.parse(String(body)) as Record<string, string>
  const byUid = (uid: string) => seededClients.find(c => c.identity.uid_client.toUpperCase() === uid.toUpperCase())
  const route = (path: string) => (p: string) => p === path || p === `${path}/`
  built.upstream.intercept({
    path: route(operations['passport.get_client'].path),
    method: 'POST'
  }).reply<object>(({ body }) => {
    const p = params(body)
    const client = seededClients.find(c => c.identity.vendor === p.vendor && c.identity.login === p.login &&
      c.identity.uid_client.toUpperCase() === p.uid_client?.toUpperCase())
    return client === undefined
      ? { statusCode: 400, data: unknownResponses.passport, responseOptions: { headers: JSON_TYPE } }
      : { statusCode: 200, data: client.passport, responseOptions: { headers: JSON_TYPE } }
  }).persist()
  built.upstream.intercept({ path: route(operations['dealer.discount'].path), method: 'POST' }).reply(({ body }) =>
    ({
      statusCode: 200,
      data: byUid(params(body).uid_client ?? '')?.discount ?? unknownResponses.discount,
      responseOptions: { headers: JSON_TYPE }
    })).persist()
  built.upstream.intercept({ path: route(operations['dealer.client'].path), method: 'POST' }).reply(({ body }) =>
    ({
      statusCode: 200,
      data: byUid(params(body).uid_client ?? '')?.contractor ?? unknownResponses.contractor,
      responseOptions: { headers: JSON_TYPE }
    })).persist()
  return built
}

/**
 * What every answer owes its caller, as a list of broken promises (empty when all hold): a documented
 * status, never an unmapped 500, an x-request-id, an exact ErrorBody for an error, the route's schema for
 * a 200, and no secret in any header or the body.
 */
function brokenPromises (res: InjectResponse, route: 'profile' | 'console'): string[] {
  const problems: string[] = []
  if (!DOCUMENTED.has(res.statusCode)) problems.push(`status ${res.statusCode} is not documented`)
  const requestId = res.headers['x-request-id']
  if (typeof requestId !== 'string' || requestId.length === 0) problems.push('no x-request-id')
  const head = JSON.stringify(res.headers)
  for (const [name, secret] of Object.entries(SECRETS)) {
    if (res.body.includes(secret) || head.includes(secret)) problems.push(`${name} in the answer`)
  }
  if (res.statusCode === 304) return problems
  let body: unknown
  try {
    body = JSON.parse(res.body)
  } catch {
    problems.push('the body is not JSON')
    return problems
  }
  if (res.statusCode >= 400) {
    if (!isErrorBody.Check(body)) problems.push(`not an ErrorBody: ${res.body.slice(0, 200)}`)
    else if (body.statusCode !== res.statusCode) {
      problems.push(`body statusCode ${body.statusCode} differs from ${res.statusCode}`)
    } else if (body.code === 'INTERNAL_ERROR') problems.push(`unmapped error: ${res.body}`)
    else if (!catalog.has(body.code)) problems.push(`code ${body.code} is not in the catalog`)
  } else if (res.statusCode === 200) {
    const check = route === 'profile' ? isProfile : isConsoleResponse
    if (!check.Check(body)) problems.push(`200 body breaks the ${route} schema`)
  }
  return problems
}

export function assertWellFormed (res: InjectResponse, route: 'profile' | 'console'): void {
  const problems = brokenPromises(res, route)
  if (problems.length > 0) throw new Error(problems.join('; '))
}

/** Runs a property as a subtest; a counterexample fails it with fast-check's report (seed and path to replay). */
export function holds<Ts extends [unknown, ...unknown[]]> (
  t: Test, name: string, property: fc.IAsyncPropertyWithHooks<Ts>, numRuns = 150
): Promise<unknown> {
  return t.test(name, async t => {
    const result = await fc.check(property, { numRuns })
    if (result.failed) t.fail(fc.defaultReportMessage(result) ?? 'property failed')
    else t.pass(`${result.numRuns} runs`)
  })
}

/** After the properties: the app still answers. */
export function stillServing (t: Test, app: TestApp['app']): Promise<unknown> {
  return t.test('the app still answers', async t => {
    t.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
  })
}

/** A character HTTP allows in a field value (RFC 9110 5.5): visible ASCII, space, tab, obs-text. */
const fieldChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map(c => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constant('\t') },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map(c => String.fromCharCode(c)) }
)

/** A field value: no leading or trailing whitespace, as parsers trim it. */
export const fieldValue = (maxLength = 200) => fc.string({ unit: fieldChar, maxLength }).map(v => v.trim())

/** A decimal number past 2^53 (where JavaScript numbers stop being exact), as text. */
export const pastSafeInteger = fc.bigInt({ min: 2n ** 53n - 2n, max: 10n ** 30n }).map(String)

/** A header name: an RFC 9110 token. */
export const headerName = fc.string({
  unit: fc.constantFrom(...'!#$%&\'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz'),
  minLength: 1,
  maxLength: 30
})
