// The service under benchmark, in its own process: the production buildApp with a configuration loaded
// from the environment the bench gives it (no .env, no MockAgent, pino at the level it is told). It
// measures itself: CPU time and requests served, and a fine-grained peak RSS, read by the bench over IPC.
import { writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import { Type } from 'typebox'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { serveParent } from './ipc.ts'

/** The bench-only trivial route: same process, same plugin tree, no auth and no upstream work. */
export const NOOP_PATH = '/bench/noop'
/** How often memory is sampled; a run lasts seconds, so a short spike is still seen. */
const MEMORY_SAMPLE_MS = 50

export interface ServiceStats {
  /** process.cpuUsage(): user and system microseconds since the process started. */
  cpu: NodeJS.CpuUsage
  /** HTTP requests that reached the server since it started. */
  served: number
  /** process.memoryUsage() when RSS was highest since the last `resetPeak` (bytes): what the peak is made of. */
  peak: NodeJS.MemoryUsage
  /** The kernel's lifetime peak (getrusage maxrss), in bytes: a check on the sampler. */
  maxRss: number
}

async function main (): Promise<void> {
  const config = loadConfig(process.env)
  const app = await buildApp(config)
  // Registered after the app's own plugins, at the root, so every global hook runs for it too.
  app.get(NOOP_PATH, {
    schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } }
  }, async () => ({ status: 'ok' as const }))

  // A listener on the raw server: counts every request without adding a Fastify hook to measure.
  let served = 0
  app.server.on('request', () => { served++ })
  let peak = process.memoryUsage()
  const sampler = setInterval(() => {
    const now = process.memoryUsage()
    if (now.rss > peak.rss) peak = now
  }, MEMORY_SAMPLE_MS)

  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the service is not on a TCP port')

  // `npm run bench -- --cpu-prof`: V8's profiler over the measured rounds only, not start-up and warm-up.
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR
  const profiler = new Session()

  serveParent(`http://127.0.0.1:${address.port}`, {
    stats: (): ServiceStats => ({
      cpu: process.cpuUsage(),
      served,
      peak,
      maxRss: process.resourceUsage().maxRSS * 1024
    }),
    resetPeak: () => { peak = process.memoryUsage() },
    async profileStart () {
      if (profileDir === undefined) return
      profiler.connect()
      await profiler.post('Profiler.enable')
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 })
      await profiler.post('Profiler.start')
    },
    async profileStop (): Promise<string | undefined> {
      if (profileDir === undefined) return undefined
      const { profile } = await profiler.post('Profiler.stop')
      profiler.disconnect()
      const path = join(profileDir, `service-${Date.now()}.cpuprofile`)
      await writeFile(path, JSON.stringify(profile))
      return path
    },
    async close () {
      clearInterval(sampler)
      await app.close()
    }
  })
}

if (import.meta.main) await main()
