// The image without a container runtime: the Dockerfile's own steps, read from it, replayed in a fresh
// directory outside the repository (so nothing resolves from the dev tree's node_modules): the build
// context .dockerignore leaves, copied as the COPY steps say; the RUN install; then the CMD, with Node 24
// from the dev tree standing in for the base image's, as a user that does not own the files, in front of
// the sandbox upstream. What a container would serve is what this serves. The replay reads a private clone
// (mode 700, as `mktemp -d` makes) so it holds wherever the checkout lives.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync, constants, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync,
  statSync, writeFileSync
} from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join, posix } from 'node:path'
import t, { type Test } from 'tap'
import ts from 'typescript'
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
/** Where the base image (node:24-bookworm-slim) has its Node. */
const BASE_NODE = 'usr/local/bin/node'
/** Where a checkout has the Node the tests run on (the `node` devDependency). */
const CHECKOUT_NODE = 'node_modules/node/bin/node'

/**
 * tap instruments every child it sees spawned (its loader in NODE_OPTIONS, to record process info into
 * .tap/). The image runs nothing of the kind, and an unprivileged service cannot write there: `env -u`
 * drops it.
 */
const uninstrumented = (command: string[]) => ['/usr/bin/env', '-u', 'NODE_OPTIONS', ...command]

/** The environment npm needs to install (no npm_config_* of an enclosing npm run, no NODE_PATH). */
function installEnv (nodeBin: string): Record<string, string> {
  const passed = [
    'HOME', 'TMPDIR', 'npm_config_cache', 'npm_config_userconfig', 'npm_config_registry',
    'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'
  ]
  const env: Record<string, string> = Object.fromEntries(
    passed.flatMap(name => process.env[name] === undefined ? [] : [[name, process.env[name]!]])
  )
  // npm runs on the image's Node 24; the warm cache of the dev install keeps it offline-friendly.
  env.PATH = `${nodeBin}:${process.env.PATH ?? ''}`
  env.npm_config_prefer_offline = 'true'
  env.npm_config_update_notifier = 'false'
  return env
}

/** COPY <sources...> <dest>: context files only (what .dockerignore leaves), folders by their contents. */
function copy (step: Step, checkout: string, context: string[], image: string, workdir: string): void {
  const sources = step.args.slice(0, -1)
  const dest = posix.resolve(workdir, step.args.at(-1)!)
  const toDir = step.args.at(-1)!.endsWith('/') || sources.length > 1
  for (const source of sources) {
    const prefix = source.replace(/\/+$/, '')
    const files = context.filter(file => file === prefix || file.startsWith(`${prefix}/`))
    if (files.length === 0) throw new Error(`line ${step.line}: COPY ${source}: not in the build context`)
    for (const file of files) {
      const target = file === prefix
        ? (toDir ? posix.join(dest, posix.basename(file)) : dest)
        : posix.join(dest, file.slice(prefix.length + 1))
      mkdirSync(dirname(join(image, target)), { recursive: true })
      cpSync(join(checkout, file), join(image, target))
    }
  }
}

interface Built {
  image: string
  workdir: string
  cmd: string[]
  user: string | undefined
  env: Record<string, string>
  /** The image's Node: a copy of the checkout's, where the image's users can run it. */
  node: string
  /** What each RUN printed, by its Dockerfile line. */
  output: Map<number, string>
}

/**
 * Without root, a RUN cannot give a file to the image's node user: `chown` becomes a no-op on PATH (the
 * whole replay runs as the one user there is).
 */
function chownShim (t: Test, image: string): string {
  const dir = join(image, '..', `${basename(image)}-shim`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'chown'), '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * The base image's Node, copied from the checkout into the image as node:24-bookworm-slim has it: the
 * checkout's own copy may sit below a folder other users cannot enter (a clone in `mktemp -d`, mode 700).
 */
function baseNode (node: string, image: string): string {
  const target = join(image, BASE_NODE)
  mkdirSync(dirname(target), { recursive: true })
  copyFileSync(node, target, constants.COPYFILE_FICLONE)
  chmodSync(target, 0o755)
  if (asRoot) {
    const [command, ...args] = uninstrumented([target, '-e', ''])
    const run = spawnSync(command!, args, { uid: UNPRIVILEGED, gid: UNPRIVILEGED, encoding: 'utf8' })
    if (run.status !== 0) {
      throw new Error(`uid ${UNPRIVILEGED} cannot run ${target} (is every folder above ${tmpdir()} open to ` +
        `other users? TMPDIR chooses it): ${run.error?.message ?? run.stderr}`)
    }
  }
  return target
}

/** Replays FROM..CMD of `checkout`'s Dockerfile into `image` (a stand-in for the image's root filesystem). */
function build (t: Test, image: string, checkout: string, checkoutNode: string): Built {
  const context = buildContextFiles(checkout)
  const node = baseNode(checkoutNode, image)
  let workdir = '/'
  let user: string | undefined
  let cmd: string[] = []
  const env: Record<string, string> = {}
  const output = new Map<number, string>()
  const shim = asRoot ? undefined : chownShim(t, image)
  for (const step of dockerfileSteps(readFileSync(join(checkout, 'Dockerfile'), 'utf8'))) {
    switch (step.keyword) {
      case 'FROM': {
        const [command, ...args] = uninstrumented([node, '-p', 'process.versions.node'])
        const version = spawnSync(command!, args, { encoding: 'utf8' }).stdout.trim()
        t.equal(version.split('.')[0], '24', `line ${step.line}: Node 24 stands in for ${step.args[0]}`)
        break
      }
      case 'WORKDIR':
        workdir = posix.resolve(workdir, step.args[0]!)
        mkdirSync(join(image, workdir), { recursive: true })
        break
      case 'COPY':
        copy(step, checkout, context, image, workdir)
        break
      case 'RUN': {
        for (const flag of step.flags) {
          // The BuildKit cache mount is npm's cache: here, the developer's own (warm) npm cache.
          if (flag.name !== 'mount' || !/^type=cache,target=/.test(flag.value ?? '')) {
            throw new Error(`line ${step.line}: RUN --${flag.name} is not replayed`)
          }
        }
        // `node` of an exec-form RUN is the image's Node.
        const args = step.execForm && step.args[0] === 'node' ? [node, ...step.args.slice(1)] : step.args
        const command = uninstrumented(step.execForm ? args : ['/bin/sh', '-c', args.join(' ')])
        const runEnv = { ...installEnv(dirname(node)), ...env }
        if (shim !== undefined) runEnv.PATH = `${shim}:${runEnv.PATH}`
        const run = spawnSync(command[0]!, command.slice(1), {
          cwd: join(image, workdir),
          env: runEnv,
          encoding: 'utf8',
          // After USER node, as the image's node user.
          ...(asRoot && user === 'node' ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {})
        })
        if (run.status !== 0) {
          throw new Error(`line ${step.line}: RUN failed (${run.status}):\n${run.stdout}\n${run.stderr}`)
        }
        output.set(step.line, run.stdout)
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
  return { image, workdir: join(image, workdir), cmd, user, env, node, output }
}

/** A fresh image folder under the system's temporary folder, open to the image's node user, then the replay. */
function replay (t: Test, checkout: string, checkoutNode: string): Built {
  const image = mkdtempSync(join(tmpdir(), 'bff-image-'))
  // The node user of the image (RUN after USER, and the CMD) must reach the files, as in an image.
  if (asRoot) chmodSync(image, 0o755)
  t.teardown(() => rmSync(image, { recursive: true, force: true }))
  // Module resolution walks up from the image: a node_modules above it would hide a missing dependency.
  for (let dir = dirname(image); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) throw new Error(`${dir}/node_modules would leak into the replay`)
    if (dir === dirname(dir)) break
  }
  return build(t, image, checkout, checkoutNode)
}

/** Every file under `dir`, relative with `/` separators, sorted. */
const filesUnder = (dir: string) => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter(entry => entry.isFile())
  .map(entry => posix.join(entry.parentPath.slice(dir.length + 1).replaceAll('\\', '/'), entry.name))
  .sort()

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

interface Service {
  base: string
  child: ChildProcess
  exited: Promise<number | null>
  logs: LogLine[]
  stderr: () => string
}

/** The image's CMD as a container runs it: as the node user, with the configuration in the environment only. */
async function start (t: Test, built: Built, upstream: string): Promise<Service> {
  // The image's files belong to root and the service may not write them (readOnlyRootFilesystem too):
  // as root, the service runs as another uid; otherwise the files are made read-only.
  if (!asRoot) {
    spawnSync('chmod', ['-R', 'a-w', built.workdir])
    t.teardown(() => { spawnSync('chmod', ['-R', 'u+w', built.workdir]) })
  }
  t.equal(built.cmd[0], 'node')
  const [command, ...args] = uninstrumented([built.node, ...built.cmd.slice(1)])
  const child = spawn(command!, args, {
    cwd: built.workdir,
    // PORT 0 stands in for the EXPOSEd one on a shared machine. The image's ENV too; NODE_DEBUG_NATIVE makes
    // Node say what its compile cache served.
    env: {
      ...built.env,
      HOST: '127.0.0.1',
      PORT: '0',
      UPSTREAM_URL: upstream,
      PASSPORT_API_KEY: PASSPORT_KEY,
      DEALER_API_KEY: DEALER_KEY,
      AUTH_JWT_SECRET: JWT_SECRET,
      LOG_LEVEL: 'info',
      NODE_DEBUG_NATIVE: 'COMPILE_CACHE'
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(asRoot ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {})
  })
  const exited = new Promise<number | null>(resolve => child.once('close', code => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  const logs: LogLine[] = []
  const base = await untilListening(child, logs, () => stderr)
  return { base, child, exited, logs, stderr: () => stderr }
}

/** node is the main process: the orchestrator's SIGTERM reaches the graceful shutdown. */
async function stop (t: Test, service: Service): Promise<void> {
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'exits 0 on SIGTERM')
  t.ok(service.logs.some(line => line.msg === 'shut down'), 'after shutting down gracefully')
}

/**
 * The checkout as a clone in `mktemp -d` has it, wherever this one lives: a folder only its owner may
 * enter, holding the working tree (sandbox/, test/ and the rest, for .dockerignore to leave out) and the
 * dev tree's Node at its usual place.
 */
function privateClone (t: Test): string {
  const clone = mkdtempSync(join(tmpdir(), 'bff-clone-'))
  chmodSync(clone, 0o700)
  t.teardown(() => rmSync(clone, { recursive: true, force: true }))
  const skipped = new Set(['.git', '.tap', 'node_modules'])
  cpSync(ROOT, clone, { recursive: true, filter: source => !skipped.has(basename(source)) })
  mkdirSync(dirname(join(clone, CHECKOUT_NODE)), { recursive: true })
  copyFileSync(process.execPath, join(clone, CHECKOUT_NODE), constants.COPYFILE_FICLONE)
  return clone
}

const clone = privateClone(t)
const built = replay(t, clone, join(clone, CHECKOUT_NODE))

t.test('the replay reads a clone other users cannot enter', async t => {
  t.equal(statSync(clone).mode & 0o777, 0o700, 'the clone is private to its owner')
  t.ok(existsSync(join(clone, 'sandbox/faults.ts')) && existsSync(join(clone, 'test')), 'with all its working tree')
  // Without root the whole replay runs as one user, who can enter the clone.
  if (!asRoot) return
  // What used to fail: the image's node user running the checkout's own Node.
  const [command, ...args] = uninstrumented([join(clone, CHECKOUT_NODE), '-e', ''])
  const direct = spawnSync(command!, args, { uid: UNPRIVILEGED, gid: UNPRIVILEGED, encoding: 'utf8' })
  t.equal(direct.status, 126, `uid ${UNPRIVILEGED} cannot run the clone's own Node, so the image has a copy`)
  t.match(direct.stderr, /Permission denied/)
})

t.test('the installed tree is the code and the production dependencies only', async t => {
  const top = ['node_modules', 'package-lock.json', 'package.json', 'schemas', 'src']
  t.strictSame(readdirSync(built.workdir).sort(), top)
  const tools = [
    'tap', '@tapjs/core', 'typescript', 'eslint', 'neostandard', '@types/node', 'node', 'playwright-core',
    'fast-check', 'autocannon', '@redocly/cli'
  ]
  for (const tool of tools) t.notOk(existsSync(join(built.workdir, 'node_modules', tool)), `no ${tool}`)
  // Every package the lockfile marks dev-only is absent, not only the ones named above.
  const lockFile = join(built.workdir, 'package-lock.json')
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, { dev?: boolean }> }
  const devOnly = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.dev === true)
    .map(([path]) => path)
  t.ok(devOnly.length > 100, 'the lockfile marks the dev tooling')
  t.strictSame(devOnly.filter(path => existsSync(join(built.workdir, path))), [], 'no dev-only package installed')
  t.ok(existsSync(join(built.workdir, 'node_modules/fastify/package.json')), 'the runtime dependencies are')
})

t.test('the image carries no sandbox, dev tooling or tests: only what production runs', async t => {
  const ours = filesUnder(built.workdir).filter(file => !file.startsWith('node_modules/'))
  t.ok(ours.includes('src/server.ts') && ours.includes('schemas/fixtures.ts'), 'the service and its schemas are in')
  const outOfPlace = ours.filter(file => file.split('/').some(part => ['sandbox', 'test', 'bench', 'scripts', 'deploy']
    .includes(part)))
  t.strictSame(outOfPlace, [], 'no sandbox/, test/, bench/, scripts/ or deploy/ folder')

  // The sandbox's modules by name (the app's own upstream plugin shares the sandbox upstream's name: its
  // content is checked below) and by content, wherever they would land, dependencies included.
  const sandbox = readdirSync(join(clone, 'sandbox')).filter(name => name.endsWith('.ts'))
  const expected = ['dev.ts', 'faults.ts', 'otlp-receiver.ts', 'seed.ts', 'sign.ts', 'upstream.ts']
  t.ok(expected.every(name => sandbox.includes(name)),
    'the sandbox modules are where the layout says, so the names below are real')
  const names = new Set(sandbox.filter(name => name !== 'upstream.ts'))
  const everything = filesUnder(built.workdir)
  t.strictSame(everything.filter(file => names.has(posix.basename(file))), [], `none of ${[...names].join(', ')}`)
  const sandboxContent = new Set(sandbox.map(name => sha256(join(clone, 'sandbox', name))))
  t.strictSame(ours.filter(file => sandboxContent.has(sha256(join(built.workdir, file)))), [],
    'no copy of a sandbox module under another name')

  // What the image's code imports, read by TypeScript's own scanner: nothing from the sandbox, every relative
  // import a file of the image, every package a Node builtin or one npm ci --omit=dev installed.
  const code = ours.filter(file => file.endsWith('.ts'))
  const unresolved: string[] = []
  const notProduction: string[] = []
  const fromSandbox: string[] = []
  for (const file of code) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(built.workdir, file), 'utf8'), true, true)
    for (const { fileName: specifier } of importedFiles) {
      if (/(^|\/)sandbox(\/|$)/.test(specifier)) fromSandbox.push(`${file}: ${specifier}`)
      if (specifier.startsWith('.')) {
        if (!ours.includes(posix.join(posix.dirname(file), specifier))) unresolved.push(`${file}: ${specifier}`)
      } else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) {
        const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
        const installed = existsSync(join(built.workdir, 'node_modules', name, 'package.json'))
        if (!installed) notProduction.push(`${file}: ${specifier}`)
      }
    }
  }
  t.ok(code.length > 30, `${code.length} modules read`)
  t.strictSame(fromSandbox, [], 'no module of the image imports the sandbox')
  t.strictSame(unresolved, [], 'every relative import is a file of the image')
  t.strictSame(notProduction, [], 'every package imported is installed by npm ci --omit=dev')
})

t.test('the build fills the compile cache with every module of the image, none from the sandbox', async t => {
  const compile = dockerfileSteps(readFileSync(join(clone, 'Dockerfile'), 'utf8'))
    .find(step => step.keyword === 'RUN' && step.args.includes('src/compile-cache.ts'))
  t.ok(compile, 'the Dockerfile runs src/compile-cache.ts')
  const modules = filesUnder(built.workdir)
    .filter(file => /^(src|schemas)\/.*\.ts$/.test(file) && file !== 'src/compile-cache.ts')
  t.match(built.output.get(compile!.line), new RegExp(`^compile cache: ${modules.length} modules in `),
    `all ${modules.length} modules of src/ and schemas/ compiled as the node user`)
})

t.test('the CMD serves liveness, readiness, a profile from the sandbox upstream and the OpenAPI document', async t => {
  t.equal(built.user, 'node', 'the image runs as node, not root')
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => sandbox.close())
  const service = await start(t, built, sandbox.url)
  const { base } = service

  const live = await fetch(`${base}/health/live`)
  t.equal(live.status, 200)
  const ready = await fetch(`${base}/health/ready`)
  t.equal(ready.status, 200)
  t.same(await ready.json(), { status: 'ready' })

  const identity = ivanov.identity
  const token = signToken({ sub: identity.uid_client, login: identity.login, vendor: identity.vendor }, JWT_SECRET)
  const profile = await fetch(`${base}/api/users/profile`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(profile.status, 200)
  t.match(await profile.json(), {
    uid_client: identity.uid_client, client: { login: identity.login }, contractor: ivanov.contractor.data, degraded: []
  })

  const docs = await fetch(`${base}/docs/json`)
  t.equal(docs.status, 200)
  const openapi = await docs.json() as { openapi: string, paths: Record<string, unknown> }
  t.match(openapi.openapi, /^3\.1\./)
  t.ok('/api/users/profile' in openapi.paths, 'the profile route is documented')

  // Filled at build, the compile cache serves every module of ours: no TypeScript is stripped at start.
  const stderr = service.stderr()
  const stripped = stderr.split('\n')
    .filter(line => /Creating temporary file for cache of .*\(StrippedTypeScript\)/.test(line))
  t.strictSame(stripped, [], 'no module of ours stripped at start: the compile cache served them')
  const served = /reading cache from \S+ for StrippedTypeScript file:\/\/\S*\/src\/server\.ts\.\.\.[^\n]*\.\.\. success/
  t.match(stderr, served,
    'the entry itself came from the cache')

  await stop(t, service)
})
