// What a started service loads, in a process of its own (the test runner loads much more): the modules
// that cost every instance resident memory and do nothing for it must stay out (docs/performance.md).
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { ROOT } from '../helpers/dockerfile.ts'

/** Node's internal modules and the packages a built and ready app (metrics, Redis and tracing off) has loaded. */
function loadedByTheApp (): { internal: string[], packages: string[] } {
  const script = `
    const { loadConfig } = await import('./src/config.ts')
    const { buildApp } = await import('./src/app.ts')
    const app = await buildApp(loadConfig(process.env))
    await app.ready()
    await app.close()
    const { createRequire } = await import('node:module')
    const files = Object.keys(createRequire(process.cwd() + '/').cache)
    process.stdout.write(JSON.stringify({ internal: process.moduleLoadList, files }))`
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    // Without tap's loader (NODE_OPTIONS): what the service itself loads.
    env: {
      PATH: process.env.PATH,
      UPSTREAM_URL: 'http://127.0.0.1:9',
      PASSPORT_API_KEY: PASSPORT_KEY,
      DEALER_API_KEY: DEALER_KEY,
      AUTH_JWT_SECRET: JWT_SECRET,
      LOG_LEVEL: 'silent'
    },
    encoding: 'utf8'
  })
  if (child.status !== 0) throw new Error(`the app did not build (${child.status}): ${child.stderr}`)
  const { internal, files } = JSON.parse(child.stdout) as { internal: string[], files: string[] }
  const packages = new Set(files.map(file => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1]))
  return { internal, packages: [...packages].filter(name => name !== undefined) }
}

t.test('the app loads neither Node\'s bundled undici nor the clients of options that are off', async t => {
  const { internal, packages } = loadedByTheApp()
  t.ok(packages.includes('fastify') && packages.includes('undici'), 'the listing is of a real app')
  // An ESM import of node:http builds its namespace, whose lazy WebSocket getters load Node's bundled
  // undici and web streams: about 13 MiB of RSS for nothing (process.getBuiltinModule does not).
  t.notOk(internal.some(m => m.includes('internal/deps/undici')), 'no Node-bundled undici')
  // About 5 MiB together; imported by the plugins only when METRICS_API_KEY or REDIS_URL is set.
  t.notOk(packages.includes('prom-client'), 'no prom-client with metrics off')
  t.notOk(packages.includes('ioredis'), 'no ioredis without REDIS_URL')
})
