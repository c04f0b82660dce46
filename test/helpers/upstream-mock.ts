// A MockAgent stand-in for the upstream: no real network, every interceptor must be used, and every
// request the client made is kept (call history) so a test can assert the exact wire request.
import { MockAgent, type MockPool } from 'undici'
import { createUpstreamClient, type UpstreamClientOptions } from '../../src/upstream/client.ts'

export const ORIGIN = 'http://upstream.test'

// UUID-formatted like the real keys, and distinct so a test can tell which one was sent.
export const KEYS = {
  passport: '6B0D7E1A-PASS-4C2F-9A8E-5F3B2D1C0A9E',
  dealer: 'E4C9A2F7-DEAL-4B1D-8E6A-3C5F7A9B1D2E'
} as const

export const JSON_UTF8 = { 'content-type': 'application/json; charset=utf-8' }

/** The upstream's answer to a path without the trailing slash (docs/upstream.md, The slash redirect). */
export function slashRedirect (path: string, status = 307): [number, string, { headers: Record<string, string> }] {
  return [status, '<html><body>Temporary Redirect</body></html>',
    { headers: { location: `${path}/`, 'content-type': 'text/html' } }]
}

interface Teardown { teardown (fn: () => unknown): void }

/**
 * A MockAgent with net connect disabled, its pool for ORIGIN and a client on it. Teardown fails the
 * test when an interceptor was left unused, then closes the client and the agent.
 */
export function mockUpstream (t: Teardown, options: Partial<UpstreamClientOptions> = {}) {
  const agent = new MockAgent({ enableCallHistory: true })
  agent.disableNetConnect()
  const pool: MockPool = agent.get(ORIGIN)
  const client = createUpstreamClient({
    baseUrl: ORIGIN, keys: { ...KEYS }, timeoutMs: 2000, dispatcher: agent, ...options
  })
  t.teardown(async () => {
    try {
      agent.assertNoPendingInterceptors()
    } finally {
      await client.close()
      await agent.close()
    }
  })
  /** Every request the client sent, in order. */
  const calls = () => agent.getCallHistory()?.calls() ?? []
  /** Intercepts one POST to `path` on ORIGIN. */
  const post = (path: string): ReturnType<MockPool['intercept']> => pool.intercept({ path, method: 'POST' })
  return { agent, pool, client, calls, post }
}
