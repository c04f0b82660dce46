// `npm run openapi`: writes openapi.yaml, the OpenAPI document the service serves at /docs/json, from the
// route schemas. The app is built with a fixed placeholder configuration (nothing is called, nothing
// listens), so the document depends on the code alone and the drift test can regenerate it exactly.
import { writeFile } from 'node:fs/promises'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'

export const OPENAPI_FILE = new URL('../openapi.yaml', import.meta.url)

const HEADER = '# Generated from the route schemas by `npm run openapi`; do not edit by hand.\n'

/** Placeholders only: every optional feature on (the console), no value that means anything. */
const DOCS_ENV = {
  UPSTREAM_URL: 'https://upstream.invalid',
  PASSPORT_API_KEY: 'placeholder',
  DEALER_API_KEY: 'placeholder',
  AUTH_JWT_SECRET: 'placeholder-secret-placeholder-secret',
  CONSOLE_API_KEY: 'placeholder-console-key',
  LOG_LEVEL: 'silent'
}

/** The document as YAML, exactly as `npm run openapi` writes it. */
export async function generateOpenapi (): Promise<string> {
  const app = await buildApp(loadConfig(DOCS_ENV))
  try {
    await app.ready()
    return HEADER + app.swagger({ yaml: true })
  } finally {
    await app.close()
  }
}

if (import.meta.main) {
  await writeFile(OPENAPI_FILE, await generateOpenapi())
  process.stdout.write(`wrote ${OPENAPI_FILE.pathname}\n`)
}
