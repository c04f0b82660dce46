// `npm start`: configuration from the environment, the app, listen, and a graceful shutdown.
// The only module that listens; it never falls back to the sandbox.
import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig } from './config.ts'
import { loggerOptions, stdoutDestination } from './logger.ts'
import { startTracing } from './tracing/start.ts'
import { TracingConfigError } from './tracing/settings.ts'

async function main (): Promise<void> {
  let config
  let tracing
  try {
    config = loadConfig(process.env, { dotenv: true })
    // Tracing (OTEL_* variables) starts before the app is imported, so its tracer is there when the
    // app is built; app.ts itself has no side effect at import.
    tracing = await startTracing(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof TracingConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  const { buildApp } = await import('./app.ts')
  // stdout through a destination no reader can block: shutdown ends whatever the log pipe does.
  const app = await buildApp(config, { logger: { ...loggerOptions(config), stream: stdoutDestination() } })
  // On SIGTERM/SIGINT: readiness turns 503, the listener closes (new connections are refused), in-flight
  // requests finish, then the upstream agent closes and the process exits 0. Requests still running after
  // SHUTDOWN_GRACE_MS are cut off and the exit code is 1; a second signal exits at once.
  closeWithGrace({
    delay: config.SHUTDOWN_GRACE_MS,
    // A failing close is logged as JSON like everything else (the default is console).
    logger: { error: (err: unknown) => { app.log.error({ err }, 'graceful shutdown failed') } },
    onTimeout: delay => {
      app.log.error({ graceMs: delay }, 'in-flight requests outlived the shutdown grace; exiting')
    },
    onSecondSignal: signal => { app.log.warn({ signal }, 'second signal; exiting without waiting') }
  }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, 'shutting down')
    await app.close()
    // The spans of the last requests are exported before the process exits, if the collector takes them.
    const unexported = await tracing?.shutdown()
    if (unexported !== undefined) app.log.warn({ err: unexported }, 'the last trace spans could not be exported')
    app.log.info('shut down')
  })
  await app.listen({ host: config.HOST, port: config.PORT })
}

// Only as the entry: src/compile-cache.ts imports every module, this one included.
if (import.meta.main) await main()
