// Builds the app the way tests need it: a complete test config, the upstream faked by the MockAgent of
// upstream-mock.ts (no real network), and everything closed when the test ends.
import type { Test } from 'tap'
import type { MockAgent } from 'undici'
import { buildApp, type AppOverrides } from '../../src/app.ts'
import { ConfigError, loadConfig, type Config } from '../../src/config.ts'
import { mockAgent, type MockOrigin } from './upstream-mock.ts'

const UPSTREAM_ORIGIN = 'https://upstream.test'
export const PASSPORT_KEY = '6F0D2C1E-PASSPORT-KEY-0000-000000000001'
export const DEALER_KEY = 'A9B8C7D6-DEALER-KEY-0000-000000000002'
export const JWT_SECRET = 'test-jwt-secret-that-is-at-least-32-characters'
export const CONSOLE_KEY = 'console-key-for-tests-0123456789'

/**
 * A validated config with test values; `env` overrides or removes (undefined) variables. Error messages are
 * in English, the language the assertions are written in; the language tests set DEFAULT_LANGUAGE themselves.
 * No shedding on event-loop delay: on a loaded machine an app's own start-up lags the loop past the bound and
 * a test's first requests got 503 overloaded; the load-shedding tests set their bounds themselves.
 */
export function testConfig (env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    UPSTREAM_URL: UPSTREAM_ORIGIN,
    PASSPORT_API_KEY: PASSPORT_KEY,
    DEALER_API_KEY: DEALER_KEY,
    AUTH_JWT_SECRET: JWT_SECRET,
    CONSOLE_API_KEY: CONSOLE_KEY,
    LOG_LEVEL: 'silent',
    DEFAULT_LANGUAGE: 'en',
    UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env
  })
}

/** The problems loadConfig names for a test config with `env`; none when it loads. */
export function configProblems (env: Record<string, string>): string[] {
  try {
    testConfig(env)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

export interface TestApp {
  app: Awaited<ReturnType<typeof buildApp>>
  agent: MockAgent
  /** The fake upstream origin: respondToOperations(upstream, ...) or `upstream.intercept(...).reply(...)`. */
  upstream: MockOrigin
  config: Config
}

export async function buildTestApp (
  t: Test, env: Record<string, string | undefined> = {}, overrides: AppOverrides = {}
): Promise<TestApp> {
  const config = testConfig(env)
  const agent = mockAgent()
  const app = await buildApp(config, { dispatcher: agent, ...overrides })
  t.teardown(async () => {
    await app.close()
    await agent.close()
  })
  return { app, agent, upstream: agent.get(new URL(config.UPSTREAM_URL).origin), config }
}
