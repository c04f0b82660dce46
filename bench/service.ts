// The service under benchmark, in its own process: the production buildApp with a configuration loaded
// from the environment the bench gives it (no .env, no MockAgent, pino at the level it is told). It
// measures itself (bench/meters.ts), read by the bench over IPC.
import { loadConfig } from '../src/config.ts'
import { startTracing } from '../src/tracing/start.ts'
import { serveParent } from './ipc.ts'
import { startMeters } from './meters.ts'

/** The last-known store's settings as this process read them: evidence that an option reached the service. */
export interface StoreSettings { staleIfErrorS: number, freshS: number, cacheKeySet: boolean, redisUrlSet: boolean }

async function main (): Promise<void> {
  const config = loadConfig(process.env)
  // As server.ts does: tracing (OTEL_* variables) starts before the app is imported, so the tracing
  // variants of the bench price what production runs.
  const tracing = await startTracing(process.env)
  const { buildApp } = await import('../src/app.ts')
  const app = await buildApp(config)
  // As npm run dev does: with AUTH_JWKS_URL, the bench's first request must find the key set loaded.
  if (app.keySet !== null) await app.keySet.refresh()

  const meters = startMeters(app.server)
  await app.listen({ host: config.HOST, port: config.PORT })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the service is not on a TCP port')

  serveParent(`http://127.0.0.1:${address.port}`, {
    ...meters.handlers,
    lastKnownSettings: (): StoreSettings => ({
      staleIfErrorS: config.PROFILE_STALE_IF_ERROR_S,
      freshS: config.PROFILE_FRESH_S,
      // Whether set, never the values: the key is a secret.
      cacheKeySet: config.PROFILE_CACHE_KEY !== undefined,
      redisUrlSet: config.REDIS_URL !== undefined
    }),
    async close () {
      meters.stop()
      await app.close()
      await tracing?.shutdown()
    }
  })
}

if (import.meta.main) await main()
