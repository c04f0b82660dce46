// `npm start` with its stdout piped to a log shipper that fails: SIGTERM still ends the process, at the
// default LOG_LEVEL, whether the reader died (every write fails with EPIPE) or stopped reading (the pipe is
// full). pino's own destination retried the write every 100 ms without end, so neither ever exited.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { get, startServerProcess, type Exit, type ServerProcess } from '../helpers/real-servers.ts'

// Far longer than a shutdown takes even on a loaded machine (SHUTDOWN_GRACE_MS is 2 s here): reaching it
// means the process hangs.
const HANG_MS = 20_000

/**
 * The service (LOG_LEVEL unset: the default) with stdout piped to `sleep`, which never reads, as to a log
 * shipper; the test's own copy of the pipe is closed, so that process is its only reader.
 */
async function startWithLogReader (t: Test) {
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => sandbox.close())
  const reader = spawn('sleep', ['3600'], { stdio: ['pipe', 'ignore', 'ignore'] })
  t.teardown(() => { reader.kill('SIGKILL') })
  const server = await startServerProcess(t, {
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: PASSPORT_KEY,
    DEALER_API_KEY: DEALER_KEY,
    AUTH_JWT_SECRET: JWT_SECRET,
    SHUTDOWN_GRACE_MS: '2000'
  }, { stdout: reader.stdin!, covered: true })
  reader.stdin!.destroy()
  return { server, reader }
}

/** How the process ended after SIGTERM, or a sentence saying it still runs. */
async function terminated (server: ServerProcess): Promise<Exit | string> {
  server.child.kill('SIGTERM')
  return await Promise.race([server.exited,
    sleep(HANG_MS, `still running ${HANG_MS} ms after SIGTERM`, { ref: false })])
}

t.test('SIGTERM with stdout piped to a reader that has died (EPIPE): the process exits', async t => {
  const { server, reader } = await startWithLogReader(t)
  // A crashed log shipper: every write to stdout now fails with EPIPE.
  reader.kill('SIGKILL')
  await once(reader, 'exit')
  t.equal((await get(`${server.url}/health/live`)).status, 200, 'still serving with no one reading its logs')
  t.strictSame(await terminated(server), { code: 0, signal: null }, 'exited, and cleanly')
})

t.test('SIGTERM with stdout piped to a reader that never reads (a full pipe): the process exits', async t => {
  const { server } = await startWithLogReader(t)
  // Each access line carries the URL: about 4 MB of lines fill any pipe or socket buffer many times over.
  const path = `/nope/${'x'.repeat(4000)}`
  for (let round = 0; round < 100; round++) {
    await Promise.all(Array.from({ length: 10 }, async () => { await get(`${server.url}${path}`).catch(() => {}) }))
  }
  t.equal((await get(`${server.url}/health/live`)).status, 200, 'still serving while its log pipe is full')
  t.strictSame(await terminated(server), { code: 0, signal: null }, 'exited, and cleanly')
})
