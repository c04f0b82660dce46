// PROFILE_CACHE_MAX_BYTES bounds what the memory store costs the process, not only the bytes it counts: filled
// to its default bound with distinct clients' profiles, in a process run with npm start's Node flags, its RSS
// after GC grows by at most 1.5 times the bound.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { ConfigSchema } from '../../src/config.ts'
import { WITHOUT_COVERAGE } from '../helpers/real-servers.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const start = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start
// npm start's environment (MALLOC_ARENA_MAX=...) and Node options, as production runs them.
const env = Object.fromEntries(start.split(' node ')[0]!.split(' ').map(pair => pair.split('=') as [string, string]))
const flags = start.split(' node ')[1]!.split(' ').filter(word => word.startsWith('--'))
const bound = (ConfigSchema.properties.PROFILE_CACHE_MAX_BYTES as { default?: number }).default!
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

t.test('the memory store filled to its default bound grows RSS by at most 1.5 times the bound', async t => {
  // Some 35,000 writes in a process of its own: room for a loaded machine (the assertion is on memory only). It
  // runs without tap's block coverage, as production does (the store's coverage comes from the in-process tests).
  t.setTimeout(180_000)
  t.ok('MALLOC_ARENA_MAX' in env && flags.includes('--max-old-space-size=256'), 'npm start\'s settings found')
  const child = fileURLToPath(new URL('../helpers/fill-memory-store.ts', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', ...flags, child, String(bound)],
    { cwd: ROOT, env: { ...process.env, ...env, ...WITHOUT_COVERAGE } })
  const { baseline, full, held, size } = JSON.parse(stdout) as Record<string, number>
  t.ok(size! <= bound && size! > bound * 0.95, `full: ${MiB(size!)} counted, ${held} clients`)
  t.ok(full! - baseline! <= 1.5 * bound,
    `RSS grew by ${MiB(full! - baseline!)} for a ${MiB(bound)} bound (${MiB(baseline!)} before)`)
})
