// The `prepare` script runs on every `npm ci`: the dev install must build tap's plugin set (.taprc), and
// a production install (`--omit=dev`, no tap) must not fail on it. Run as npm runs it: `sh -c` in the
// package folder with node_modules/.bin first on PATH.
import { spawnSync } from 'node:child_process'
import { chmodSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import pkg from '../../package.json' with { type: 'json' }

function prepare (dir: string) {
  return spawnSync('/bin/sh', ['-c', pkg.scripts.prepare], {
    cwd: dir,
    env: { PATH: `${join(dir, 'node_modules/.bin')}:/usr/bin:/bin` },
    encoding: 'utf8'
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
    const dir = t.testdir({ node_modules: { '.bin': { tap: `#!/bin/sh\necho "$@" > tap-args\nexit ${status}\n` } } })
    chmodSync(join(dir, 'node_modules/.bin/tap'), 0o755)
    const run = prepare(dir)
    t.equal(run.status, status, `tap build exiting ${status} makes prepare exit ${status}`)
    t.equal(readFileSync(join(dir, 'tap-args'), 'utf8'), 'build\n', 'tap build ran')
  }
})
