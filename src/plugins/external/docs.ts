// The OpenAPI 3.1 document, generated from the route schemas, and Swagger UI at /docs (with the
// document at /docs/json and /docs/yaml). Components take the names of the schemas' `$id`s.
import fp from 'fastify-plugin'
import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import pkg from '../../../package.json' with { type: 'json' }
import { CONSOLE_KEY_HEADER } from '../../auth/key-check.ts'
import type { Config } from '../../config.ts'
import { LANGUAGE_LIST } from '../../http/error-response.ts'
import { DOCS_PREFIX } from '../../http/paths.ts'

const openapiInfo = {
  title: 'Dealer profile BFF',
  version: pkg.version,
  description: [
    pkg.description,
    'Every error answer has the same body (`ErrorBody`) with a stable upper-snake `code`. Every answer ' +
      'carries an `x-request-id` header: the caller\'s own when it is well formed, a fresh one otherwise.',
    'A known path with a method it does not serve answers 405 `METHOD_NOT_ALLOWED` with an `Allow` header ' +
      'listing the methods it does; `OPTIONS` of a known path answers 204 with `Allow`; an unknown path is 404 ' +
      '`NOT_FOUND`. Answers of 1 KiB or more are compressed (`br`, `gzip`) by the caller\'s `Accept-Encoding`, ' +
      'with `Vary: Accept-Encoding`.',
    'Error `message`s are in Russian (`ru`) or English (`en`) by the request\'s `Accept-Language`, with ' +
      '`Content-Language` and `Vary: Accept-Language`; the `code` is the same in every language.'
  ].join('\n\n')
}

/** The Accept-Language request header, documented on every operation (it picks the error answers' language). */
const ACCEPT_LANGUAGE = {
  in: 'header',
  name: 'accept-language',
  required: false,
  description: `The language of error messages: ${LANGUAGE_LIST}, with quality values ` +
    '(`en;q=0.9, ru;q=0.8`); `en-US` counts as `en`. Absent or naming neither, the service\'s `DEFAULT_LANGUAGE`. ' +
    'Error codes are the same in every language.',
  schema: { type: 'string', examples: ['ru', 'en', 'en-US,en;q=0.9,ru;q=0.8'] }
}

/** The generated document, as @fastify/swagger hands it to transformObject. */
type OpenApiObject = Extract<Parameters<SwaggerTransformObject>[0], { openapiObject: unknown }>['openapiObject']
/** Changes the served document in place (a dev run's additions). */
export type DescribeDocument = (document: OpenApiObject) => void

export default fp<{ config: Config, describe?: DescribeDocument }>(async function docs (fastify, { describe }) {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: openapiInfo,
      // Relative: the document describes whichever host serves it.
      servers: [{ url: '/', description: 'The service that serves this document' }],
      tags: [
        { name: 'profile', description: "The mobile app's client profile, for the client named by the bearer token." },
        { name: 'console', description: 'The operators\' request console over the upstream operations.' },
        { name: 'health', description: 'Liveness and readiness for the orchestrator.' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A JWT with claims `sub` (the client\'s uid_client), `login`, `vendor`, `iat` and `exp` ' +
              '(and `iss`, `aud` when the service is configured with them).'
          },
          consoleKey: {
            type: 'apiKey',
            in: 'header',
            name: CONSOLE_KEY_HEADER,
            description: 'An operator\'s console key (`CONSOLE_API_KEYS`, or the single `CONSOLE_API_KEY`).'
          }
        }
      }
    },
    // Each operation with an error answer takes Accept-Language, which picks that answer's language.
    transformObject (document) {
      if (!('openapiObject' in document)) return document.swaggerObject
      const { openapiObject } = document
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item as Record<string, { responses?: object, parameters?: object[] }>)) {
          if (Object.keys(operation.responses ?? {}).some(status => Number(status) >= 400)) {
            operation.parameters = [...(operation.parameters ?? []), structuredClone(ACCEPT_LANGUAGE)]
          }
        }
      }
      describe?.(openapiObject)
      return openapiObject
    },
    // Shared schemas become components named by their `$id`, not def-0, def-1...
    refResolver: {
      buildLocalReference (json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`
      }
    }
  })

  await fastify.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { deepLinking: true, persistAuthorization: false, displayRequestDuration: true }
  })
}, { name: 'docs', dependencies: ['shared-schemas'] })
