// The Dockerfile's rules, read with a Dockerfile parser: the base image, what enters the image, who runs
// the service and how (node itself as the main process, with npm start's V8 flags, so SIGTERM reaches it).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigSchema } from '../../src/config.ts'
import { buildContextFiles, dockerfileSteps, dockerignore, envOf, ROOT } from '../helpers/dockerfile.ts'
import { startCommand, startEnv } from '../../scripts/start-command.ts'

const steps = dockerfileSteps()
const of = (keyword: string) => steps.filter(step => step.keyword === keyword)
const indexOf = (keyword: string) => steps.findIndex(step => step.keyword === keyword)
const lastIndexOf = (keyword: string) => steps.findLastIndex(step => step.keyword === keyword)

/** What the Dockerfile may copy: the service's code, its schemas and what installs its dependencies. */
const ALLOWED_SOURCES = new Set(['package.json', 'package-lock.json', 'src/', 'schemas/'])

t.test('one stage, on the Debian slim image of Node 24', async t => {
  const froms = of('FROM')
  t.equal(froms.length, 1, 'a single FROM')
  t.equal(indexOf('FROM'), 0, 'FROM is the first instruction')
  t.match(froms[0]?.args[0], /^node:24(\.\d+){0,2}-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/, 'node:24-<debian>-slim')
  t.notMatch(froms[0]?.args[0], /alpine/, 'glibc, not musl')
})

t.test('the service runs as node, the main process, with npm start\'s V8 flags', async t => {
  const cmds = of('CMD')
  t.equal(cmds.length, 1, 'one CMD')
  const cmd = cmds[0]!
  t.ok(cmd.execForm, 'CMD in exec form: no shell between the signal and node')
  t.equal(cmd.args[0], 'node')
  t.equal(cmd.args.at(-1), 'src/server.ts')
  t.ok(existsSync(join(ROOT, cmd.args.at(-1)!)), 'the entry file exists')
  t.strictSame(cmd.args, startCommand(), 'the same command line as npm start, V8 flags included')
  t.notOk(cmd.args.some(arg => /\bnpm\b/.test(arg)), 'never npm')
  t.equal(of('ENTRYPOINT').length, 0, 'no ENTRYPOINT wrapping the command')
  t.equal(lastIndexOf('CMD'), steps.length - 1, 'CMD is the last instruction')
})

t.test('the service runs as the unprivileged node user', async t => {
  const users = of('USER')
  t.ok(users.length > 0, 'a USER instruction')
  t.equal(users.at(-1)?.args.join(' '), 'node', 'the last USER is node')
  t.ok(lastIndexOf('USER') < indexOf('CMD'), 'USER comes before CMD')
  // As node, one RUN only: the one that fills the compile cache (the node user's own folder).
  const asNode = of('RUN').filter(step => steps.indexOf(step) > lastIndexOf('USER'))
  t.strictSame(asNode.map(step => step.args.at(-1)), ['src/compile-cache.ts'],
    'the only RUN as node fills the compile cache')
})

t.test('npm start\'s environment, and a compile cache filled for the CMD', async t => {
  const env = Object.assign({}, ...of('ENV').map(envOf)) as Record<string, string>
  t.strictSame(env, startEnv(), 'ENV sets exactly what npm start sets')
  t.ok(env.NODE_COMPILE_CACHE !== undefined && !env.NODE_COMPILE_CACHE.startsWith('/'),
    'a compile cache, relative to WORKDIR as in npm start')
  t.ok(lastIndexOf('ENV') < indexOf('CMD'))
  const fill = of('RUN').find(step => step.args.at(-1) === 'src/compile-cache.ts')
  t.ok(fill?.execForm, 'the cache is filled by node itself (exec form)')
  const cmd = of('CMD')[0]!
  // Node keys the cache by the V8 flags: filled with others, it would never be read.
  t.strictSame(fill?.args.slice(0, -1), cmd.args.slice(0, -1), 'with the CMD\'s node and flags')
  t.ok(steps.indexOf(fill!) > lastIndexOf('COPY'), 'after every file is copied')
})

t.test('EXPOSE is the default PORT of the config', async t => {
  t.strictSame(of('EXPOSE').map(step => step.args.join(' ')),
    [String((ConfigSchema.properties.PORT as { default?: number }).default)])
})

t.test('dependencies come from the lockfile, production only', async t => {
  const runs = of('RUN')
  const install = runs.find(step => /^npm ci\b/.test(step.args.join(' ')))
  t.ok(install, 'a RUN npm ci')
  t.match(install?.args, ['npm', 'ci'])
  t.ok(install?.args.includes('--omit=dev'), 'npm ci --omit=dev')
  for (const run of runs) t.notMatch(run.args.join(' '), /\bnpm (install|i|update)\b/, `line ${run.line}: no npm install (it could drift from the lockfile)`)
  const lockCopied = steps.findIndex(step => step.keyword === 'COPY' &&
    step.args.slice(0, -1).includes('package-lock.json'))
  t.ok(lockCopied !== -1 && lockCopied < steps.indexOf(install!), 'the lockfile is copied before npm ci')
})

t.test('only src/, schemas/ and the package files are copied, owned by root', async t => {
  t.equal(of('ADD').length, 0, 'no ADD (it can fetch URLs and unpack archives)')
  const copies = of('COPY')
  t.ok(copies.length > 0)
  const sources = copies.flatMap(step => step.args.slice(0, -1))
  for (const source of sources) t.ok(ALLOWED_SOURCES.has(source), `COPY ${source} is allowed`)
  t.strictSame(new Set(sources), ALLOWED_SOURCES, 'every allowed path is copied')
  for (const copy of copies) {
    t.strictSame(copy.flags, [],
      `line ${copy.line}: no --from or --chown: the code stays read-only to the node user`)
  }
})

t.test('NODE_ENV is neither set nor read', async t => {
  for (const step of [...of('ENV'), ...of('ARG')]) t.notMatch(step.args.join(' '), /NODE_ENV/, `line ${step.line}`)
  const sources = (dir: string): string[] => readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter(entry => entry.isFile() && entry.name.endsWith('.ts'))
    .map(entry => join(entry.parentPath, entry.name))
  // A read of the variable, not a mention in a comment.
  const read = /\benv(\.NODE_ENV\b|\[\s*['"`]NODE_ENV['"`]\s*\])|\{[^}]*\bNODE_ENV\b[^}]*\}\s*=\s*(process\.)?env\b/
  const readers = [...sources('src'), ...sources('schemas')].filter(file => read.test(readFileSync(file, 'utf8')))
  t.strictSame(readers, [], 'no behaviour keyed on NODE_ENV in src/ or schemas/')
})

t.test('.dockerignore keeps the build context to what the Dockerfile copies', async t => {
  const context = buildContextFiles()
  const allowed = (file: string) => ALLOWED_SOURCES.has(file) ||
    [...ALLOWED_SOURCES].some(dir => dir.endsWith('/') && file.startsWith(dir))
  t.strictSame(context.filter(file => !allowed(file)), [], 'nothing outside the copied paths')
  t.ok(context.includes('src/server.ts') && context.includes('schemas/profile.ts') &&
    context.includes('package-lock.json'))
  const matcher = dockerignore()
  for (const path of ['node_modules', 'node_modules/fastify/package.json', '.git', '.git/config', '.env',
    '.env.production', 'src/.env', 'src/node_modules/x.js', 'test/e2e/service.test.ts', 'bench/report.json',
    'coverage/index.html', '.tap/x', 'deploy/kubernetes/deployment.yaml', 'scratch/notes.md', 'profile.cpuprofile']) {
    t.ok(matcher.ignores(path), `${path} stays out`)
  }
})
