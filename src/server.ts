// `npm start`: configuration from the environment, the app, listen, and a graceful shutdown.
// The only module that listens; it never falls back to the sandbox.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig } from './config.ts'

async function main (): Promise<void> {
  let config
  try {
    config = loadConfig(process.env, { dotenv: true })
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  const app = await buildApp(config)
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
  })
  await app.listen({ host: config.HOST, port: config.PORT })
}

await main()
