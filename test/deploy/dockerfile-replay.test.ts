// The image without a container runtime: the Dockerfile's own steps, read from it, replayed in a fresh
// directory outside the repository (so nothing resolves from the dev tree's node_modules): the build
// context .dockerignore leaves, copied as the COPY steps say; the RUN install; then the CMD, with Node 24
// from the dev tree standing in for the base image's, as a user that does not own the files, in front of
// the sandbox upstream. What a container would serve is what this serves.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import t from 'tap'
import { signToken } from '../../sandbox/sign.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { untilListening, type LogLine } from '../helpers/server-logs.ts'
import { buildContextFiles, dockerfileSteps, envOf, ROOT, type Step } from '../helpers/dockerfile.ts'

// An npm ci of the production tree from a warm cache, then a service start: more than tap's default.
t.setTimeout(240_000)

/** The USER node of the image: an unprivileged uid that owns none of the files (when we can switch). */
const UNPRIVILEGED = 1000
const asRoot = process.getuid?.() === 0

/**
 * tap instruments every child it sees spawned (its loader in NODE_OPTIONS, to record process info into
 * .tap/). The image runs nothing of the kind, and an unprivileged service cannot write there: `env -u`
 * drops it.
 */
const uninstrumented = (command: string[]) => ['/usr/bin/env', '-u', 'NODE_OPTIONS', ...command]

/** The environment npm needs to install (no npm_config_* of an enclosing npm run, no NODE_PATH). */
function installEnv (): Record<string, string> {
  const passed = ['HOME', 'TMPDIR', 'npm_config_cache', 'npm_config_userconfig', 'npm_config_registry', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy']
  const env: Record<string, string> = Object.fromEntries(passed.flatMap(name => process.env[name] === undefined ? [] : [[name, process.env[name]!]]))
  // npm runs on Node 24 as in the image; the warm cache of the dev install keeps it offline-friendly.
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`
  env.npm_config_prefer_offline = 'true'
  env.npm_config_update_notifier = 'false'
  return env
}

/** COPY <sources...> <dest>: context files only (what .dockerignore leaves), folders by their contents. */
function copy (step: Step, context: string[], image: string, workdir: string): void {
  const sources = step.args.slice(0, -1)
  const dest = posix.resolve(workdir, step.args.at(-1)!)
  const toDir = step.args.at(-1)!.endsWith('/') || sources.length > 1
  for (const source of sources) {
    const prefix = source.replace(/\/+$/, '')
    const files = context.filter(file => file === prefix || file.startsWith(`${prefix}/`))
    if (files.length === 0) throw new Error(`line ${step.line}: COPY ${source}: not in the build context`)
    for (const file of files) {
      const target = file === prefix ? (toDir ? posix.join(dest, posix.basename(file)) : dest) : posix.join(dest, file.slice(prefix.length + 1))
      mkdirSync(dirname(join(image, target)), { recursive: true })
      cpSync(join(ROOT, file), join(image, target))
    }
  }
}

interface Built { image: string, workdir: string, cmd: string[], user: string | undefined, env: Record<string, string> }

/**
 * Without root, a RUN cannot give a file to the image's node user: `chown` becomes a no-op on PATH (the
 * whole replay runs as the one user there is).
 */
function chownShim (image: string): string {
  const dir = join(image, '..', `${image.split('/').at(-1)!}-shim`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'chown'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Replays FROM..CMD into `image` (a stand-in for the image's root filesystem). */
function build (image: string): Built {
  const context = buildContextFiles()
  let workdir = '/'
  let user: string | undefined
  let cmd: string[] = []
  const env: Record<string, string> = {}
  const shim = asRoot ? undefined : chownShim(image)
  for (const step of dockerfileSteps()) {
    switch (step.keyword) {
      case 'FROM':
        t.equal(process.versions.node.split('.')[0], '24', `line ${step.line}: Node 24 stands in for ${step.args[0]}`)
        break
      case 'WORKDIR':
        workdir = posix.resolve(workdir, step.args[0]!)
        mkdirSync(join(image, workdir), { recursive: true })
        break
      case 'COPY':
        copy(step, context, image, workdir)
        break
      case 'RUN': {
        for (const flag of step.flags) {
          // The BuildKit cache mount is npm's cache: here, the developer's own (warm) npm cache.
          if (flag.name !== 'mount' || !/^type=cache,target=/.test(flag.value ?? '')) throw new Error(`line ${step.line}: RUN --${flag.name} is not replayed`)
        }
        // `node` of an exec-form RUN is the image's Node: here, the one running the tests.
        const args = step.execForm && step.args[0] === 'node' ? [process.execPath, ...step.args.slice(1)] : step.args
        const command = uninstrumented(step.execForm ? args : ['/bin/sh', '-c', args.join(' ')])
        const runEnv = { ...installEnv(), ...env }
        if (shim !== undefined) runEnv.PATH = `${shim}:${runEnv.PATH}`
        const run = spawnSync(command[0]!, command.slice(1), {
          cwd: join(image, workdir),
          env: runEnv,
          encoding: 'utf8',
          // After USER node, as the image's node user.
          ...(asRoot && user === 'node' ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {})
        })
        if (run.status !== 0) throw new Error(`line ${step.line}: RUN failed (${run.status}):\n${run.stdout}\n${run.stderr}`)
        break
      }
      case 'USER':
        user = step.args[0]
        break
      case 'ENV':
        Object.assign(env, envOf(step))
        break
      case 'EXPOSE':
        // Metadata only (the lint checks it is the default PORT); here the service takes a free port.
        break
      case 'CMD':
        cmd = step.args
        break
      default:
        throw new Error(`line ${step.line}: ${step.keyword} is not replayed by this test`)
    }
  }
  return { image, workdir: join(image, workdir), cmd, user, env }
}

const image = mkdtempSync(join(tmpdir(), 'bff-image-'))
// The node user of the image (RUN after USER, and the CMD) must reach the files, as in an image.
if (asRoot) chmodSync(image, 0o755)
t.teardown(() => rmSync(image, { recursive: true, force: true }))
// Module resolution walks up from the image: a node_modules above it would hide a missing dependency.
for (let dir = dirname(image); ; dir = dirname(dir)) {
  if (existsSync(join(dir, 'node_modules'))) throw new Error(`${dir}/node_modules would leak into the replay`)
  if (dir === dirname(dir)) break
}
const built = build(image)

t.test('the installed tree is the code and the production dependencies only', async t => {
  t.strictSame(readdirSync(built.workdir).sort(), ['node_modules', 'package-lock.json', 'package.json', 'schemas', 'src'])
  for (const tool of ['tap', '@tapjs/core', 'typescript', 'eslint', 'neostandard', '@types/node', 'node', 'playwright-core', 'fast-check', 'autocannon', '@redocly/cli']) {
    t.notOk(existsSync(join(built.workdir, 'node_modules', tool)), `no ${tool}`)
  }
  // Every package the lockfile marks dev-only is absent, not only the ones named above.
  const lock = JSON.parse(readFileSync(join(built.workdir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  const devOnly = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.dev === true).map(([path]) => path)
  t.ok(devOnly.length > 100, 'the lockfile marks the dev tooling')
  t.strictSame(devOnly.filter(path => existsSync(join(built.workdir, path))), [], 'no dev-only package installed')
  t.ok(existsSync(join(built.workdir, 'node_modules/fastify/package.json')), 'the runtime dependencies are')
})

t.test('the CMD serves readiness, a profile from the sandbox upstream and the OpenAPI document', async t => {
  t.equal(built.user, 'node', 'the image runs as node, not root')
  t.equal(built.cmd[0], 'node')
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => sandbox.close())

  // The image's files belong to root and the service may not write them (readOnlyRootFilesystem too):
  // as root, the service runs as another uid; otherwise the files are made read-only.
  if (asRoot) {
    chmodSync(image, 0o755)
  } else {
    spawnSync('chmod', ['-R', 'a-w', built.workdir])
    t.teardown(() => { spawnSync('chmod', ['-R', 'u+w', built.workdir]) })
  }
  const [command, ...args] = uninstrumented([process.execPath, ...built.cmd.slice(1)])
  const child = spawn(command!, args, {
    cwd: built.workdir,
    // Only the configuration, as a container gets it; PORT 0 stands in for the EXPOSEd one on a shared machine.
    // The image's ENV too; NODE_DEBUG_NATIVE makes Node say what its compile cache served.
    env: { ...built.env, HOST: '127.0.0.1', PORT: '0', UPSTREAM_URL: sandbox.url, PASSPORT_API_KEY: PASSPORT_KEY, DEALER_API_KEY: DEALER_KEY, AUTH_JWT_SECRET: JWT_SECRET, LOG_LEVEL: 'info', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {})
  })
  const exited = new Promise<number | null>(resolve => child.once('close', code => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  const logs: LogLine[] = []
  const base = await untilListening(child, logs, () => stderr)

  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 200)
  t.same(await ready.json(), { status: 'ready' })

  const token = signToken({ sub: ivanov.identity.uid_client, login: ivanov.identity.login, vendor: ivanov.identity.vendor }, JWT_SECRET)
  const profile = await fetch(`${base}/api/users/profile`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(profile.status, 200)
  t.match(await profile.json(), { uid_client: ivanov.identity.uid_client, client: { login: ivanov.identity.login }, contractor: ivanov.contractor.data, degraded: [] })

  const docs = await fetch(`${base}/docs/json`)
  t.equal(docs.status, 200)
  const openapi = await docs.json() as { openapi: string, paths: Record<string, unknown> }
  t.match(openapi.openapi, /^3\.1\./)
  t.ok('/api/users/profile' in openapi.paths, 'the profile route is documented')

  // Filled at build, the compile cache serves every module of ours: no TypeScript is stripped at start.
  const stripped = stderr.split('\n').filter(line => /Creating temporary file for cache of .*\(StrippedTypeScript\)/.test(line))
  t.strictSame(stripped, [], 'no module of ours stripped at start: the compile cache served them')
  t.match(stderr, /reading cache from \S+ for StrippedTypeScript file:\/\/\S*\/src\/server\.ts\.\.\.[^\n]*\.\.\. success/, 'the entry itself came from the cache')

  // node is the main process: the orchestrator's SIGTERM reaches the graceful shutdown.
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 on SIGTERM')
  t.ok(logs.some(line => line.msg === 'shut down'), 'after shutting down gracefully')
})
