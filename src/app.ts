// The application as a plugin tree. buildApp() makes a Fastify instance without listening: server.ts
// listens, tests inject or listen on port 0, the dev runner and the benchmark wire it to the sandbox.
import Fastify, { type FastifySchemaCompiler, type FastifyServerOptions } from 'fastify'
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import type { Dispatcher } from 'undici'
import { clientErrorHandlerFor } from './client-errors.ts'
import type { Config } from './config.ts'
import { METRICS_PATH } from './http/paths.ts'
import { requestId } from './http/request-id.ts'
import { frontServerOptions } from './http/server-options.ts'
import { AccessLogController, loggerOptions } from './logger.ts'
import appVersion from './plugins/app/app-version.ts'
import auth from './plugins/app/auth.ts'
import cacheControl from './plugins/app/cache-control.ts'
import compression from './plugins/external/compress.ts'
import consoleCalls from './plugins/app/console-calls.ts'
import deprecation from './plugins/app/deprecation.ts'
import docs from './plugins/external/docs.ts'
import drain from './plugins/app/drain.ts'
import errors from './plugins/app/errors.ts'
import loadShedding from './plugins/external/load-shedding.ts'
import metrics from './plugins/app/metrics.ts'
import profilePlugin from './plugins/app/profile.ts'
import refusals from './plugins/app/refusals.ts'
import rateLimits from './plugins/external/rate-limit.ts'
import redis from './plugins/app/redis.ts'
import requestIdPlugin from './plugins/app/request-id.ts'
import routeMethods from './plugins/app/route-methods.ts'
import security from './plugins/external/security.ts'
import sharedSchemas from './plugins/app/shared-schemas.ts'
import upstream from './plugins/app/upstream.ts'
import { withTraceLogFields } from './tracing/log-fields.ts'
import serverSpans from './tracing/server-spans.ts'
import { activeTracer } from './tracing/tracer.ts'
import { LIVE_PATH, READY_PATH } from './routes/health.ts'
import * as registry from './routes/registry.ts'
import type { RouteModule } from './routes/route-module.ts'

export interface AppOverrides {
  /** Replaces the upstream Agent (tests pass a MockAgent). */
  dispatcher?: Dispatcher
  /** Replaces the pino options (tests capture logs, the dev runner prints them for people). */
  logger?: FastifyServerOptions['logger']
  loggerInstance?: FastifyServerOptions['loggerInstance']
  /** The clock of last-known profiles, epoch milliseconds (tests age copies without waiting). */
  now?: () => number
  /** The circuit breakers' clock, epoch milliseconds (tests open and half-open them without sleeping). */
  breakerNow?: () => number
}

// Probes and scrapes arrive every few seconds from machines, not people: they get no span.
const UNTRACED: ReadonlySet<string> = new Set([LIVE_PATH, READY_PATH, METRICS_PATH])

/**
 * TypeBox's validator compiler, but headers, a query or params that already meet their schema are left as they are:
 * TypeBox's converts them in place and hands them back, and Fastify keeps what it is handed beside the raw headers,
 * so that every later read of `request.headers` merges the two into a new object. Bodies go to TypeBox's as they are.
 */
const validatorCompiler: FastifySchemaCompiler<TSchema> = route => {
  const converting = TypeBoxValidatorCompiler(route)
  if (route.httpPart === 'body') return converting
  const valid = Compile(route.schema)
  return value => valid.Check(value) || converting(value)
}

/** The route modules, from the registry's one line each. */
const routeModules: RouteModule[] = Object.values(registry)

export async function buildApp (config: Config, overrides: AppOverrides = {}) {
  // Tracing was started (or not) before the app was imported (server.ts); read once, here.
  const tracer = activeTracer()
  const logger = overrides.logger ?? loggerOptions(config)
  const fastify = Fastify({
    ...(overrides.loggerInstance === undefined
      ? { logger: tracer === null ? logger : withTraceLogFields(logger) }
      : { loggerInstance: overrides.loggerInstance }),
    // One access line per request (logger.ts).
    logController: new AccessLogController(),
    genReqId: requestId,
    requestIdHeader: false,
    ...frontServerOptions(config),
    // Requests that arrive while draining are still served (readiness already answers 503); Fastify's
    // own 503 body would not be our error body.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandlerFor(config.DEFAULT_LANGUAGE),
    ajv: { customOptions: { removeAdditional: false } }
  }).withTypeProvider<TypeBoxTypeProvider>()
  // TypeBox's compiled validators check requests too: one validator for every contract.
  fastify.setValidatorCompiler(validatorCompiler)

  // First, so that every later hook, the handlers and their log lines run inside the request's span.
  if (tracer !== null) await fastify.register(serverSpans, { tracer, untraced: UNTRACED })
  await fastify.register(requestIdPlugin)
  // Keep-alive connections end with their last answer once closing: shutdown waits for work, not sockets.
  await fastify.register(drain)
  // Before any route, so it learns every route's methods as they are added (the not-found handler's 405).
  await fastify.register(routeMethods)
  await fastify.register(errors, { defaultLanguage: config.DEFAULT_LANGUAGE })
  // Before any route: every error answer, and every answer of a route that needs credentials, says no-store.
  await fastify.register(cacheControl)
  // Before load shedding and the limits, whose refusals it summarises.
  await fastify.register(refusals)
  // Headers first, so that shed and rate-limited answers carry them too; both before any route.
  await fastify.register(security, { config })
  // Before every route: it hooks each route as it is added, and its onSend sees the serialized payload.
  await fastify.register(compression, { config })
  await fastify.register(loadShedding, { config })
  // The registry, before the plugins whose sources put their metrics on it (Redis, the key set, the upstream
  // client, the profile).
  await fastify.register(metrics, { config })
  // The shared Redis (REDIS_URL or REDIS_SENTINELS) before the limits that count in it.
  await fastify.register(redis, { config })
  await fastify.register(rateLimits, { config })
  await fastify.register(sharedSchemas, { roots: routeModules.flatMap(route => route.schemas) })
  await fastify.register(docs, { config })
  await fastify.register(auth, { config })
  // Before every route: both hook the routes whose schema declares x-app-version or a deprecation as they are added.
  await fastify.register(appVersion, { config })
  await fastify.register(deprecation)
  await fastify.register(upstream, {
    config,
    ...(overrides.dispatcher === undefined ? {} : { dispatcher: overrides.dispatcher }),
    ...(overrides.breakerNow === undefined ? {} : { breakerNow: overrides.breakerNow })
  })
  await fastify.register(profilePlugin, { config, ...(overrides.now === undefined ? {} : { now: overrides.now }) })
  await fastify.register(consoleCalls, { config })

  for (const route of routeModules) await fastify.register(route.plugin, { config })
  return fastify
}

export type App = Awaited<ReturnType<typeof buildApp>>
