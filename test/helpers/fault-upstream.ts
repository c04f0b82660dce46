// Process-level tests over real HTTP: the scriptable fault upstream (sandbox/faults.ts, shared with the soak),
// which records what reached it, and the service from buildApp on port 0 in front of it, both closed at teardown.
import type { Test } from 'tap'
import { Compile } from 'typebox/compile'
import { ErrorBody } from '../../schemas/errors.ts'
import { buildApp, type AppOverrides } from '../../src/app.ts'
import { signToken } from '../../sandbox/sign.ts'
import { loadConfig } from '../../src/config.ts'
import { startFaultUpstream, type FaultUpstream } from '../../sandbox/faults.ts'
import type { PassportParams } from '../../schemas/passport.ts'
import { CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from './build-app.ts'

export { MiB, type Fault, type FaultUpstream } from '../../sandbox/faults.ts'

export const SECRETS = { PASSPORT_KEY, DEALER_KEY, CONSOLE_KEY, JWT_SECRET }

/** Limits that would otherwise answer 429/503 to a test's quick succession of requests. */
const RELAXED_LIMITS = {
  RATE_LIMIT_PROFILE_PER_MINUTE: '1000000',
  RATE_LIMIT_CONSOLE_PER_MINUTE: '1000000',
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000',
  UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
}

export async function faultUpstream (t: Test): Promise<FaultUpstream> {
  const upstream = await startFaultUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY }, record: true })
  t.teardown(() => upstream.close())
  return upstream
}

/** The service listening on 127.0.0.1:0 in front of `upstreamUrl`; answers its base URL. */
export async function faultService (t: Test, upstreamUrl: string, env: Record<string, string> = {},
  overrides: AppOverrides = {}): Promise<string> {
  const config = loadConfig({
    UPSTREAM_URL: upstreamUrl,
    PASSPORT_API_KEY: PASSPORT_KEY,
    DEALER_API_KEY: DEALER_KEY,
    AUTH_JWT_SECRET: JWT_SECRET,
    CONSOLE_API_KEY: CONSOLE_KEY,
    LOG_LEVEL: 'silent',
    // English messages, the language the assertions are written in (as testConfig).
    DEFAULT_LANGUAGE: 'en',
    ...RELAXED_LIMITS,
    ...env
  })
  const app = await buildApp(config, overrides)
  t.teardown(() => app.close())
  return await app.listen({ host: '127.0.0.1', port: 0 })
}

export const profileOf = (base: string, client: PassportParams) => fetch(`${base}/api/users/profile`, {
  headers: {
    authorization: `Bearer ${signToken({ sub: client.uid_client, login: client.login, vendor: client.vendor },
      JWT_SECRET)}`
  }
})

export const consoleCall = (base: string, operation: string, params: object) => fetch(`${base}/request-console`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-console-key': CONSOLE_KEY },
  body: JSON.stringify({ operation, params })
})

const isErrorBody = Compile(ErrorBody)

/**
 * Reads an answer and checks, in one assertion, what every answer owes its caller: an x-request-id, no
 * secret in a header or the body, and for an error exactly an ErrorBody of its status. Answers the body.
 */
export async function readResponse (t: Test, res: Response): Promise<{
  status: number, headers: Headers, body: unknown
}> {
  const text = await res.text()
  const problems: string[] = []
  if (!res.headers.get('x-request-id')) problems.push('no x-request-id')
  const head = JSON.stringify([...res.headers])
  for (const [name, secret] of Object.entries(SECRETS)) {
    if (text.includes(secret) || head.includes(secret)) problems.push(`${name} leaked`)
  }
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    problems.push('the body is not JSON')
  }
  if (res.status >= 400 && !(isErrorBody.Check(body) && body.statusCode === res.status)) {
    problems.push(`not an ErrorBody of ${res.status}: ${text.slice(0, 200)}`)
  }
  t.same(problems, [], `a well-formed ${res.status} answer`)
  return { status: res.status, headers: res.headers, body }
}

/** Waits until `ready()` holds, checking every 10 ms, for at most `limitMs`. */
export async function until (ready: () => boolean, limitMs = 5000): Promise<boolean> {
  const end = Date.now() + limitMs
  while (!ready()) {
    if (Date.now() > end) return false
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return true
}

/** A clock a test moves (seconds at a time): the service reads the last-known copies' ages from it. */
export function fakeClock () {
  let now = Date.now()
  return { now: () => now, advance (seconds: number) { now += seconds * 1000 } }
}
