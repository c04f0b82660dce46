// PROFILE_CACHE_MAX_BYTES bounds what the memory store costs the process, not only the bytes it counts: filled
// to its default bound with distinct clients' profiles, in a process run with npm start's Node flags, its RSS
// after GC grows by at most 1.5 times the bound.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { startEnv, startFlags } from '../../scripts/start-command.ts'
import { ConfigSchema } from '../../src/config.ts'
import { WITHOUT_COVERAGE } from '../helpers/real-servers.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// npm start's environment and node flags, as production runs them, but for a small young generation: V8 keeps up
// to three semi-spaces of pages (committed or pooled after a GC) whatever the store holds, which at npm start's
// size swamps the store's few MiB run to run. The young generation is the flags' own cost; the bench prices it.
const env = startEnv()
const flags = [...startFlags().filter(flag => !flag.startsWith('--max-semi-space-size=')), '--max-semi-space-size=4']
const bound = (ConfigSchema.properties.PROFILE_CACHE_MAX_BYTES as { default?: number }).default!
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

t.test('the memory store filled to its default bound grows RSS by at most 1.5 times the bound', async t => {
  // Some 35,000 writes in a process of its own: room for a loaded machine (the assertion is on memory only). It
  // runs without tap's block coverage, as production does (the store's coverage comes from the in-process tests).
  t.setTimeout(180_000)
  t.ok(flags.some(flag => flag.startsWith('--max-old-space-size=')), 'npm start\'s settings found')
  const child = fileURLToPath(new URL('../helpers/fill-memory-store.ts', import.meta.url))
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', ...flags, child, String(bound)],
    { cwd: ROOT, env: { ...process.env, ...env, ...WITHOUT_COVERAGE } })
  const { baseline, full, held, size } = JSON.parse(stdout) as Record<string, number>
  t.ok(size! <= bound && size! > bound * 0.95, `full: ${MiB(size!)} counted, ${held} clients`)
  t.ok(full! - baseline! <= 1.5 * bound,
    `RSS grew by ${MiB(full! - baseline!)} for a ${MiB(bound)} bound (${MiB(baseline!)} before)`)
})
