// The OpenAPI description of POST /request-console: what the route answers besides the standard answers of a route
// that calls an upstream (standard-responses.ts), each error's example as the error handler renders it.
import { ConsoleAnswer, ConsoleRequest } from '../../../schemas/console.ts'
import { operationNames } from '../../../schemas/operations.ts'
import { CONSOLE_CHALLENGE, CONSOLE_KEY_HEADER, CONSOLE_UNAUTHORIZED } from '../../auth/key-check.ts'
import type { Config } from '../../config.ts'
import {
  PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError, UnsupportedMediaTypeError,
  UpstreamBadResponseError, UpstreamUnavailableError
} from '../../errors.ts'
import { errorResponse } from '../../plugins/app/errors/error-response.ts'
import { ref } from '../../plugins/app/shared-schemas/refs.ts'
import { OVERLOADED, shedHeaders } from '../../plugins/external/load-shedding/shedding.ts'
import { documented, jsonResponse, upstreamResponses } from '../standard-responses.ts'

export const CONSOLE_BODY_LIMIT = 16 * 1024

// Documentation examples of the error answers.
// A validation failure as Fastify raises it, so the example is what the error handler makes of one.
const BAD_PARAMS = Object.assign(new Error('body/params/uid_client must match format "uuid"'), {
  statusCode: 400,
  code: 'FST_ERR_VALIDATION',
  validationContext: 'body' as const,
  validation: [{ instancePath: '/params/uid_client', schemaPath: '', keyword: 'format', params: { format: 'uuid' } }]
})
const EXAMPLE_OPERATION = operationNames[0]!

/** The route's schema: documentation, and the 200 answer's serializer. */
export function consoleRouteSchema (config: Config) {
  const perMinute = config.RATE_LIMIT_CONSOLE_PER_MINUTE
  return documented({
    operationId: 'runConsoleOperation',
    tags: ['console'],
    summary: 'Run one upstream operation and show the exchange',
    description: [
      'For operators: runs one operation of the upstream registry with the given params through the same',
      'client the profile uses, and answers the whole exchange: final status, redirects followed, duration,',
      'the contract check with the path of each violation, and the body as received. An upstream error status',
      'is data here (a 200 answer with that `status`); only an exchange that got no answer is an error.',
      `Opened by \`${CONSOLE_KEY_HEADER}\`; a mobile bearer token does not open it. Answers 404 when the service`,
      'has no console key configured.'
    ].join(' '),
    security: [{ consoleKey: [] }],
    body: ref(ConsoleRequest),
    response: {
      ...upstreamResponses({
        upstream: 'The upstream',
        operation: EXAMPLE_OPERATION,
        limit: { perMinute, counts: 'console requests from this address', refused: 'refused console keys' }
      }),
      200: jsonResponse(ConsoleAnswer),
      400: errorResponse('The body is not a console request: unknown operation, bad or extra field, or not JSON.',
        [BAD_PARAMS]),
      401: errorResponse('No console key, or a wrong one.', [new UnauthorizedError(CONSOLE_UNAUTHORIZED)], {
        'www-authenticate': { type: 'string', description: 'Names the header to send.', examples: [CONSOLE_CHALLENGE] }
      }),
      413: errorResponse(`The body is larger than ${CONSOLE_BODY_LIMIT / 1024} KiB.`, [new PayloadTooLargeError()]),
      415: errorResponse('The body is not application/json.', [new UnsupportedMediaTypeError()]),
      502: errorResponse(
        'The upstream redirected where the key may not go (another origin, a loop) or its answer was too large ' +
        'to read.',
        [new UpstreamBadResponseError(EXAMPLE_OPERATION)]),
      // Past the breakers, with no bearer token: neither an open breaker nor a pending signing key.
      503: errorResponse('The upstream could not be reached, or the service is shedding load (with `Retry-After`).',
        [new UpstreamUnavailableError(EXAMPLE_OPERATION), new ServiceUnavailableError(OVERLOADED)], shedHeaders())
    }
  }, { perMinute })
}
