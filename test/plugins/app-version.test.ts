// x-app-version over real HTTP (the app listens on a free port): MIN_APP_VERSION's 426 before anything else, the
// 400 of a malformed header, requests without it served as before, the access log's field, the OpenAPI header,
// and bff_app_version_requests_total's bounded labels (the most frequent versions by name, the rest as other),
// moved only by verified tokens and named only once several callers sent a version.
import { Writable } from 'node:stream'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { loggerOptions } from '../../src/logger.ts'
import { createAppVersionCounts } from '../../src/plugins/app/app-version/metrics.ts'
import { buildTestApp, configProblems, testConfig, type TestApp } from '../helpers/build-app.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'
import { respondToOperations } from '../helpers/upstream-mock.ts'

const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const PROFILE = '/api/users/profile'

/** Every upstream operation of a profile answers well, as often as asked. */
function upstreamFine (upstream: TestApp['upstream']): void {
  respondToOperations(upstream, {
    'passport.get_client': { status: 200, body: fx.passportFound, persist: true },
    'dealer.discount': { status: 200, body: fx.discountWithBonuses, persist: true },
    'dealer.client': { status: 200, body: fx.contractorResult, persist: true }
  })
}

async function listening (app: TestApp['app']): Promise<string> {
  return await app.listen({ port: 0, host: '127.0.0.1' })
}

async function get (origin: string, version: string | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(`${origin}${PROFILE}`, {
    headers: { ...headers, ...(version === undefined ? {} : { 'x-app-version': version }) }
  })
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, unknown> }
}

t.test('MIN_APP_VERSION: older is 426 before the token is even read, newer and none are served', async t => {
  const { app, upstream } = await buildTestApp(t, { MIN_APP_VERSION: '2.3.0' })
  upstreamFine(upstream)
  const origin = await listening(app)
  const token = bearer(hs256())

  for (const old of ['2.2.9', '1.99.99', '2.3.0-rc.1']) {
    const res = await get(origin, old, token)
    t.equal(res.status, 426, `${old} is older`)
    t.strictSame(res.body, {
      statusCode: 426,
      code: 'APP_UPDATE_REQUIRED',
      error: 'Upgrade Required',
      message: 'This version of the app is no longer supported; update the app to version 2.3.0 or later',
      min_app_version: '2.3.0'
    })
    t.ok(res.headers.get('x-request-id'), 'an error answer like any other')
  }
  const russian = await get(origin, '2.2.9', { ...token, 'accept-language': 'ru' })
  t.match(russian.body, { code: 'APP_UPDATE_REQUIRED', min_app_version: '2.3.0', message: /до версии 2\.3\.0/ },
    'the same field in every language')
  t.notOk('min_app_version' in (await get(origin, undefined)).body, 'no other error carries it')
  const anonymous = await get(origin, '1.0.0')
  t.equal(anonymous.status, 426, 'without a token too: the app must update before anything else helps')

  for (const version of ['2.3.0', '2.3.1', '10.0.0', '2.3.0+build.7', undefined]) {
    const res = await get(origin, version, token)
    t.equal(res.status, 200, `${version ?? 'no header'} is served`)
    t.equal(res.body.uid_client, fx.IVANOV.uid_client)
  }
  t.equal((await get(origin, undefined)).status, 401, 'without the header, as before: the token decides')
})

t.test('numbers past what semver compares (2^53 and more) are 400, never 500: GET and HEAD, with and without ' +
  'a token', async t => {
  const { app, upstream } = await buildTestApp(t, { MIN_APP_VERSION: '2.3.0' })
  upstreamFine(upstream)
  const origin = await listening(app)
  const token = bearer(hs256())
  for (const huge of ['99999999999999999.0.0', '9007199254740992.0.0', '1.99999999999999999.0', '1.0.9007199254740993',
    '1000000000.0.0']) {
    for (const method of ['GET', 'HEAD']) {
      for (const headers of [token, {}]) {
        const res = await fetch(`${origin}${PROFILE}`, { method, headers: { ...headers, 'x-app-version': huge } })
        const what = `${method} ${huge} ${'authorization' in headers ? 'with' : 'without'} a token`
        t.equal(res.status, 400, what)
        if (method === 'GET') t.match(await res.json(), { statusCode: 400, code: 'BAD_REQUEST' }, what)
        else t.equal(await res.text(), '', what)
      }
    }
  }
  const largest = await get(origin, '999999999.999999999.999999999', token)
  t.equal(largest.status, 200, 'nine digits a part is a version')
  t.equal((await get(origin, '2.2.999999999', token)).status, 426, 'and compares as one')
})

t.test('unset MIN_APP_VERSION serves every well-formed version', async t => {
  const { app, upstream } = await buildTestApp(t)
  upstreamFine(upstream)
  const origin = await listening(app)
  t.equal((await get(origin, '0.0.1', bearer(hs256()))).status, 200)
})

t.test('a malformed x-app-version is 400 BAD_REQUEST naming the expected form, with or without a minimum', async t => {
  for (const env of [{}, { MIN_APP_VERSION: '1.0.0' }]) {
    const { app } = await buildTestApp(t, env)
    const origin = await listening(app)
    for (const bad of ['v2.3.0', '2.3', '2.3.0.1', '02.3.0', 'latest', '2.3.0 beta', '1.0.0, 2.0.0',
      `1.0.0-${'a'.repeat(80)}`]) {
      const res = await get(origin, bad, bearer(hs256()))
      t.equal(res.status, 400, JSON.stringify(bad))
      t.match(res.body, {
        statusCode: 400,
        code: 'BAD_REQUEST',
        message: 'x-app-version must be a semantic version such as 2.14.0 (MAJOR.MINOR.PATCH, ' +
          'optionally -prerelease and +build)'
      })
    }
  }
})

t.test('MIN_APP_VERSION is checked at start-up', async t => {
  t.strictSame(configProblems({ MIN_APP_VERSION: '2.3.0' }), [])
  t.equal(testConfig({ MIN_APP_VERSION: '' }).MIN_APP_VERSION, undefined, 'empty is unset')
  for (const bad of ['2.3', 'v2.3.0', '>=2.3.0', 'latest']) {
    t.strictSame(configProblems({ MIN_APP_VERSION: bad }), ['MIN_APP_VERSION has an invalid value'], bad)
  }
})

t.test('the access line names the well-formed version, and only that', async t => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const config = testConfig({ LOG_LEVEL: 'info' })
  const { app } = await buildTestApp(t, { LOG_LEVEL: 'info' }, { logger: { ...loggerOptions(config), stream } })
  const origin = await listening(app)
  await get(origin, '3.4.5', { 'x-request-id': 'version-line-1' })
  await get(origin, undefined, { 'x-request-id': 'version-line-2' })
  await get(origin, 'not-a-version', { 'x-request-id': 'version-line-3' })
  const access = lines.map(line => JSON.parse(line) as Record<string, unknown>)
    .filter(line => line.msg === 'request completed')
  const byId = new Map(access.map(line => [line.reqId, line]))
  t.match(byId.get('version-line-1'), { appVersion: '3.4.5', res: { statusCode: 401 } })
  t.notOk('appVersion' in (byId.get('version-line-2') ?? {}), 'no header, no field')
  t.match(byId.get('version-line-3'), { res: { statusCode: 400 } })
  t.notOk('appVersion' in (byId.get('version-line-3') ?? {}), 'a refused value is not logged')
})

t.test('the OpenAPI document: the header with its format, and the 400 and 426 answers', async t => {
  const { app } = await buildTestApp(t)
  const op = (await app.inject('/docs/json')).json().paths[PROFILE].get
  const header = op.parameters.find((p: { name: string }) => p.name === 'x-app-version')
  t.match(header, { in: 'header', required: false, example: '2.14.0', schema: { type: 'string', maxLength: 64 } })
  t.equal(header.schema.pattern.slice(0, 11), '^(?:0|[1-9]', 'the semver.org grammar')
  t.match(header.description, /semver\.org 2\.0\.0/)
  t.match(op.responses['426'].content['application/json'].examples.APP_UPDATE_REQUIRED.value,
    { statusCode: 426, code: 'APP_UPDATE_REQUIRED', min_app_version: '2.14.0' })
  const errorBody = (await app.inject('/docs/json')).json().components.schemas.ErrorBody
  t.match(errorBody.properties.min_app_version, { type: 'string', description: /APP_UPDATE_REQUIRED/ },
    'min_app_version is declared, so generated models carry it')
  t.notOk(errorBody.required.includes('min_app_version'), 'optional: only the 426 has it')
  t.ok(op.responses['400'].content['application/json'].examples.BAD_REQUEST)
})

function samples (text: string, name: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const match of text.matchAll(new RegExp(`^${name}\\{app_version="([^"]*)"\\} (\\S+)$`, 'gm'))) {
    found.set(match[1]!, Number(match[2]))
  }
  return found
}

/** A valid token of its own for each of `n` callers: subjects differ, the rest is the fixture's. */
const tokensOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => bearer(hs256(claimsFor(
  { ...fx.IVANOV, uid_client: `${prefix}${String(i).padStart(7, '0')}-0000-4000-8000-000000000000` }))))
const callerTokens = tokensOf('A', 3)

async function scrapeVersions (origin: string): Promise<Map<string, number>> {
  const res = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_KEY}` } })
  return samples(await res.text(), 'bff_app_version_requests_total')
}

t.test('the counts: versions ranked by distinct callers, the top by name, the rest as other, none apart', async t => {
  const counts = createAppVersionCounts({ callers: 3 })
  const versions = Array.from({ length: 50 }, (_, i) => `1.${i}.0`)
  // Every version from three callers: the third names it while the top has room (the first twenty).
  for (const version of versions) for (const caller of ['a', 'b', 'c']) counts.record(version, caller)
  // One caller sending 1.0.0 to 1.19.0 a hundred times more: requests do not rank, callers do.
  for (let round = 0; round < 100; round++) for (const version of versions.slice(20, 30)) counts.record(version, 'a')
  // Two more callers of 1.30.0 to 1.49.0: they overtake the first twenty.
  for (const version of versions.slice(30)) for (const caller of ['d', 'e']) counts.record(version, caller)
  for (let i = 0; i < 3; i++) counts.record(undefined, 'b')
  const counted = new Map(counts.samples())
  t.strictSame([...counted.keys()].sort(), ['none', 'other', ...versions.slice(30)].sort(), 'top 20, other, none')
  t.equal(counted.get('none'), 3)
  // Each of the top twenty counts under its name from the request that took it there (its fourth caller's).
  for (const version of versions.slice(30)) t.equal(counted.get(version), 2, version)
  t.equal(counted.get('other'), 50 * 2 + 30 + 1000, 'the first two callers of each, the third of 1.20.0 to 1.49.0, ' +
    'the hundred rounds')
})

t.test('the metric moves only for verified tokens whose request was not refused', async t => {
  const { app, upstream } = await buildTestApp(t, {
    METRICS_API_KEY: METRICS_KEY,
    MIN_APP_VERSION: '1.0.0',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000',
    RATE_LIMIT_PROFILE_PER_MINUTE: '2'
  })
  upstreamFine(upstream)
  const origin = await listening(app)
  const forged = bearer(hs256(claimsFor(), 'another-secret-of-at-least-32-characters!'))
  for (let i = 0; i < 30; i++) {
    t.equal((await get(origin, `7.${i}.0`)).status, 401, 'no token')
    t.equal((await get(origin, `7.${i}.0`, forged)).status, 401, 'a token of another key')
    t.equal((await get(origin, `0.${i}.0`, callerTokens[0])).status, 426, 'too old: refused before the token')
  }
  t.strictSame(Object.fromEntries(await scrapeVersions(origin)), { none: 0, other: 0 },
    'strangers and 426s count nowhere')
  // Answered, not refused: 502, since the fixture's passport is IVANOV's and not this caller's; an answer counts.
  for (let i = 0; i < 2; i++) t.equal((await get(origin, `8.${i}.0`, callerTokens[0])).status, 502)
  for (let i = 2; i < 30; i++) t.equal((await get(origin, `8.${i}.0`, callerTokens[0])).status, 429)
  t.strictSame(Object.fromEntries(await scrapeVersions(origin)), { none: 0, other: 2 },
    'an account past its limit: only its two accepted requests count')
})

t.test('five accounts can neither name a version nor push a real one into other, 429s or not', async t => {
  const { app, upstream } = await buildTestApp(t, { METRICS_API_KEY: METRICS_KEY, RATE_LIMIT_PROFILE_PER_MINUTE: '2' })
  upstreamFine(upstream)
  // Real releases: 3.3.0 and 2.9.0, fifty callers each.
  const honest = { '3.3.0': tokensOf('B', 50), '2.9.0': tokensOf('C', 50) }
  for (const [version, tokens] of Object.entries(honest)) {
    for (const token of tokens) {
      // Answered (502: the fixture's passport is IVANOV's, not this caller's): an answer, not a refusal, counts.
      const res = await app.inject({ url: PROFILE, headers: { ...token, 'x-app-version': version } })
      t.equal(res.statusCode, 502)
    }
  }
  const before = Object.fromEntries(new Map(app.appVersions!.samples()))
  t.strictSame(before, { none: 0, other: 49 * 2, '3.3.0': 1, '2.9.0': 1 }, 'each named by its fiftieth caller')
  // Five accounts, 22 made-up versions (enough to fill the top), eleven requests each: 1,210 requests, all but
  // each account's first two refused 429.
  const made = Array.from({ length: 22 }, (_, i) => `9.${i}.0`)
  const attackers = tokensOf('D', 5)
  let limited = 0
  for (const version of made) {
    for (const token of attackers) {
      for (let i = 0; i < 11; i++) {
        const res = await app.inject({ url: PROFILE, headers: { ...token, 'x-app-version': version } })
        if (res.statusCode === 429) limited++
      }
    }
  }
  t.equal(limited, 22 * 5 * 11 - 5 * 2, 'every attacker request past its two a minute is refused')
  const after = Object.fromEntries(new Map(app.appVersions!.samples()))
  t.strictSame(after, { none: 0, other: 49 * 2 + 5 * 2, '3.3.0': 1, '2.9.0': 1 },
    'no made-up version named, the real ones still named; only the ten accepted requests counted, as other')
})

t.test('the counts: exported counters never go down, labels stay bounded, a flood ' +
  'cannot lock out a release, a new release overtakes the old', async t => {
  let clock = 0
  const counts = createAppVersionCounts({ top: 3, tracked: 10, callers: 3, generationMs: 1000, now: () => clock })
  let previous = new Map<string, number>()
  let requests = 0
  // A release cycle: each release used by 20 callers, the next one rising every 40 steps; one-off junk versions
  // come and go from 2 accounts.
  for (let step = 0; step < 400; step++) {
    clock = step * 100
    const release = Math.floor(step / 40)
    const traffic: Array<[string, string]> = [[`1.${release}.0`, `caller-${step % 20}`],
      [`1.${release + 1}.0`, `caller-${(step % 20) + 20}`], [`9.9.${step}`, `junk-${step % 2}`]]
    for (const [version, caller] of traffic) {
      counts.record(version, caller)
      requests++
    }
    const now = new Map(counts.samples())
    t.ok(now.size <= 3 + 2, 'at most top + other + none')
    for (const [label, value] of now) {
      if ((previous.get(label) ?? 0) > value) t.fail(`${label} went down from ${previous.get(label)} to ${value}`)
    }
    previous = now
  }
  // A version pushed out of the top takes its named count with it; nothing is ever counted twice.
  t.ok([...previous.values()].reduce((a, b) => a + b) <= requests, 'never more than the requests')
  t.ok(previous.has('1.9.0'), 'the current release is named despite 400 one-off versions')
  t.ok(previous.has('1.10.0'), 'and the rising one')
  t.notOk(previous.has('1.0.0'), 'the first release has faded')
  t.notOk([...previous.keys()].some(label => label.startsWith('9.9.')), 'no junk version named')
  t.equal(counts.label('9.9.1'), 'other')
  t.equal(counts.label(null), 'none')
})
