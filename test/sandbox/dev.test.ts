// `npm run dev`: the runner in-process (its printed curl lines, run as written, show the seeded
// clients), and once as a real process that a person would start and stop with Ctrl-C.
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { IVANOV, PETROVA } from '../../schemas/fixtures.ts'
import { startDev } from '../../sandbox/dev.ts'
import { devSigningFile } from '../../sandbox/dev-secret.ts'
import { fetchUnlessShed } from '../helpers/shed-retry.ts'

const DEV_SCRIPT = fileURLToPath(new URL('../../sandbox/dev.ts', import.meta.url))
const TOKEN_SCRIPT = fileURLToPath(new URL('../../scripts/token.ts', import.meta.url))
const execFileAsync = promisify(execFile)

// An operator's settings that must not reach the sandbox run, from the environment or from .env.
const OPERATOR_ENV = {
  UPSTREAM_URL: 'http://127.0.0.1:9',
  PASSPORT_API_KEY: 'operator-passport-key',
  DEALER_API_KEY: 'operator-dealer-key',
  AUTH_JWT_SECRET: 'operator-secret-that-is-longer-than-32-characters',
  CONSOLE_API_KEY: 'operator-console-key-0123456789'
}

/** Splits a POSIX shell line into words; single quotes only, as the runner writes them. */
function shellWords (line: string): string[] {
  const words: string[] = []
  let word: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end === -1) throw new Error(`unbalanced quote in: ${line}`)
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (c === '\\') {
      word = (word ?? '') + line[++i]
    } else if (c === ' ') {
      if (word !== null) words.push(word)
      word = null
    } else {
      word = (word ?? '') + c
    }
  }
  if (word !== null) words.push(word)
  return words
}

/** What a printed curl line asks for, as fetch arguments; any flag not understood here fails the test. */
function fromCurl (line: string): { url: string, init: RequestInit } {
  const [command, ...args] = shellWords(line.trim())
  if (command !== 'curl') throw new Error(`not a curl line: ${line}`)
  const headers: Record<string, string> = {}
  let method = 'GET'
  let body: string | undefined
  let url: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '-sS') continue
    if (arg === '-X') method = args[++i]!
    else if (arg === '-H') {
      const header = args[++i]!
      const colon = header.indexOf(':')
      headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim()
    } else if (arg === '-d') body = args[++i]!
    else if (!arg.startsWith('-') && url === undefined) url = arg
    else throw new Error(`unexpected curl argument ${arg} in: ${line}`)
  }
  if (url === undefined) throw new Error(`no URL in: ${line}`)
  return { url, init: { method, headers, ...(body === undefined ? {} : { body }) } }
}

/** Runs a printed curl line with `send` (fetch, or fetchUnlessShed). */
async function curl (line: string, send: typeof fetchUnlessShed = fetch): Promise<{ status: number, body: any }> {
  const { url, init } = fromCurl(line)
  const res = await send(url, init)
  return { status: res.status, body: await res.json() }
}

t.test('with AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE set, the printed tokens carry them and are accepted', async t => {
  const run = await startDev({
    env: {
      PORT: '0',
      LOG_LEVEL: 'silent',
      AUTH_JWT_ISSUER: 'https://id.example',
      AUTH_JWT_AUDIENCE: 'dealer-app',
      AUTH_JWT_MAX_AGE_S: '3600'
    },
    log: { write: () => {} }
  })
  t.teardown(() => run.close())
  const token = run.clients[0]!.token
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
  t.match(claims, { iss: 'https://id.example', aud: 'dealer-app' })
  t.equal(claims.exp - claims.iat, 3600, 'never longer than the maximum age')
  const res = await fetch(`${run.url}/api/users/profile`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(res.status, 200)
  await res.body?.cancel()
})

t.test('in-process: the printed curl lines, run as written, answer the seeded profile and the console', async t => {
  let logs = ''
  const run = await startDev({
    env: { ...OPERATOR_ENV, PORT: '0' },
    log: { write: (text: string) => { logs += text } }
  })
  t.teardown(() => run.close())

  t.match(run.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'listens on the loopback by default')
  t.equal(run.docsUrl, `${run.url}/docs`)
  t.equal(new URL(run.sandbox.url).hostname, '127.0.0.1')
  t.not(run.sandbox.url, OPERATOR_ENV.UPSTREAM_URL, "the operator's upstream is not used")

  // The banner is what a person reads: every address, token and key they need, and the curl lines.
  const printed = [run.docsUrl, run.consoleKey, run.curl.profile, run.curl.console, ...run.clients.map(c => c.token)]
  for (const text of printed) {
    t.ok(run.banner.includes(text), `the banner shows ${text.slice(0, 40)}`)
  }
  t.strictSame(run.clients.map(c => c.label), ['IVANOV', 'PETROVA', 'UNKNOWN'])

  const profile = await curl(run.curl.profile)
  t.equal(profile.status, 200)
  t.equal(profile.body.uid_client, IVANOV.uid_client)
  t.equal(profile.body.client.login, IVANOV.login)
  t.equal(profile.body.catalog_cars_view.length, 4, 'the full seeded profile')
  t.strictSame(profile.body.degraded, [])

  const consoleResponse = await curl(run.curl.console)
  t.equal(consoleResponse.status, 200)
  t.match(consoleResponse.body, { operation: 'passport.get_client', status: 200, contract: { valid: true } })

  // The other printed tokens: PETROVA has bonuses, UNKNOWN meets the passport's 404.
  const bearer = (label: string) => ({ authorization: `Bearer ${run.clients.find(c => c.label === label)!.token}` })
  const petrova = await fetch(`${run.url}/api/users/profile`, { headers: bearer('PETROVA') })
  t.equal(petrova.status, 200)
  const petrovaBody = await petrova.json() as { client: { login: string }, discount: unknown }
  t.equal(petrovaBody.client.login, PETROVA.login)
  t.not(petrovaBody.discount, null, 'PETROVA has bonuses')
  const unknown = await fetch(`${run.url}/api/users/profile`, { headers: bearer('UNKNOWN') })
  t.equal(unknown.status, 404)
  t.equal((await unknown.json() as { code: string }).code, 'CLIENT_NOT_FOUND')

  const docs = await fetch(run.docsUrl)
  t.equal(docs.status, 200, 'Swagger UI is served')
  await docs.body?.cancel()

  t.match(logs, /INFO.*request completed/, 'human-readable log lines, not JSON')
  t.notMatch(logs, /^\{"level"/m)
  for (const secret of [run.consoleKey, ...run.clients.map(c => c.token)]) {
    t.notOk(logs.includes(secret), 'no token or key in the logs')
  }
})

t.test('with the key set (npm run dev -- --jwks): the sandbox serves it and the printed tokens ' +
  'are signed with its keys', async t => {
  const run = await startDev({
    env: { ...OPERATOR_ENV, PORT: '0', LOG_LEVEL: 'silent' },
    log: { write: () => {} },
    jwks: true
  })
  t.teardown(() => run.close())
  t.ok(run.keySet !== null && run.banner.includes(run.keySet.url), 'the banner names the key set URL')
  const set = await (await fetch(run.keySet!.url)).json() as { keys: Array<Record<string, unknown>> }
  t.strictSame(set.keys.map(k => k.kty).sort(), ['EC', 'RSA'], 'an RSA and an EC key')
  t.ok(set.keys.every(k => k.d === undefined), 'public halves only')

  const kids = new Set<string>()
  for (const client of run.clients) {
    const header = JSON.parse(Buffer.from(client.token.split('.')[0]!, 'base64url').toString())
    t.ok(set.keys.some(k => k.kid === header.kid && k.alg === header.alg),
      `${client.label}: signed ${header.alg} under a published kid`)
    kids.add(header.kid)
    t.ok(run.banner.includes(header.kid), 'the banner says which key signed it')
  }
  t.equal(kids.size, 2, 'both keys sign some token')

  const profile = await curl(run.curl.profile)
  t.equal(profile.status, 200, 'the printed curl line works at once')
  const petrova = await fetch(`${run.url}/api/users/profile`,
    { headers: { authorization: `Bearer ${run.clients[1]!.token}` } })
  t.equal(petrova.status, 200, 'so does the EC-signed token')
  await petrova.body?.cancel()
  t.equal((await fetch(`${run.url}/health/ready`)).status, 200)
  const forged = `${run.clients[0]!.token.slice(0, -4)}AAAA`
  t.equal((await fetch(`${run.url}/api/users/profile`, { headers: { authorization: `Bearer ${forged}` } })).status, 401)
})

t.test('in-process: a bad PORT is named before anything starts', async t => {
  await t.rejects(startDev({ env: { PORT: 'eighty' }, log: { write: () => {} } }), { name: 'ConfigError', message: /PORT/ })
})

t.test('as a process: prints the curl line, serves the profile, and SIGINT stops it with exit code 0', async t => {
  // The operator's .env in the working directory must not be read either.
  const cwd = await mkdtemp(join(tmpdir(), 'dev-test-'))
  t.teardown(() => rm(cwd, { recursive: true, force: true }))
  await writeFile(join(cwd, '.env'), Object.entries(OPERATOR_ENV).map(([k, v]) => `${k}=${v}`).join('\n'))

  // Its own runtime directory, where it leaves its signing key for `npm run token`.
  const runtime = await mkdtemp(join(tmpdir(), 'dev-test-runtime-'))
  t.teardown(() => rm(runtime, { recursive: true, force: true }))
  const signingFile = devSigningFile({ XDG_RUNTIME_DIR: runtime })
  const child = spawn(process.execPath, [DEV_SCRIPT], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', XDG_RUNTIME_DIR: runtime, ...OPERATOR_ENV },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })

  // The console curl line is the last thing the banner prints.
  const printed = await new Promise<boolean>(resolve => {
    const timer = setTimeout(() => resolve(false), 30_000)
    const check = () => {
      if (/^ {2}curl -sS -X POST .*$/m.test(stdout)) {
        clearTimeout(timer)
        resolve(true)
      }
    }
    child.stdout.on('data', check)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve(false)
    })
  })
  t.ok(printed, 'the runner printed its curl lines', { stdout, stderr })
  if (!printed) return

  const profileLine = /^ {2}(curl -sS -H .*\/api\/users\/profile)$/m.exec(stdout)?.[1]
  t.ok(profileLine, 'a profile curl line')
  // The fresh process's own start-up may lag its event loop past the shedding bound: its first requests are retried.
  const profile = await curl(profileLine!, fetchUnlessShed)
  t.equal(profile.status, 200, { body: profile.body })
  t.equal(profile.body.client?.login, IVANOV.login)

  // npm run token, in another directory without AUTH_JWT_SECRET, mints a token this run accepts.
  t.equal((await stat(signingFile)).mode & 0o777, 0o600, 'the signing file is the user\'s alone')
  const tokenEnv = { PATH: process.env.PATH, XDG_RUNTIME_DIR: runtime }
  const mintArgs = [TOKEN_SCRIPT, '--sub', PETROVA.uid_client, '--login', PETROVA.login, '--vendor', PETROVA.vendor]
  const minted = await execFileAsync(process.execPath, mintArgs, { cwd: runtime, env: tokenEnv })
  const service = /^ {2}Service {5}(\S+)$/m.exec(stdout)?.[1]
  const petrova = await fetch(`${service}/api/users/profile`,
    { headers: { authorization: `Bearer ${minted.stdout.trim()}` } })
  t.equal(petrova.status, 200, 'npm run token\'s token opens the profile')
  t.equal(((await petrova.json()) as { uid_client: string }).uid_client, PETROVA.uid_client)

  child.kill('SIGINT')
  const [code, signal] = await exited
  t.equal(signal, null, 'exits on its own, not killed by the signal')
  t.equal(code, 0, 'exit code 0 after SIGINT', { stderr })
  t.match(stdout, 'stopping the service and the sandbox')
  await t.rejects(stat(signingFile), { code: 'ENOENT' }, 'the signing file is removed at exit')
  const after = await execFileAsync(process.execPath, mintArgs, { cwd: runtime, env: tokenEnv })
    .then(() => ({ code: 0, stderr: '' }), (error: { code: number, stderr: string }) => error)
  t.equal(after.code, 1, 'no token once the run is gone')
  t.match(after.stderr, 'no `npm run dev` is running')
})

t.test('MIN_APP_VERSION is honoured, so the app\'s update screen can be tried', async t => {
  const run = await startDev({
    env: { MIN_APP_VERSION: '2.3.0' }, port: 0, logLevel: 'silent', log: { write: () => {} }
  })
  t.teardown(() => run.close())
  t.match(run.banner, 'Minimum app version 2.3.0: an older x-app-version gets 426 APP_UPDATE_REQUIRED.')
  const authorization = `Bearer ${run.clients[0]!.token}`
  const old = await fetch(`${run.url}/api/users/profile`, { headers: { authorization, 'x-app-version': '2.2.0' } })
  t.equal(old.status, 426)
  t.match(await old.json(), { code: 'APP_UPDATE_REQUIRED', min_app_version: '2.3.0' })
  const current = await fetch(`${run.url}/api/users/profile`, { headers: { authorization, 'x-app-version': '2.3.0' } })
  t.equal(current.status, 200)
})
