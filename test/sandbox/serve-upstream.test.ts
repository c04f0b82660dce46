// `npm run sandbox`: the stand-in upstream alone, as an operator uses it before trying `npm start`: the printed
// lines go into a .env, the printed token command mints a token from it, `node src/server.ts` started beside that
// .env serves the seeded client's profile, and Ctrl-C stops the sandbox.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { ivanov } from '../../sandbox/seed.ts'
import { freePort, WITHOUT_COVERAGE } from '../helpers/real-servers.ts'
import { untilListening, type LogLine } from '../helpers/server-logs.ts'

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const VARIABLES = ['UPSTREAM_URL', 'PASSPORT_API_KEY', 'DEALER_API_KEY', 'AUTH_JWT_SECRET']

interface Sandbox { child: ChildProcess, output: () => string, exited: Promise<[number | null, string | null]> }

function startSandbox (env: Record<string, string>): Sandbox {
  const child = spawn(process.execPath, [root('sandbox/serve-upstream.ts')], {
    env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (text: string) => { output += text })
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { output += text })
  return { child, output: () => output, exited: once(child, 'exit') as Promise<[number | null, string | null]> }
}

/** Resolves with the output once `line` has been printed; rejects when the process exits first. */
async function untilPrinted (sandbox: Sandbox, line: string): Promise<string> {
  while (!sandbox.output().includes(line)) {
    const exited = sandbox.exited.then(() => 'exited' as const)
    const data = once(sandbox.child.stdout!, 'data').then(() => 'data' as const)
    if (await Promise.race([exited, data]) === 'exited' && !sandbox.output().includes(line)) {
      throw new Error(`the sandbox exited before printing "${line}": ${sandbox.output()}`)
    }
  }
  return sandbox.output()
}

t.test('the printed .env and token command get a profile from npm start against the sandbox', async t => {
  const sandbox = startSandbox({})
  t.teardown(() => { if (sandbox.child.exitCode === null) sandbox.child.kill('SIGKILL') })
  const output = await untilPrinted(sandbox, 'Ctrl-C stops the sandbox.')

  const printed = Object.fromEntries(output.split('\n').flatMap(line => {
    const match = /^([A-Z_]+)=(\S+)$/.exec(line)
    return match === null ? [] : [[match[1]!, match[2]!]]
  })) as Record<string, string>
  t.strictSame(Object.keys(printed), VARIABLES, 'the variables npm start needs, one a line')
  t.match(printed.UPSTREAM_URL, /^http:\/\/127\.0\.0\.1:\d+$/)

  const dir = mkdtempSync(join(tmpdir(), 'bff-sandbox-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, '.env'), VARIABLES.map(name => `${name}=${printed[name]}`).join('\n') + '\n')

  // The printed token command, run as written from the directory of that .env (npm run -s token is this script).
  const command = /TOKEN=\$\(npm run -s token -- ([^)]+)\)/.exec(output)?.[1]
  t.ok(command, 'a token command is printed')
  const args = command!.split(' ')
  t.equal(args[args.indexOf('--sub') + 1], ivanov.identity.uid_client, 'for a seeded client')
  const { stdout: token } = await promisify(execFile)(process.execPath, [root('scripts/token.ts'), ...args],
    { cwd: dir, env: { PATH: process.env.PATH ?? '' } })

  // npm start's entry, reading the same .env; only the address is chosen here, and event-loop shedding is off:
  // on a loaded machine the process's own start-up lags its loop past the bound and the first request got 503.
  // It ends with SIGKILL, so it runs without coverage (none would be written).
  const server = spawn(process.execPath, [root('src/server.ts')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...WITHOUT_COVERAGE
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const serverExited = once(server, 'exit')
  t.teardown(async () => {
    if (server.exitCode === null) server.kill('SIGKILL')
    await serverExited
  })
  let stderr = ''
  server.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  const logs: LogLine[] = []
  const url = await untilListening(server, logs, () => stderr)
  const answer = await fetch(`${url}/api/users/profile`, { headers: { authorization: `Bearer ${token.trim()}` } })
  t.equal(answer.status, 200, 'the profile is served')
  const profile = await answer.json() as { uid_client: string, degraded: string[], contractor: unknown }
  t.equal(profile.uid_client, ivanov.identity.uid_client)
  t.strictSame(profile.degraded, [], 'every section came from the sandbox')
  t.not(profile.contractor, null)

  // A test identity it prints, with a token from the same command: its state through npm start too.
  const line = output.split('\n').find(text => text.trimStart().startsWith('DISCOUNT_MISSING '))
  t.ok(line, 'the test identities are printed')
  const [, uid, login, vendor] = line!.trim().split(/\s+/)
  const { stdout: degradedToken } = await promisify(execFile)(process.execPath,
    [root('scripts/token.ts'), '--sub', uid!, '--login', login!, '--vendor', vendor!],
    { cwd: dir, env: { PATH: process.env.PATH ?? '' } })
  const degraded = await fetch(`${url}/api/users/profile`, {
    headers: { authorization: `Bearer ${degradedToken.trim()}` }
  })
  t.equal(degraded.status, 200)
  t.equal(degraded.headers.get('x-degraded'), 'discount', 'DISCOUNT_MISSING: the discount section degraded')

  sandbox.child.kill('SIGINT')
  const [code] = await sandbox.exited
  t.equal(code, 0, 'Ctrl-C stops it cleanly')
  t.match(sandbox.output(), /Sandbox upstream stopped\./)
})

t.test('SANDBOX_PORT picks the port; a bad one is named', async t => {
  const port = await freePort()
  const chosen = startSandbox({ SANDBOX_PORT: String(port) })
  t.teardown(() => { if (chosen.child.exitCode === null) chosen.child.kill('SIGKILL') })
  t.match(await untilPrinted(chosen, 'Ctrl-C'), `\nUPSTREAM_URL=http://127.0.0.1:${port}\n`)
  chosen.child.kill('SIGINT')
  t.equal((await chosen.exited)[0], 0)

  const bad = startSandbox({ SANDBOX_PORT: 'eighty' })
  const [code] = await bad.exited
  t.equal(code, 1)
  t.match(bad.output(), /^npm run sandbox: SANDBOX_PORT must be a port number/)
  t.equal(bad.output().trim().split('\n').length, 1, 'one line, no stack')
})
