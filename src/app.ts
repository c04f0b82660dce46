// The application, in the shape fastify-cli and fastify/demo use: `app` is the plugin that registers everything,
// `serverOptions` the one factory of the instance's options (logger, request ids, the front's limits, the
// pre-routing error answers, validation), and buildApp() composes the two without listening: server.ts listens,
// tests inject or listen on port 0, the dev runner, the scripts and the benchmark wire it as they need.
import Fastify, {
  type FastifyHttpOptions, type FastifyInstance, type FastifySchemaCompiler, type FastifyServerOptions
} from 'fastify'
import fp from 'fastify-plugin'
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Tracer } from '@opentelemetry/api'
import type { Server } from 'node:http'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import type { Dispatcher } from 'undici'
import { clientErrorHandlerFor } from './client-errors.ts'
import { trustProxySetting, type Config } from './config.ts'
import { AccessLogController, loggerOptions } from './logger.ts'
import { METRICS_PATH } from './plugins/app/metrics/path.ts'
import { requestId } from './plugins/app/request-id/gen-req-id.ts'
import appVersion from './plugins/app/app-version/index.ts'
import auth from './plugins/app/auth.ts'
import cacheControl from './plugins/app/cache-control/index.ts'
import compression from './plugins/external/compress.ts'
import deprecation from './plugins/app/deprecation/index.ts'
import docs, { type DescribeDocument } from './plugins/external/docs/index.ts'
import drain from './plugins/app/drain.ts'
import errors from './plugins/app/errors/index.ts'
import loadShedding from './plugins/external/load-shedding/index.ts'
import metrics from './plugins/app/metrics/index.ts'
import personalRoutes from './routes/personal.ts'
import pipelining from './plugins/app/pipelining.ts'
import profilePlugin from './plugins/app/profile.ts'
import refusals from './plugins/app/refusals/index.ts'
import rateLimits from './plugins/external/rate-limit/index.ts'
import redis from './plugins/app/redis.ts'
import requestIdPlugin from './plugins/app/request-id/index.ts'
import routeMethods from './plugins/app/route-methods.ts'
import security from './plugins/external/security.ts'
import sharedSchemas from './plugins/app/shared-schemas/index.ts'
import upstream from './plugins/app/upstream.ts'
import { withTraceLogFields } from './tracing/log-fields.ts'
import serverSpans from './tracing/server-spans.ts'
import { activeTracer } from './tracing/tracer.ts'
import { LIVE_PATH, READY_PATH } from './routes/health/route.ts'
import { routeModules } from './routes/registry.ts'

/** What the instance is made with, beside the configuration. */
export interface ServerOverrides {
  /** Replaces the pino options (tests capture logs, the dev runner prints them for people). */
  logger?: FastifyServerOptions['logger']
  loggerInstance?: FastifyServerOptions['loggerInstance']
  /** The active tracer (src/tracing/tracer.ts): with one, log lines carry the trace's fields. */
  tracer?: Tracer | null
}

/** What the app plugin is registered with. */
export interface AppOptions {
  config: Config
  /** Replaces the upstream Agent (tests pass a MockAgent). */
  dispatcher?: Dispatcher
  /** The clock of last-known profiles, epoch milliseconds (tests age copies without waiting). */
  now?: () => number
  /** The circuit breakers' clock, epoch milliseconds (tests open and half-open them without sleeping). */
  breakerNow?: () => number
  /** Adds to the served OpenAPI document (`npm run dev` describes its test identities); never in production. */
  describeDocument?: DescribeDocument
  /** The active tracer; with one, every request gets a SERVER span. */
  tracer?: Tracer | null
}

export type AppOverrides = Omit<ServerOverrides, 'tracer'> & Omit<AppOptions, 'config' | 'tracer'>

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

// Node's default check interval (30 s) would let a slow client hold a socket 30 s past its deadlines.
const CONNECTIONS_CHECKING_INTERVAL_MS = 1000
// The socket is silent while a request is handled: its inactivity timeout must outlast the longest budget.
const HANDLING_MARGIN_MS = 2000

/** Fastify's server options for the front's limits and for who the client is behind a balancer. */
function httpServerOptions (config: Config) {
  return {
    connectionTimeout: Math.max(
      config.SERVER_CONNECTION_TIMEOUT_MS,
      Math.max(config.PROFILE_TIMEOUT_MS, config.UPSTREAM_TIMEOUT_MS) + HANDLING_MARGIN_MS
    ),
    keepAliveTimeout: config.SERVER_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: config.SERVER_REQUEST_TIMEOUT_MS,
    maxRequestsPerSocket: config.SERVER_MAX_REQUESTS_PER_SOCKET,
    bodyLimit: config.SERVER_BODY_LIMIT_BYTES,
    http: {
      headersTimeout: config.SERVER_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECKING_INTERVAL_MS, config.SERVER_HEADERS_TIMEOUT_MS)
    },
    // loadConfig has refused any other value.
    trustProxy: trustProxySetting(config.TRUST_PROXY) ?? false
  } satisfies FastifyHttpOptions<Server>
}

/** The options of every instance of the service: whoever builds one (buildApp, a test of one plugin) starts here. */
export function serverOptions (config: Config, overrides: ServerOverrides = {}) {
  const logger = overrides.logger ?? loggerOptions(config)
  const tracer = overrides.tracer ?? null
  return {
    ...(overrides.loggerInstance === undefined
      ? { logger: tracer === null ? logger : withTraceLogFields(logger) }
      : { loggerInstance: overrides.loggerInstance }),
    // One access line per request (logger.ts).
    logController: new AccessLogController(),
    genReqId: requestId,
    requestIdHeader: false,
    ...httpServerOptions(config),
    // Requests that arrive while draining are still served (readiness already answers 503); Fastify's
    // own 503 body would not be our error body.
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandlerFor(config.DEFAULT_LANGUAGE),
    ajv: { customOptions: { removeAdditional: false } }
  } satisfies FastifyServerOptions
}

/**
 * Every plugin and route, in the order their hooks must run: Fastify runs the hooks of one kind in the order their
 * plugins were registered, and an onRoute hook sees only the routes added after it. What a plugin needs of another
 * (a decorator, the metrics registry) is its fastify-plugin `dependencies`, checked here: a plugin registered
 * before one it needs fails the boot (test/plugins/dependencies.test.ts).
 */
export default async function app (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  const { config, tracer = null } = opts
  // TypeBox's compiled validators check requests too: one validator for every contract. Set here, not through the
  // server option (compilersFactory), which installs it only at ready: the console composes it at registration.
  fastify.setValidatorCompiler(validatorCompiler)

  // Before Fastify sees a request: a connection's pipelined requests run a few at a time (before drain's listener).
  await fastify.register(pipelining)
  // So that every later hook, the handlers and their log lines run inside the request's span.
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
  // The registry, before the plugins whose sources put their metrics on it (they declare it a dependency).
  await fastify.register(metrics, { config })
  await fastify.register(redis, { config })
  // Before the limits: its onRoute hook gives a personal route the per-client limit the limits' hook then reads.
  await fastify.register(personalRoutes, { config })
  await fastify.register(rateLimits, { config })
  await fastify.register(sharedSchemas, { roots: routeModules.flatMap(route => route.schemas) })
  await fastify.register(docs, {
    config, ...(opts.describeDocument === undefined ? {} : { describe: opts.describeDocument })
  })
  await fastify.register(auth, { config })
  // Before every route: both hook the routes whose schema declares x-app-version or a deprecation as they are added.
  await fastify.register(appVersion, { config })
  await fastify.register(deprecation)
  await fastify.register(upstream, {
    config,
    ...(opts.dispatcher === undefined ? {} : { dispatcher: opts.dispatcher }),
    ...(opts.breakerNow === undefined ? {} : { breakerNow: opts.breakerNow })
  })
  await fastify.register(profilePlugin, { config, ...(opts.now === undefined ? {} : { now: opts.now }) })

  // In the registry's order, which is the document's: a new route module is appended there.
  for (const route of routeModules) await fastify.register(route.plugin, { config })
}

/** A Fastify instance of the service, ready to inject or listen: serverOptions() and the app plugin. */
export async function buildApp (config: Config, overrides: AppOverrides = {}) {
  // Tracing was started (or not) before the app was imported (server.ts); read once, here.
  const tracer = activeTracer()
  const { logger, loggerInstance, ...appOverrides } = overrides
  const fastify = Fastify(serverOptions(config, {
    tracer,
    ...(logger === undefined ? {} : { logger }),
    ...(loggerInstance === undefined ? {} : { loggerInstance })
  })).withTypeProvider<TypeBoxTypeProvider>()
  // Not encapsulated (fastify-plugin): the decorators are the instance's, for server.ts, the scripts and the tests.
  await fastify.register(fp(app, { name: 'app' }), { config, tracer, ...appOverrides })
  return fastify
}

export type App = Awaited<ReturnType<typeof buildApp>>
