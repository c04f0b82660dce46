// Contract tests for CI: every upstream operation through the real upstream client, its answer checked
// against schemas/, each drifted field reported by path. Against a sandbox started here by default; against
// a real upstream when all CONTRACT_* variables below are set. Failure messages carry field paths and
// statuses only, never answer values or keys, so CI logs hold no client data.
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { request } from 'undici'
import { UNKNOWN } from '../../schemas/fixtures.ts'
import type { PassportClientFound } from '../../schemas/passport.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { createUpstreamClient, type Exchange } from '../../src/upstream/client.ts'
import {
  operationNames, operations, type KeyName, type OperationName,
  type ParamsOf
} from '../../schemas/operations.ts'

const REAL_UPSTREAM_ENV = [
  'CONTRACT_UPSTREAM_URL',
  'CONTRACT_PASSPORT_API_KEY',
  'CONTRACT_DEALER_API_KEY',
  'CONTRACT_VENDOR',
  'CONTRACT_LOGIN',
  'CONTRACT_UID'
] as const

interface Target {
  description: string
  baseUrl: string
  keys: Record<KeyName, string>
  /** A client the upstream knows. */
  known: { vendor: string, login: string, uid_client: string }
  timeoutMs: number
}

type Resolved = { kind: 'sandbox' } | { kind: 'real', target: Target } | { kind: 'incomplete', missing: string[] }

function resolveTarget (env: NodeJS.ProcessEnv): Resolved {
  const missing = REAL_UPSTREAM_ENV.filter(name => (env[name] ?? '') === '')
  if (missing.length === REAL_UPSTREAM_ENV.length) return { kind: 'sandbox' }
  if (missing.length > 0) return { kind: 'incomplete', missing }
  const value = (name: typeof REAL_UPSTREAM_ENV[number]) => env[name] as string
  return {
    kind: 'real',
    target: {
      description: `the upstream at ${new URL(value('CONTRACT_UPSTREAM_URL')).origin}`,
      baseUrl: value('CONTRACT_UPSTREAM_URL'),
      keys: { passport: value('CONTRACT_PASSPORT_API_KEY'), dealer: value('CONTRACT_DEALER_API_KEY') },
      known: { vendor: value('CONTRACT_VENDOR'), login: value('CONTRACT_LOGIN'), uid_client: value('CONTRACT_UID') },
      timeoutMs: 15_000
    }
  }
}

/** The operation's params, taken from a client by the names its params schema declares. */
function paramsFor<N extends OperationName> (name: N, who: Target['known']): ParamsOf<N> {
  const fields = Object.keys(operations[name].params.properties) as (keyof Target['known'])[]
  return Object.fromEntries(fields.map(field => [field, who[field]])) as ParamsOf<N>
}

/** One line naming the answer and every drifted field path. */
function driftReport (ex: Exchange): string {
  const head = `${ex.operation}: HTTP ${ex.status}, outcome ${ex.outcome}`
  if (ex.contract.errors.length === 0) return head
  return `${head}; drifted: ${ex.contract.errors.map(e => `${e.path} (${e.message})`).join(', ')}`
}

/** A sandbox upstream for this run, serving the seed; closed when the tests end. */
async function startSandboxTarget (): Promise<Target> {
  const keys = { passport: randomUUID(), dealer: randomUUID() }
  const sandbox = await startSandboxUpstream({ keys })
  t.teardown(() => sandbox.close())
  return { description: 'the sandbox upstream', baseUrl: sandbox.url, keys, known: ivanov.identity, timeoutMs: 5000 }
}

const resolved = resolveTarget(process.env)

if (resolved.kind === 'incomplete') {
  t.fail(`Contract tests against a real upstream need all of ${REAL_UPSTREAM_ENV.join(', ')}; ` +
    `missing: ${resolved.missing.join(', ')}. Set them all, or none to test against the sandbox.`)
} else {
  const target = resolved.kind === 'real' ? resolved.target : await startSandboxTarget()
  t.comment(`contract of ${target.description}`)
  const client = createUpstreamClient({ baseUrl: target.baseUrl, keys: target.keys, timeoutMs: target.timeoutMs })
  t.teardown(() => client.close())

  for (const name of operationNames) {
    t.test(`${name} answers a known client as the schemas say`, async t => {
      const params = paramsFor(name, target.known)
      t.strictSame(client.contracts[name].params.errors(params), [], `the known client makes valid ${name} params`)
      const ex = await client.exchange(name, params)
      const unknown = ex.outcome === 'not_found' ? ' (the upstream does not know the CONTRACT_* client)' : ''
      t.equal(ex.outcome, 'ok', driftReport(ex) + unknown)
      t.strictSame(ex.contract.errors, [], driftReport(ex))
    })
  }

  t.test('an unslashed operation path answers 307 to the same path with a slash', async t => {
    const base = new URL(target.baseUrl)
    const basePath = base.pathname.replace(/\/+$/, '')
    for (const name of operationNames) {
      const op = operations[name]
      const url = new URL(basePath + op.path, base)
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-authorization': target.keys[op.key] },
        body: JSON.stringify(paramsFor(name, target.known)),
        signal: AbortSignal.timeout(target.timeoutMs)
      })
      await res.body.dump()
      t.equal(res.statusCode, 307, `${name}: POST ${url.pathname}`)
      const location = res.headers.location
      t.type(location, 'string', `${name}: a Location header`)
      if (typeof location !== 'string') continue
      const next = new URL(location, url)
      t.equal(next.origin, url.origin, `${name}: the redirect stays on the same origin (the client refuses others)`)
      t.equal(next.pathname, url.pathname + '/', `${name}: the redirect names the slash path`)
    }
  })

  t.test('the passport answers CLIENT_NOT_FOUND for an unknown client', async t => {
    const op = operations['passport.get_client']
    const ex = await client.exchange('passport.get_client', { ...UNKNOWN, vendor: target.known.vendor })
    t.equal(ex.status, op.notFound.status, driftReport(ex))
    t.equal(ex.outcome, 'not_found', driftReport(ex))
    t.strictSame(ex.contract.errors, [], driftReport(ex))
  })
}

// The harness itself: an answer that drifted is reported field by field.
t.test('a drifted answer is reported by field path', async t => {
  const keys = { passport: randomUUID(), dealer: randomUUID() }
  const passport = structuredClone(ivanov.passport) as Record<string, any>
  passport.client.login = Number(passport.client.login)
  passport.catalog_cars_favourites[0].is_my = 'yes'
  const sandbox = await startSandboxUpstream({
    keys, clients: [{ ...ivanov, passport: passport as PassportClientFound }]
  })
  t.teardown(() => sandbox.close())
  const client = createUpstreamClient({ baseUrl: sandbox.url, keys, timeoutMs: 5000 })
  t.teardown(() => client.close())
  const ex = await client.exchange('passport.get_client', ivanov.identity)
  t.equal(ex.outcome, 'contract')
  t.strictSame(ex.contract.errors.map(e => e.path).sort(), ['/catalog_cars_favourites/0/is_my', '/client/login'])
  t.match(driftReport(ex), /^passport\.get_client: HTTP 200, outcome contract; drifted: .*\/client\/login/)
  t.match(driftReport(ex), '/catalog_cars_favourites/0/is_my')
})
