// `npm start` on a machine whose node is not Node 24 (after `npm ci --omit=dev`, which leaves the pinned Node out):
// one line naming the Node it needs, instead of Node failing to load a .ts entry. Run with a real older Node when
// the machine has one (a test of CI's machines must find one; elsewhere it is skipped with a message).
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url))
const wanted = Number(/^>=(\d+) /.exec(pkg.engines.node)?.[1])

/** A node on this machine, outside the project's node_modules, whose major is not the one engines names. */
function otherNode (): { node: string, npm: string, version: string } | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin']
    .filter(dir => dir !== '' && !dir.includes('node_modules'))
  for (const dir of new Set(dirs)) {
    const node = join(dir, 'node')
    const npm = join(dir, 'npm')
    if (!existsSync(node) || !existsSync(npm)) continue
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
    if (Number(/^v(\d+)/.exec(version)?.[1]) !== wanted) return { node, npm, version }
  }
  return undefined
}

t.test('engines names one major, the Node the service runs on', async t => {
  t.match(pkg.engines.node, /^>=(\d+) <(\d+)$/)
  t.equal(Number(process.versions.node.split('.')[0]), wanted, 'the tests run on it')
  t.equal(pkg.scripts.prestart, 'node src/check-node.cjs', 'npm start checks the Node first')
})

t.test('on the Node engines names, the check passes silently', async t => {
  const run = spawnSync(process.execPath, [root('src/check-node.cjs')], { encoding: 'utf8' })
  t.equal(run.status, 0)
  t.equal(run.stdout + run.stderr, '')
})

const other = otherNode()
// Outside CI a machine may have only the pinned Node; CI must run this test.
const skip = other === undefined && process.env.CI === undefined
  ? `no Node other than ${wanted} with its npm on this machine`
  : false

t.test('npm start on another Node stops at once with one line naming the Node it needs', { skip }, async t => {
  if (other === undefined) {
    t.fail('CI must have a Node other than the pinned one, with its npm, to run this test')
    return
  }
  // A production install as `npm ci --omit=dev` leaves it: the code and package.json, no pinned Node.
  const dir = mkdtempSync(join(tmpdir(), 'bff-other-node-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const path of ['package.json', 'src', 'schemas']) cpSync(root(path), join(dir, path), { recursive: true })
  const run = spawnSync(other.npm, ['start'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: [dirname(other.node), '/bin'].join(delimiter), HOME: dir, npm_config_update_notifier: 'false' }
  })
  t.not(run.status, 0, 'npm start fails')
  const lines = run.stderr.split('\n').filter(line => line.trim() !== '')
  t.equal(lines.length, 1, `one line on stderr: ${run.stderr}`)
  t.match(lines[0], `needs Node.js ${wanted}, but this is Node.js ${other.version.slice(1)}`)
  t.notMatch(run.stdout + run.stderr, /ERR_UNKNOWN_FILE_EXTENSION|\n\s+at /, 'no stack of a failed load')
})
