// A stranger against every route the service serves (the registry's and the plugins' own: docs, Swagger UI's files,
// health, metrics, the console, CORS preflight, a 404), with no credentials, over real sockets to an instance run as
// npm start runs it: pipelined floods that never read, headers past the limit, every encoding. The instance lives,
// its RSS grows within a bound, an honest client is still served, and every answer read has a documented status and
// a catalog code. First the flood that killed an instance: two connections, each 2,500 pipelined GET /docs/json in
// one write, never reading (RSS 143 -> 354 MiB and SIGABRT in about 3 s). Work and memory are asserted, never time.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { startEnv, startFlags } from '../../scripts/start-command.ts'
import { errorCodes } from '../../src/errors.ts'
import { buildTestApp, CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { get, WITHOUT_COVERAGE, type HttpResult } from '../helpers/real-servers.ts'
import { servedRoutes } from '../helpers/routes.ts'
import { untilListening, type LogLine } from '../helpers/server-logs.ts'
import { hs256 } from '../helpers/tokens.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const METRICS_KEY = 'metrics-key-for-tests-0123456789'
const ORIGIN = 'https://app.test'
const BUNDLE = '/docs/static/swagger-ui-bundle.js'
/**
 * What all the floods together (some 27,000 requests on 77 connections) may add to the instance's RSS: a quarter of
 * npm start's heap. Measured 20-49 MiB, most of it the heap's high-water mark: node:http makes the objects of every
 * request of a chunk it has read before the service can refuse them (at most a 64 KiB read's worth a connection).
 */
const RSS_GROWTH_BOUND_MIB = 64
/** Past what one connection may have waiting (8 running, 56 waiting), so every flood is cut by the service. */
const FLOOD = 300
const ENCODINGS = ['br', 'gzip', 'deflate', 'identity', 'gzip;q=0, br;q=0, *;q=0', 'garbage, x-unknown;q=1']
/** The statuses a stranger may get; a 5xx (but shedding's 503) is a failure. */
const DOCUMENTED = new Set([200, 204, 302, 304, 400, 401, 404, 405, 411, 413, 415, 429, 431, 503])
const catalog = new Set<string>(errorCodes)

interface Probe { method: string, path: string, headers: Record<string, string>, body?: string }

/** One request of each route the app serves, as a stranger would send it: no credentials, a body where one goes. */
async function everyRoute (t: Test): Promise<Probe[]> {
  const { app } = await buildTestApp(t, { METRICS_API_KEY: METRICS_KEY, CORS_ORIGINS: ORIGIN })
  await app.ready()
  return servedRoutes(app.printRoutes({ commonPrefix: false })).map((route): Probe => {
    const [method, path] = route.split(' ') as [string, string]
    if (method === 'OPTIONS') {
      return { method, path: '/api/users/profile', headers: { origin: ORIGIN, 'access-control-request-method': 'GET' } }
    }
    const probe: Probe = { method, path: path.includes('*') ? BUNDLE : path, headers: {} }
    return method === 'POST'
      ? { ...probe, headers: { 'content-type': 'application/json' }, body: '{"operation":"passport.get_client"}' }
      : probe
  }).concat({ method: 'GET', path: '/no/such/route', headers: {} })
}

function wire ({ method, path, headers, body }: Probe, extra: Record<string, string> = {}): string {
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }
  const fields = Object.entries({ host: 'bff.test', ...headers, ...extra, ...length })
  const head = fields.map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${body ?? ''}`
}

/** A connection that writes `requests` at once and never reads; destroyed by the test's end. */
function flood (t: Test, port: number, requests: string): Socket {
  const socket = connect(port, '127.0.0.1')
  socket.pause()
  socket.on('error', () => {})
  socket.write(requests)
  t.teardown(() => { socket.destroy() })
  return socket
}

/** One request on its own connection, read to its end: status, headers, the raw body. */
function exchange (port: number, request: string): Promise<{ head: string, status: number, body: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', chunk => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const all = Buffer.concat(chunks)
      const split = all.indexOf('\r\n\r\n')
      const head = all.subarray(0, split).toString('latin1')
      resolve({ head, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body: all.subarray(split + 4) })
    })
    // Connection: close, so the answer ends with the connection whatever its framing (and no half-close: node:http
    // drops the requests in flight of a connection whose client has ended its side).
    socket.write(request.replace('\r\n', '\r\nconnection: close\r\n'))
  })
}

const headerOf = (head: string, name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]

function rssMiB (pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
}

t.test('a stranger on every route: the instance lives, its memory is bounded, honest callers are served',
  { skip: process.platform === 'linux' ? false : 'RSS is read from /proc' }, async t => {
    t.setTimeout(180_000)
    const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
    t.teardown(() => sandbox.close())
    const probes = await everyRoute(t)
    t.ok(probes.some(p => p.path === '/docs/json') && probes.some(p => p.path === BUNDLE) &&
      probes.some(p => p.path === '/metrics') && probes.some(p => p.method === 'POST'), 'every kind of route is listed')

    // As npm start runs it, its Node flags (the 256 MiB heap) and environment, but for a small young generation: V8
    // keeps up to three semi-spaces of pages whatever the heap holds, and at npm start's size (32 MiB) they would
    // swamp what the floods hold (test/profile/memory-bound.test.ts does the same; the bench prices the flags).
    const flags = [
      ...startFlags().filter(flag => !flag.startsWith('--max-semi-space-size=')), '--max-semi-space-size=4'
    ]
    // An empty working directory: src/server.ts reads `.env` from it, and a developer's must not reach this test.
    const cwd = mkdtempSync(join(tmpdir(), 'bff-stranger-'))
    t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
    const child = spawn(process.execPath, [...flags, join(ROOT, 'src/server.ts')], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        ...startEnv(),
        ...WITHOUT_COVERAGE,
        HOST: '127.0.0.1',
        PORT: '0',
        UPSTREAM_URL: sandbox.url,
        PASSPORT_API_KEY: PASSPORT_KEY,
        DEALER_API_KEY: DEALER_KEY,
        AUTH_JWT_SECRET: JWT_SECRET,
        CONSOLE_API_KEY: CONSOLE_KEY,
        METRICS_API_KEY: METRICS_KEY,
        CORS_ORIGINS: ORIGIN,
        LOG_LEVEL: 'info',
        // As every test instance: a loaded machine lags a young process's loop past the shedding bound.
        UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
      }
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (text: string) => { stderr += text })
    const exited = new Promise<string>(resolve => {
      child.once('exit', (code, signal) => resolve(`${code ?? signal}`))
    })
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    })
    const logs: LogLine[] = []
    const origin = await untilListening(child, logs, () => stderr)
    const port = Number(new URL(origin).port)
    const honest = { authorization: `Bearer ${hs256()}` }
    const served = async (what: string) => {
      const answer: HttpResult = await get(`${origin}/api/users/profile`, honest)
      t.equal(answer.status, 200, `an honest client is served ${what}`)
    }

    // Warm: every route once in every encoding (each public answer's encodings are made at their first request).
    await served('at start')
    const statuses = new Set<number>()
    for (const probe of probes) {
      for (const encoding of ENCODINGS) {
        const { head, status, body } = await exchange(port, wire(probe, { 'accept-encoding': encoding }))
        statuses.add(status)
        const sent = headerOf(head, 'content-encoding')
        if (sent !== undefined) {
          t.ok(['br', 'gzip'].includes(sent) && encoding.includes(sent) && !encoding.includes(`${sent};q=0`),
            `${probe.method} ${probe.path} (${encoding}): sent ${sent}`)
        }
        if (!DOCUMENTED.has(status)) t.fail(`${probe.method} ${probe.path} (${encoding}): status ${status}`)
        if (status >= 400 && probe.method !== 'HEAD') {
          const plain = sent === undefined ? body.toString() : ''
          if (plain !== '') {
            const code = (JSON.parse(plain) as { code?: string }).code
            if (code === undefined || !catalog.has(code)) t.fail(`${probe.method} ${probe.path}: code ${code}`)
          }
        }
      }
      // Headers past Node's 16 KiB: 431 with the catalog's body, whatever the route.
      const { status, body } = await exchange(port, wire(probe, { 'x-padding': 'a'.repeat(20 * 1024) }))
      t.equal(status, 431, `${probe.method} ${probe.path}: oversized headers`)
      t.equal((JSON.parse(body.toString()) as { code: string }).code, 'HEADERS_TOO_LARGE')
    }
    t.notOk([...statuses].some(status => status >= 500 && status !== 503), `no 5xx: ${[...statuses].join(', ')}`)
    const before = rssMiB(child.pid!)

    // The flood that killed an instance, then every route flooded the same way, in every encoding.
    const docsFlood = wire({ method: 'GET', path: '/docs/json', headers: {} }, { 'accept-encoding': 'gzip' })
    flood(t, port, docsFlood.repeat(2500))
    flood(t, port, docsFlood.repeat(2500))
    await served('after two connections of 2,500 pipelined /docs/json each')
    for (const probe of probes) {
      for (const encoding of ['identity', 'gzip', 'br']) {
        flood(t, port, wire(probe, { 'accept-encoding': encoding }).repeat(FLOOD))
      }
    }
    await served('after a pipelined flood of every route')
    const after = rssMiB(child.pid!)
    t.equal(child.exitCode ?? child.signalCode, null, 'the instance lives')
    t.ok(after - before <= RSS_GROWTH_BOUND_MIB,
      `RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MiB (at most ${RSS_GROWTH_BOUND_MIB} MiB more)`)
  })
