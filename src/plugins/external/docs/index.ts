// The OpenAPI 3.1 document, generated from the route schemas, and Swagger UI at /docs (with the
// document at /docs/json and /docs/yaml). Components take the names of the schemas' `$id`s. What these routes
// send never changes while the process runs: made once at start and compressed once (prepared-response.ts).
// DOCS=document serves the document alone, DOCS=off nothing (the document is still generated: npm run openapi).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, extname, join } from 'node:path'
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import pkg from '../../../../package.json' with { type: 'json' }
import { CONSOLE_KEY_HEADER } from '../../../auth/key-check.ts'
import type { Config } from '../../../config.ts'
import { LANGUAGE_LIST } from '../../app/errors/error-response.ts'
import { DOCS_PREFIX } from './prefix.ts'
import { prepareResponse, sendPrepared, type PreparedResponse } from './prepared-response.ts'
import { hooksOf } from '../../../route-hooks.ts'

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

const STATIC_PREFIX = `${DOCS_PREFIX}/static/`
/** Swagger UI's files as the package ships them (its main module is index.js beside static/). */
const SWAGGER_UI_FILES = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')
const FILE_TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png'
}

/** Swagger UI's files by the path they are served at, with the Cache-Control and Last-Modified they had. */
async function swaggerUiFiles (compress: boolean): Promise<Array<[string, PreparedResponse]>> {
  const files: Array<[string, PreparedResponse]> = []
  for (const name of readdirSync(SWAGGER_UI_FILES)) {
    const path = join(SWAGGER_UI_FILES, name)
    const type = FILE_TYPES[extname(name)] ?? 'application/octet-stream'
    files.push([`${STATIC_PREFIX}${name}`, await prepareResponse(readFileSync(path), {
      type,
      compressible: compress && !type.startsWith('image/png'),
      headers: { 'cache-control': 'public, max-age=0', 'last-modified': statSync(path).mtime.toUTCString() }
    })])
  }
  return files
}

export default fp<{ config: Config, describe?: DescribeDocument }>(async function docs (fastify, { config, describe }) {
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

  if (config.DOCS === 'off') return

  const compress = config.COMPRESSION === 'on'
  const prepared = new Map<string, PreparedResponse>()
  const files = new Map<string, PreparedResponse>()
  fastify.addHook('onReady', async function prepareDocs () {
    const options = { compressible: compress, eager: true }
    prepared.set(`${DOCS_PREFIX}/json`, await prepareResponse(Buffer.from(JSON.stringify(fastify.swagger())),
      { type: 'application/json; charset=utf-8', ...options }))
    prepared.set(`${DOCS_PREFIX}/yaml`, await prepareResponse(Buffer.from(fastify.swagger({ yaml: true })),
      { type: 'application/x-yaml', ...options }))
    if (config.DOCS === 'ui') for (const [path, response] of await swaggerUiFiles(compress)) files.set(path, response)
  })

  /**
   * A prepared answer ends the request before the route's handler. The static files' route (`/docs/static/*`)
   * answers only the files read at start: any other path is 404 (no file is read, nothing compressed per request).
   */
  async function servePrepared (request: FastifyRequest, reply: FastifyReply) {
    const url = request.routeOptions.url ?? ''
    if (!url.endsWith('*')) {
      const response = prepared.get(url)
      if (response !== undefined) return await sendPrepared(request, reply, response)
      return
    }
    const response = files.get(`${url.slice(0, -1)}${(request.params as { '*': string })['*']}`)
    if (response !== undefined) return await sendPrepared(request, reply, response)
    reply.callNotFound()
    return reply
  }
  if (config.DOCS === 'document') {
    for (const path of [`${DOCS_PREFIX}/json`, `${DOCS_PREFIX}/yaml`]) {
      fastify.get(path, { schema: { hide: true } },
        (request, reply) => sendPrepared(request, reply, prepared.get(path)!))
    }
    return
  }
  // Swagger UI's own routes (its document routes and its files) answer what was prepared, before their handlers.
  fastify.addHook('onRoute', route => {
    if (!route.url.startsWith(`${DOCS_PREFIX}/`)) return
    route.onRequest = [...hooksOf(route.onRequest), servePrepared]
  })
  await fastify.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiConfig: { deepLinking: true, persistAuthorization: false, displayRequestDuration: true }
  })
}, { name: 'docs', dependencies: ['shared-schemas'] })
