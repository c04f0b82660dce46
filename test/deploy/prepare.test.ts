// The `prepare` script runs on every `npm ci`: the dev install must build tap's plugin set (.taprc) with links that
// move with the tree (a copy made with `cp -a` runs its tests without `tap build` again), and a production install
// (`--omit=dev`, no tap) must not fail on it. Run as npm runs it: `sh -c` in the package folder with
// node_modules/.bin first on PATH, then the folder of the node running npm.
import { spawnSync } from 'node:child_process'
import { chmodSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs'
import { dirname, isAbsolute, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }

const root = fileURLToPath(new URL('../../', import.meta.url))
const CORE_LINK = '.tap/plugins/node_modules/@tapjs/core'

function prepare (dir: string) {
  return spawnSync('/bin/sh', ['-c', pkg.scripts.prepare], {
    cwd: dir,
    env: { PATH: `${join(dir, 'node_modules/.bin')}:${dirname(process.execPath)}:/usr/bin:/bin` },
    encoding: 'utf8'
  })
}

/** Every symbolic link under `dir` (not looking inside the folders they point at): its path from `base`, its target. */
function linksUnder (base: string, dir: string): Array<[string, string]> {
  return readdirSync(join(base, dir), { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isSymbolicLink()) return [[path, readlinkSync(join(base, path))] as [string, string]]
    return entry.isDirectory() ? linksUnder(base, path) : []
  })
}

t.test('without tap (a production install) it succeeds and runs nothing', async t => {
  const dir = t.testdir({ 'package.json': '{}' })
  const run = prepare(dir)
  t.equal(run.status, 0)
  t.equal(run.stdout + run.stderr, '')
})

t.test('with tap it runs tap build, and a failing build fails the install', async t => {
  for (const status of [0, 3]) {
    const dir = t.testdir({
      node_modules: { '.bin': { tap: `#!/bin/sh\necho "$@" > tap-args\nexit ${status}\n` } },
      scripts: { 'tap-links.ts': readFileSync(join(root, 'scripts/tap-links.ts')) }
    })
    chmodSync(join(dir, 'node_modules/.bin/tap'), 0o755)
    const run = prepare(dir)
    t.equal(run.status, status, `tap build exiting ${status} makes prepare exit ${status}`)
    t.equal(readFileSync(join(dir, 'tap-args'), 'utf8'), 'build\n', 'tap build ran')
  }
})

t.test('after tap build, the links it made into the tree are relative; others stay as they are', async t => {
  // What tap build leaves: its core linked by absolute path (and, here, a link leaving the tree).
  const build = [
    '#!/bin/sh',
    `mkdir -p ${dirname(CORE_LINK)}`,
    `ln -s "$(pwd -P)/node_modules/@tapjs/core" ${CORE_LINK}`,
    'ln -s /bin/sh .tap/plugins/outside',
    'ln -s ../plugins .tap/plugins/already-relative'
  ].join('\n')
  const dir = realpathSync(t.testdir({
    node_modules: { '.bin': { tap: build }, '@tapjs': { core: { 'package.json': '{"name":"@tapjs/core"}' } } },
    scripts: { 'tap-links.ts': readFileSync(join(root, 'scripts/tap-links.ts')) }
  }))
  chmodSync(join(dir, 'node_modules/.bin/tap'), 0o755)
  const run = prepare(dir)
  t.equal(run.status, 0, run.stderr)
  t.strictSame(Object.fromEntries(linksUnder(dir, '.tap')), {
    [CORE_LINK]: '../../../../node_modules/@tapjs/core',
    '.tap/plugins/outside': '/bin/sh',
    '.tap/plugins/already-relative': '../plugins'
  })
  t.equal(realpathSync(join(dir, CORE_LINK)), join(dir, 'node_modules/@tapjs/core'), 'the core link still resolves')
  const copy = join(t.testdirName, '..', `${t.testdirName.split(sep).at(-1)}-copy`)
  t.teardown(() => rmSync(copy, { recursive: true, force: true }))
  t.equal(spawnSync('cp', ['-a', dir, copy]).status, 0, 'cp -a')
  t.equal(realpathSync(join(copy, CORE_LINK)), join(realpathSync(copy), 'node_modules/@tapjs/core'),
    'in a copy made with cp -a, the link resolves inside the copy')
})

t.test("this tree's tap build (npm ci ran prepare) links only relatively, inside the tree", async t => {
  const links = [...linksUnder(root, '.tap/plugins'), ...linksUnder(root, 'node_modules/@tapjs/test/test-built')]
  t.ok(links.some(([path]) => path === CORE_LINK), `${CORE_LINK} is there`)
  const top = realpathSync(root)
  for (const [path, target] of links) {
    const resolved = realpathSync(join(root, path))
    t.ok(!isAbsolute(target) && (resolved + sep).startsWith(top + sep),
      `${path} -> ${target} is relative and resolves inside the tree (else run \`npm run prepare\`)`)
  }
})
