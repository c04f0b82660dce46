// Starts tracing when the OTEL_* variables ask for it (docs/operations.md, Tracing). server.ts calls this before
// it imports the app, so the tracer is in place before any module of the app is evaluated. With tracing
// off nothing of the SDK is even loaded.
import { tracingSettings } from './settings.ts'
import type { Tracing } from './sdk.ts'

export type { Tracing }

/** null when tracing is off; throws TracingConfigError when a variable is unusable. */
export async function startTracing (env: Record<string, string | undefined> = process.env): Promise<Tracing | null> {
  const settings = tracingSettings(env)
  if (settings === null) return null
  const { startSdk } = await import('./sdk.ts')
  return await startSdk(settings)
}
