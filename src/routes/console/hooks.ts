// The console's hooks, added to the console route's own (encapsulated) instance, so that no other route runs them:
// the operator's key checked before the body is read, and one audit line per call and per refused key, whatever its
// end; past a limit (429), one summary record per operator (or address, without a valid key) a minute, with the count.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  CONSOLE_CHALLENGE, CONSOLE_KEY_HEADER, CONSOLE_UNAUTHORIZED, consoleOperatorCheck
} from '../../auth/key-check.ts'
import { UnauthorizedError } from '../../errors.ts'
import { RATE_LIMIT_WINDOW_MS } from '../../plugins/external/rate-limit/route-limits.ts'
import { RefusalSummary } from '../../plugins/app/refusals/summary.ts'
import { isUpstreamError } from '../../upstream/errors.ts'

/** What the audit line of one console call says; filled in as the call proceeds. */
export interface Audit {
  operator: string | null
  operation: string | null
  subject: string | null
  outcome: string | null
}

/** The subject of a console call in the audit log: the uid_client hashed, so the log holds no client id. */
export function auditSubject (uidClient: string): string {
  return createHash('sha256').update(uidClient.toUpperCase()).digest('hex').slice(0, 32)
}

/**
 * Adds the key check and the audit to `fastify`, the console route's instance, for the operators' keys (name to key);
 * answers the audit of a console request, for the handler to fill in.
 */
export function addConsoleHooks (fastify: FastifyInstance,
  operators: ReadonlyMap<string, string>): (request: FastifyRequest) => Audit | undefined {
  const operatorOf = consoleOperatorCheck(operators)
  // Only console requests get an entry: nothing is added to other requests.
  const audits = new WeakMap<FastifyRequest, Audit>()
  // The audit stream: its own level, so LOG_LEVEL (warn to quiet access lines, even silent) never drops a
  // record; same output and redaction as every other line.
  const auditLog = fastify.log.child({ audit: 'console' }, { level: 'info' })
  // Past a limit, a record each would let one client write a thousand a second: counted instead.
  const limited = new RefusalSummary(auditLog.info.bind(auditLog), 'console calls refused past a limit',
    RATE_LIMIT_WINDOW_MS)
  fastify.addHook('onClose', async () => { limited.close() })

  // On request, before the body is read: an unauthenticated caller costs no parsing. Before the route's own hooks
  // (the limit's): an instance's hooks run before a route's.
  fastify.addHook('onRequest', async function checkConsoleKey (request, reply) {
    const operator = operatorOf(request.headers[CONSOLE_KEY_HEADER])
    audits.set(request, { operator: operator ?? null, operation: null, subject: null, outcome: null })
    if (operator !== undefined) return
    reply.header('www-authenticate', CONSOLE_CHALLENGE)
    throw await fastify.refuseCredentials(request, reply, new UnauthorizedError(CONSOLE_UNAUTHORIZED))
  })

  fastify.addHook('onError', function auditFailure (request, _reply, error, done) {
    const audit = audits.get(request)
    if (audit !== undefined && isUpstreamError(error)) audit.outcome = error.reason
    done()
  })

  // One audit record per console call and per refused key, whatever its end: who, which operation, about
  // whom (hashed), how it ended, the request id. Never the key nor the params' personal fields (the login).
  // A 429 ran nothing: counted in the summary of its operator, or of its address without a valid key.
  fastify.addHook('onResponse', function auditCall (request, reply, done) {
    const audit = audits.get(request)
    if (reply.statusCode === 429) {
      const operator = audit?.operator ?? null
      limited.count(operator ?? `address ${request.ip}`,
        { operator, address: operator === null ? request.ip : null, outcome: 'http_429', status_code: 429 })
      done()
      return
    }
    auditLog.info({
      reqId: request.id,
      operator: audit?.operator ?? null,
      operation: audit?.operation ?? null,
      subject: audit?.subject ?? null,
      outcome: audit?.outcome ?? `http_${reply.statusCode}`,
      status_code: reply.statusCode
    }, 'console call')
    done()
  })

  return request => audits.get(request)
}
