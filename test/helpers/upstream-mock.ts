// The one MockAgent fake of the upstream (docs/testing.md, One way to fake the upstream): no real network, every
// request kept (call history), and the answers of named operations with a record of what reached each. The
// app-level tests get it through buildTestApp, the client-level ones through mockUpstream.
import { MockAgent, type MockPool } from 'undici'
import { operations, type OperationName } from '../../schemas/operations.ts'
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

/** A MockAgent that refuses real network and keeps every request it is sent; its owner closes it. */
export function mockAgent (): MockAgent {
  const agent = new MockAgent({ enableCallHistory: true })
  agent.disableNetConnect()
  return agent
}

/** One origin of a mock agent: `origin.intercept({ path, method: 'POST' }).reply(...)`. */
export type MockOrigin = ReturnType<MockAgent['get']>

/**
 * An upstream answer: a status with a body (a string as is, else its JSON; `{}` when none), once unless `times` or
 * `persist` say otherwise; or a network error.
 */
export type Reply =
  | { status: number, body?: unknown, headers?: Record<string, string>, delay?: number, times?: number, persist?: true }
  | { error: Error }

/** What reached the upstream for an answered operation (the test's own keys and all: it is never logged). */
export interface Sent { operation: OperationName, path: string, body: string, headers: Record<string, string> }

/**
 * Answers POSTs of `operation` at `path` (its documented one unless told) with `reply`, and records what reached
 * it in `into`.
 */
export function respondToOperation (origin: MockOrigin, operation: OperationName, reply: Reply,
  { path = operations[operation].path, into = [] }: { path?: string, into?: Sent[] } = {}): void {
  const interceptor = origin.intercept({ path, method: 'POST' })
  if ('error' in reply) {
    interceptor.replyWithError(reply.error)
    return
  }
  const scope = interceptor.reply(({ path, body, headers }) => {
    into.push({ operation, path, body: String(body), headers: { ...headers as Record<string, string> } })
    return {
      statusCode: reply.status,
      data: typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}),
      responseOptions: { headers: reply.headers ?? JSON_UTF8 }
    }
  })
  if (reply.delay !== undefined) scope.delay(reply.delay)
  if (reply.times !== undefined) scope.times(reply.times)
  if (reply.persist === true) scope.persist()
}

/** Answers each named operation at its documented path; answers what reached the upstream, in order. */
export function respondToOperations (origin: MockOrigin, responses: Partial<Record<OperationName, Reply>>): Sent[] {
  const sent: Sent[] = []
  for (const [operation, reply] of Object.entries(responses) as Array<[OperationName, Reply]>) {
    respondToOperation(origin, operation, reply, { into: sent })
  }
  return sent
}

interface Teardown { teardown (fn: () => unknown): void }

/**
 * The upstream client alone on a mock agent with its pool for ORIGIN. Teardown fails the test when an
 * interceptor was left unused, then closes the client and the agent.
 */
export function mockUpstream (t: Teardown, options: Partial<UpstreamClientOptions> = {}) {
  const agent = mockAgent()
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
