// The request console's calls, for its route (routes/console/route.ts) to spread into its options: the operator's key
// checked before the body is read, the body validated against the one variant the operator meant, the exchange run
// past the breaker and shown redacted, and one audit line per call and per refused key, whatever its end; past a
// limit (429), one summary record per operator (or address, without a valid key) a minute, with the count.
import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import type {
  FastifyReply, FastifyRequest, FastifySchemaCompiler, FastifySchemaValidationError, onErrorHookHandler,
  onResponseHookHandler
} from 'fastify'
import { Compile } from 'typebox/compile'
import { ConsoleRequest, consoleRequestVariants, type ConsoleAnswer } from '../../../schemas/console.ts'
import { operationNames } from '../../../schemas/operations.ts'
import {
  CONSOLE_CHALLENGE, CONSOLE_KEY_HEADER, CONSOLE_UNAUTHORIZED, consoleOperatorCheck
} from '../../auth/key-check.ts'
import { consoleOperators, type Config } from '../../config.ts'
import { UnauthorizedError } from '../../errors.ts'
import { RATE_LIMIT_WINDOW_MS } from '../../http/rate-limits.ts'
import { RefusalSummary } from '../../http/refusal-summary.ts'
import { pointerToken } from '../../json-schema.ts'
import { secretRedactor, type Redactor } from '../../redaction.ts'
import type { Exchange } from '../../upstream/client.ts'
import { isUpstreamError } from '../../upstream/errors.ts'

interface ConsoleCalls {
  /** The console route's hooks and body validator: the key check, the audit line. */
  options: {
    onRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<void>
    onError: onErrorHookHandler
    onResponse: onResponseHookHandler
    validatorCompiler: FastifySchemaCompiler<unknown>
  }
  /** Runs the operator's validated console request and answers the exchange, redacted. */
  exchange: (request: FastifyRequest<{ Body: ConsoleRequest }>) => Promise<ConsoleAnswer>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The console's calls; null when no console key is configured (the console does not exist). */
    consoleCalls: ConsoleCalls | null
  }
}

/** The subject of a console call in the audit log: the uid_client hashed, so the log holds no client id. */
function auditSubject (uidClient: string): string {
  return createHash('sha256').update(uidClient.toUpperCase()).digest('hex').slice(0, 32)
}

/** What the audit line of one console call says; filled in as the call proceeds. */
interface Audit { operator: string | null, operation: string | null, subject: string | null, outcome: string | null }

type ValidationResult = { value: unknown } | { error: FastifySchemaValidationError[] }

/**
 * Validates the body against the union, and when it fails explains it against the one variant the
 * caller meant (by `operation`), so the message names the bad field instead of every variant's misses.
 */
function consoleRequestValidator (): (value: unknown) => ValidationResult {
  const whole = Compile(ConsoleRequest)
  const byOperation = new Map(operationNames.map((name, i) => [name as string, Compile(consoleRequestVariants[i]!)]))
  return value => {
    if (whole.Check(value)) return { value }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { error: [problem('', 'type', 'must be an object with operation and params')] }
    }
    const operation = (value as { operation?: unknown }).operation
    const variant = typeof operation === 'string' ? byOperation.get(operation) : undefined
    if (variant === undefined) {
      return { error: [problem('/operation', 'enum', `must be one of ${operationNames.join(', ')}`)] }
    }
    return { error: readable(variant.Errors(value)) }
  }
}

function problem (instancePath: string, keyword: string, message: string): FastifySchemaValidationError {
  return { instancePath, keyword, message, schemaPath: '#', params: {} }
}

/** One error per extra property, at its own path, instead of TypeBox's pair of generic ones. */
function readable (errors: FastifySchemaValidationError[]): FastifySchemaValidationError[] {
  const out: FastifySchemaValidationError[] = []
  for (const error of errors) {
    if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) continue
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperties?: string[] }).additionalProperties ?? []
      for (const name of extra) {
        out.push(problem(`${error.instancePath}/${pointerToken(name)}`, 'additionalProperties', 'is not allowed'))
      }
      continue
    }
    out.push(error)
  }
  return out
}

function toAnswer (exchange: Exchange, redact: Redactor): ConsoleAnswer {
  return {
    operation: exchange.operation,
    status: exchange.status,
    redirects: exchange.redirects.map(hop => ({ status: hop.status, location: redact.text(hop.location) })),
    duration_ms: exchange.duration_ms,
    // The messages quote the upstream (its content type) and the paths name its keys: both redacted.
    contract: {
      valid: exchange.contract.valid,
      errors: exchange.contract.errors.map(e => ({ path: redact.text(e.path), message: redact.text(e.message) }))
    },
    // The body was bounded in depth before (client.ts, `wholeBodyDepth`), so the redaction's walk is too.
    body: redact.value(exchange.body)
  }
}

export default fp<{ config: Config }>(async function consoleCalls (fastify, { config }) {
  const operators = consoleOperators(config)
  if (operators.size === 0) {
    fastify.decorate('consoleCalls', null)
    return
  }
  const operatorOf = consoleOperatorCheck(operators)
  const redact = secretRedactor([config.PASSPORT_API_KEY, config.DEALER_API_KEY, ...operators.values()])
  const validate = consoleRequestValidator()
  const validatorOf = fastify.validatorCompiler
  // Only console requests get an entry: nothing is added to other requests.
  const audits = new WeakMap<FastifyRequest, Audit>()
  // The audit stream: its own level, so LOG_LEVEL (warn to quiet access lines, even silent) never drops a
  // record; same output and redaction as every other line.
  const auditLog = fastify.log.child({ audit: 'console' }, { level: 'info' })
  // Past a limit, a record each would let one client write a thousand a second: counted instead.
  const limited = new RefusalSummary(auditLog.info.bind(auditLog), 'console calls refused past a limit',
    RATE_LIMIT_WINDOW_MS)
  fastify.addHook('onClose', async () => { limited.close() })

  const options: ConsoleCalls['options'] = {
    // On request, before the body is read: an unauthenticated caller costs no parsing.
    async onRequest (request, reply) {
      const operator = operatorOf(request.headers[CONSOLE_KEY_HEADER])
      audits.set(request, { operator: operator ?? null, operation: null, subject: null, outcome: null })
      if (operator !== undefined) return
      reply.header('www-authenticate', CONSOLE_CHALLENGE)
      throw await fastify.refuseCredentials(request, reply, new UnauthorizedError(CONSOLE_UNAUTHORIZED))
    },
    onError (request, _reply, error, done) {
      const audit = audits.get(request)
      if (audit !== undefined && isUpstreamError(error)) audit.outcome = error.reason
      done()
    },
    // One audit record per console call and per refused key, whatever its end: who, which operation, about
    // whom (hashed), how it ended, the request id. Never the key nor the params' personal fields (the login).
    // A 429 ran nothing: counted in the summary of its operator, or of its address without a valid key.
    onResponse (request, reply, done) {
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
    },
    // The body by the variant the operator meant; the headers as every route's.
    validatorCompiler: route => route.httpPart === 'body' || validatorOf === undefined ? validate : validatorOf(route)
  }

  async function exchange (request: FastifyRequest<{ Body: ConsoleRequest }>): Promise<ConsoleAnswer> {
    const { operation, params } = request.body
    const audit = audits.get(request)
    if (audit !== undefined) {
      audit.operation = operation
      audit.subject = auditSubject(params.uid_client)
    }
    // Past the circuit breaker: an operator must see the real upstream, and must not move live traffic's breaker.
    const answered = await fastify.upstream.exchange(operation, params, {
      headers: fastify.upstream.forwardedHeaders(request.headers, request.id),
      breaker: false,
      // The redaction and the serializer walk the whole body: bounded in depth first (a deeper one is shown as text).
      wholeBodyDepth: true
    })
    if (audit !== undefined) audit.outcome = answered.outcome
    request.log.info({
      operation, status: answered.status, outcome: answered.outcome, duration_ms: answered.duration_ms
    }, 'console exchange')
    return toAnswer(answered, redact)
  }

  fastify.decorate('consoleCalls', { options, exchange })
}, { name: 'console-calls', dependencies: ['upstream', 'rate-limit'] })
