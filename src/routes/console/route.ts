// POST /request-console (docs/api.md): an operator runs one upstream operation of the registry and sees the whole
// exchange. An upstream error status is data here; only an exchange that got no answer at all (timeout, unreachable,
// refused redirect) is an error of the console. Its own plugin, encapsulated: the key check and the audit
// (hooks.ts) and the body's validator (validation.ts) belong to this instance, so they run for this route only.
import fp from 'fastify-plugin'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ConsoleAnswer, ConsoleRequest } from '../../../schemas/console.ts'
import { consoleOperators, type Config } from '../../config.ts'
import { consoleRateLimit } from '../../plugins/external/rate-limit/route-limits.ts'
import { secretRedactor, type Redactor } from '../../redaction.ts'
import type { Exchange } from '../../upstream/client.ts'
import type { RouteModule } from '../route-module.ts'
import { addConsoleHooks, auditSubject } from './hooks.ts'
import { CONSOLE_BODY_LIMIT, consoleRouteSchema } from './schema.ts'
import { consoleRequestValidator } from './validation.ts'

function toResponse (exchange: Exchange, redact: Redactor): ConsoleAnswer {
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

const consoleRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (fastify, { config }) => {
  const operators = consoleOperators(config)
  // No console key: the console does not exist, and the caller meets the same 404 as for any unknown route.
  if (operators.size === 0) return
  const redact = secretRedactor([config.PASSPORT_API_KEY, config.DEALER_API_KEY, ...operators.values()])
  const auditOf = addConsoleHooks(fastify, operators)
  // The body by the variant the operator meant; the headers as every route's (the app's compiler).
  const validate = consoleRequestValidator()
  const validatorOf = fastify.validatorCompiler
  fastify.setValidatorCompiler(route =>
    route.httpPart === 'body' || validatorOf === undefined ? validate : validatorOf(route))
  // JSON only: without this, Fastify's text/plain parser would turn a text body into a 400, not a 415.
  fastify.removeContentTypeParser('text/plain')

  fastify.post('/request-console', {
    bodyLimit: CONSOLE_BODY_LIMIT,
    config: consoleRateLimit(config),
    schema: consoleRouteSchema(config)
  }, async function runConsoleOperation (request) {
    const { operation, params } = request.body
    const audit = auditOf(request)
    if (audit !== undefined) {
      audit.operation = operation
      audit.subject = auditSubject(params.uid_client)
    }
    // Past the circuit breaker: an operator must see the real upstream, and must not move live traffic's breaker.
    const exchanged = await fastify.upstream.exchange(operation, params, {
      headers: fastify.upstream.forwardedHeaders(request.headers, request.id),
      breaker: false,
      // The redaction and the serializer walk the whole body: bounded in depth first (a deeper one is shown as text).
      wholeBodyDepth: true
    })
    if (audit !== undefined) audit.outcome = exchanged.outcome
    request.log.info({
      operation, status: exchanged.status, outcome: exchanged.outcome, duration_ms: exchanged.duration_ms
    }, 'console exchange')
    return toResponse(exchanged, redact)
  })
}

/** The console in the route registry (registry.ts). */
export default {
  // Encapsulated, named, and checked for what it relies on at boot.
  plugin: fp(consoleRoute, {
    name: 'console-route', encapsulate: true, dependencies: ['upstream', 'rate-limit', 'refusals']
  }),
  schemas: [ConsoleRequest, ConsoleAnswer],
  errorCodes: {
    'POST /request-console': ['BAD_REQUEST', 'UNAUTHORIZED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE',
      'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_UNAVAILABLE',
      'UPSTREAM_TIMEOUT']
  }
} satisfies RouteModule
