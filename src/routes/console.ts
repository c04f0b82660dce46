// POST /request-console (docs/api.md): an operator runs one upstream operation of the registry
// and sees the whole exchange. An upstream error status is data here; only an exchange that got no
// answer at all (timeout, unreachable, refused redirect) is an error of the console.
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { ConsoleAnswer, ConsoleRequest, consoleRequestVariants } from '../../schemas/console.ts'
import { CONSOLE_KEY_HEADER, consoleOperatorCheck } from '../auth/key-check.ts'
import { consoleOperators, type Config } from '../config.ts'
import {
  InternalError, PayloadTooLargeError, RateLimitedError, ServiceUnavailableError, UnauthorizedError,
  UnsupportedMediaTypeError, UpstreamBadResponseError, UpstreamTimeoutError, UpstreamUnavailableError
} from '../errors.ts'
import { errorResponse } from '../http/error-response.ts'
import { consoleRateLimit, limitHeaders, RATE_LIMITED_EXAMPLE } from '../http/rate-limits.ts'
import { ref } from '../http/schema-refs.ts'
import { OVERLOADED, shedHeaders } from '../http/shedding.ts'
import type { Exchange } from '../upstream/client.ts'
import { isUpstreamError } from '../upstream/errors.ts'
import { operationNames } from '../../schemas/operations.ts'
import { secretRedactor, type Redactor } from '../redaction.ts'
import { pointerToken } from '../json-schema.ts'

export const consoleSchemas: TSchema[] = [ConsoleRequest, ConsoleAnswer]

export const CONSOLE_BODY_LIMIT = 16 * 1024
// No registered scheme exists for an API key header; the challenge names the header to send.
const CONSOLE_CHALLENGE = `${CONSOLE_KEY_HEADER} realm="request-console"`

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

const UNAUTHORIZED = `Send the console key in the ${CONSOLE_KEY_HEADER} header`
// Documentation examples of the error answers.
// A validation failure as Fastify raises it, so the example is what the error handler makes of one.
const BAD_PARAMS = Object.assign(new Error('body/params/uid_client must match format "uuid"'), {
  statusCode: 400,
  code: 'FST_ERR_VALIDATION',
  validationContext: 'body' as const,
  validation: [{ instancePath: '/params/uid_client', schemaPath: '', keyword: 'format', params: { format: 'uuid' } }]
})
const EXAMPLE_OPERATION = operationNames[0]!

const consoleRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  const operators = consoleOperators(config)
  // Unset: the console does not exist, and the caller meets the same 404 as for any unknown route.
  if (operators.size === 0) return

  const operatorOf = consoleOperatorCheck(operators)
  const redact = secretRedactor([config.PASSPORT_API_KEY, config.DEALER_API_KEY, ...operators.values()])
  const validate = consoleRequestValidator()
  // Only console requests get an entry: nothing is added to other requests.
  const audits = new WeakMap<FastifyRequest, Audit>()
  // JSON only: without this, Fastify's text/plain parser would turn a text body into a 400, not a 415.
  fastify.removeContentTypeParser('text/plain')

  // On request, before the body is read: an unauthenticated caller costs no parsing.
  async function requireConsoleKey (request: FastifyRequest, reply: FastifyReply) {
    const operator = operatorOf(request.headers[CONSOLE_KEY_HEADER])
    audits.set(request, { operator: operator ?? null, operation: null, subject: null, outcome: null })
    if (operator !== undefined) return
    reply.header('www-authenticate', CONSOLE_CHALLENGE)
    throw await fastify.refuseCredentials(request, reply, new UnauthorizedError(UNAUTHORIZED))
  }

  // The audit stream: its own level, so LOG_LEVEL (warn to quiet access lines, even silent) never drops a
  // record; same output and redaction as every other line.
  const auditLog = fastify.log.child({ audit: 'console' }, { level: 'info' })

  // One audit record per console call and per refused key, whatever its end: who, which operation, about
  // whom (hashed), how it ended, the request id. Never the key nor the params' personal fields (the login).
  function auditLine (request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const audit = audits.get(request)
    auditLog.info({
      reqId: request.id,
      operator: audit?.operator ?? null,
      operation: audit?.operation ?? null,
      subject: audit?.subject ?? null,
      outcome: audit?.outcome ?? `http_${reply.statusCode}`,
      status_code: reply.statusCode
    }, 'console call')
    done()
  }

  fastify.post('/request-console', {
    bodyLimit: CONSOLE_BODY_LIMIT,
    onRequest: requireConsoleKey,
    onResponse: auditLine,
    config: consoleRateLimit(config),
    validatorCompiler: () => validate,
    schema: {
      operationId: 'runConsoleOperation',
      tags: ['console'],
      summary: 'Run one upstream operation and show the exchange',
      description: [
        'For operators: runs one operation of the upstream registry with the given params through the same',
        'client the profile uses, and answers the whole exchange: final status, redirects followed, duration,',
        'the contract check with the path of each violation, and the body as received. An upstream error status',
        'is data here (a 200 answer with that `status`); only an exchange that got no answer is an error.',
        'Opened by `x-console-key`; a mobile bearer token does not open it. Answers 404 when the service has',
        'no console key configured.'
      ].join(' '),
      security: [{ consoleKey: [] }],
      body: ref(ConsoleRequest),
      response: {
        200: ref(ConsoleAnswer),
        400: errorResponse('The body is not a console request: unknown operation, bad or extra field, or not JSON.',
          [BAD_PARAMS]),
        401: errorResponse('No console key, or a wrong one.', [new UnauthorizedError(UNAUTHORIZED)], {
          'www-authenticate': {
            type: 'string', description: 'Names the header to send.', examples: [CONSOLE_CHALLENGE]
          }
        }),
        413: errorResponse(`The body is larger than ${CONSOLE_BODY_LIMIT / 1024} KiB.`, [new PayloadTooLargeError()]),
        415: errorResponse('The body is not application/json.', [new UnsupportedMediaTypeError()]),
        429: errorResponse(
          'Too many console requests, or too many refused console keys, from this address this minute.',
          [new RateLimitedError(RATE_LIMITED_EXAMPLE)], limitHeaders(config.RATE_LIMIT_CONSOLE_PER_MINUTE)),
        500: errorResponse('An unexpected failure of the service; the request id finds it in the logs.',
          [new InternalError()]),
        502: errorResponse(
          'The upstream redirected where the key may not go (another origin, a loop) or its answer was too large ' +
          'to read.',
          [new UpstreamBadResponseError(EXAMPLE_OPERATION)]),
        503: errorResponse('The upstream could not be reached, or the service is shedding load (with `Retry-After`).',
          [new UpstreamUnavailableError(EXAMPLE_OPERATION), new ServiceUnavailableError(OVERLOADED)], shedHeaders()),
        504: errorResponse('The upstream did not answer in time.', [new UpstreamTimeoutError(EXAMPLE_OPERATION)])
      }
    }
  }, async (request) => {
    const { operation, params } = request.body
    const audit = audits.get(request)
    if (audit !== undefined) {
      audit.operation = operation
      audit.subject = auditSubject(params.uid_client)
    }
    let exchange: Exchange
    try {
      // Past the circuit breaker: an operator must see the real upstream, and must not move live traffic's breaker.
      exchange = await fastify.upstream.exchange(operation, params, {
        headers: fastify.upstream.forwardedHeaders(request.headers, request.id),
        breaker: false,
        // The redaction and the serializer walk the whole body: bounded in depth first (a deeper one is shown as text).
        wholeBodyDepth: true
      })
    } catch (error) {
      if (audit !== undefined && isUpstreamError(error)) audit.outcome = error.reason
      throw error
    }
    if (audit !== undefined) audit.outcome = exchange.outcome
    request.log.info({
      operation, status: exchange.status, outcome: exchange.outcome, duration_ms: exchange.duration_ms
    }, 'console exchange')
    return toAnswer(exchange, redact)
  })
}

export default consoleRoute
