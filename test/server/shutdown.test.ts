// `npm start` as a real process: it refuses to start on a bad configuration, and on SIGTERM it stops
// accepting, finishes the requests in flight within SHUTDOWN_GRACE_MS, and exits 0 as soon as they are
// done, keep-alive callers included (1 past the grace).
import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Agent, request as undiciRequest } from 'undici'
import { startSandboxUpstream, type SandboxUpstream } from '../../sandbox/upstream.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { get, startServerProcess, type ServerProcess } from '../helpers/real-servers.ts'
import { hs256 } from '../helpers/tokens.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// Each upstream answer (the 307 to the slash path included) is held this long, so a profile request
// is in flight for several of them: long enough to send a signal and probe the listener meanwhile.
const UPSTREAM_DELAY_MS = 500

/** The service against `sandbox`, at LOG_LEVEL=info unless `env` says otherwise. */
function serverEnv (sandbox: SandboxUpstream, env: Record<string, string> = {}): Record<string, string> {
  return {
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: PASSPORT_KEY,
    DEALER_API_KEY: DEALER_KEY,
    AUTH_JWT_SECRET: JWT_SECRET,
    LOG_LEVEL: 'info',
    ...env
  }
}

async function startServer (
  t: Test, sandbox: SandboxUpstream, env: Record<string, string> = {}
): Promise<ServerProcess> {
  // Each test ends the process with SIGTERM: its coverage of the shutdown is written.
  return await startServerProcess(t, serverEnv(sandbox, env), { covered: true })
}

/** Resolves with the error code of a refused connection; a connection that is accepted is closed and tried again. */
async function refusedConnection (url: string, inFlight: () => boolean): Promise<string> {
  const { hostname, port } = new URL(url)
  for (;;) {
    const outcome = await new Promise<string>(resolve => {
      const socket = connect(Number(port), hostname)
      socket.once('connect', () => { socket.destroy(); resolve('accepted') })
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
    })
    if (outcome !== 'accepted') return outcome
    if (!inFlight()) throw new Error('the listener still accepted connections once the in-flight request was answered')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

/** Waits until the sandbox has received the passport call at its slash path (and is holding its answer). */
async function passportReached (sandbox: SandboxUpstream): Promise<void> {
  while (sandbox.counts().byOperation['passport.get_client'] === 0) await new Promise(resolve => setTimeout(resolve, 5))
}

async function sandboxFor (t: Test, delayMs: number): Promise<SandboxUpstream> {
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY }, delayMs })
  t.teardown(() => sandbox.close())
  return sandbox
}

t.test('SIGTERM with a profile in flight: no new connection, the profile answered whole, exit 0', async t => {
  const sandbox = await sandboxFor(t, UPSTREAM_DELAY_MS)
  const server = await startServer(t, sandbox)

  let answered = false
  const profile = get(`${server.url}/api/users/profile`, { authorization: `Bearer ${hs256()}` })
    .finally(() => { answered = true })
  await passportReached(sandbox)
  t.ok(server.child.kill('SIGTERM'), 'signal sent')

  // Refused, or reset when it raced into the backlog as the listener closed: either way never served.
  t.match(await refusedConnection(server.url, () => !answered), /^(ECONNREFUSED|ECONNRESET)$/, 'a new connection is refused while the profile is still in flight')
  t.notOk(answered, 'the listener closed before the in-flight request was answered')

  const res = await profile
  t.equal(res.status, 200)
  const body = JSON.parse(res.body) as { degraded: string[], contractor: unknown }
  // The dealer calls start after the signal: the upstream agent is still open for them.
  t.strictSame(body.degraded, [], 'no section degraded by the shutdown')
  t.ok(body.contractor !== null, 'the contractor, loaded after the signal, is there')
  t.equal(sandbox.counts().total, 3, 'passport, discount and contractor all reached the upstream')

  t.strictSame(await server.exited, { code: 0, signal: null })
  const messages = server.logs.map(line => line.msg)
  t.ok(messages.includes('shutting down'), 'the signal is logged')
  t.ok(messages.indexOf('shut down') > messages.indexOf('shutting down'),
    'the close, upstream agent included, completed before the exit')
  t.notOk(server.logs.some(line => line.level >= 50), 'no error logged')
})

t.test('SIGTERM with a keep-alive caller and a profile in flight: answered whole, connections closed, ' +
  'exit 0 long before the grace', async t => {
  const sandbox = await sandboxFor(t, UPSTREAM_DELAY_MS)
  // A grace no test waits out: the process must exit because the work is done, not because time ran out.
  const server = await startServer(t, sandbox, { SHUTDOWN_GRACE_MS: '60000' })
  // Like a mobile HTTP stack or a balancer: connections kept alive far longer than the test.
  const agent = new Agent({ keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 })
  t.teardown(() => agent.destroy())
  // Counted against what the pool really opened: it may open one more for the profile when it has not yet
  // taken a just-answered connection back as free.
  const opened: string[] = []
  const closed: string[] = []
  agent.on('connect', () => { opened.push('connect') })
  agent.on('disconnect', () => { closed.push('disconnect') })

  // Two connections open and idle in the pool, then a profile on one of them.
  const live = await Promise.all([0,
    1].map(() => undiciRequest(`${server.url}/health/live`,
    { dispatcher: agent }).then(async res => { await res.body.dump(); return res.statusCode })))
  t.strictSame(live, [200, 200])
  t.equal(opened.length, 2, 'two connections opened')
  t.equal(closed.length, 0, 'both connections kept alive')
  const profile = undiciRequest(`${server.url}/api/users/profile`,
    { dispatcher: agent, headers: { authorization: `Bearer ${hs256()}` } })
  await passportReached(sandbox)
  t.ok(server.child.kill('SIGTERM'), 'signal sent')

  const res = await profile
  t.equal(closed.length, opened.length - 1, 'every idle connection was closed at once, before the answer')
  t.equal(res.statusCode, 200)
  t.equal(res.headers.connection, 'close', 'the answer in flight at the signal says the connection ends with it')
  const body = await res.body.json() as { degraded: string[] }
  t.strictSame(body.degraded, [], 'answered in full')

  const exit = await Promise.race([server.exited,
    sleep(30_000, 'still running after 30 s of a 60 s grace', { ref: false })])
  t.strictSame(exit, { code: 0, signal: null }, 'exited 0 once the work was done')
  t.equal(closed.length, opened.length,
    'the server closed every connection: the idle ones at once, the busy one after its answer')
  const messages = server.logs.map(line => line.msg)
  t.ok(messages.includes('shut down'), 'the close completed')
  t.notOk(messages.some(msg => msg.includes('outlived')), 'no "outlived" line: nothing outlived the grace')
  t.notOk(server.logs.some(line => line.level >= 50), 'no error logged')
})

t.test('past SHUTDOWN_GRACE_MS the process stops anyway, with exit code 1', async t => {
  const sandbox = await sandboxFor(t, 30_000)
  const server = await startServer(t, sandbox, { SHUTDOWN_GRACE_MS: '200' })

  const profile = get(`${server.url}/api/users/profile`, { authorization: `Bearer ${hs256()}` }).then(() => 'answered',
    (error: NodeJS.ErrnoException) => error.code)
  // The 307 is held first; wait for the request to reach the server at all before signalling.
  while (sandbox.counts().redirects === 0) await new Promise(resolve => setTimeout(resolve, 5))
  server.child.kill('SIGTERM')

  t.strictSame(await server.exited, { code: 1, signal: null })
  t.equal(await profile, 'ECONNRESET', 'the request that outlived the grace is cut off')
  t.ok(server.logs.some(line => line.msg.includes('outlived the shutdown grace') && line.graceMs === 200),
    'the timeout is logged with the grace')
})

t.test('npm start with a missing and a malformed variable exits non-zero, names both, never listens', async t => {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      // Empty counts as unset, and overrides any .env of the checkout.
      UPSTREAM_URL: '',
      PORT: 'eighty',
      PASSPORT_API_KEY: PASSPORT_KEY,
      DEALER_API_KEY: DEALER_KEY,
      AUTH_JWT_SECRET: JWT_SECRET
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => { stdout += text })
  child.stderr.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  t.not(code, 0)
  t.match(stderr, /UPSTREAM_URL is required/)
  t.match(stderr, /PORT /)
  t.notOk(stdout.includes('Server listening'), 'never listened')
  for (const secret of [PASSPORT_KEY, DEALER_KEY, JWT_SECRET]) {
    t.notOk(stderr.includes(secret) ||
      stdout.includes(secret), 'no secret printed')
  }
})
