// pino options: JSON lines, and nothing secret in them whatever a log call passes.
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Config } from './config.ts'

/** Paths pino censors: callers' tokens and keys, upstream keys, cookies. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-authorization"]',
  'req.headers["x-console-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-authorization"]',
  'headers["x-console-key"]',
  'headers.cookie'
]

export function loggerOptions (config: Pick<Config, 'LOG_LEVEL'>): Exclude<FastifyServerOptions['logger'], boolean | undefined> {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' }
  }
}

/**
 * Fastify's request logging as one access line per request instead of two (`incoming request` at
 * arrival, `request completed` at the end): the completed line carries the request's fields too
 * (method, url, host, remote address and port), with the status, the response time and the request id.
 * At `info`, the default, that halves the log lines (and their serializing) of every request. The
 * arrival line is still written at `debug`, for a request that never completes.
 */
export class AccessLogController extends LogController {
  override incomingRequest (request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    // appVersion: the caller's x-app-version where the route reads it (plugins/app/app-version.ts), else left out.
    const appVersion = request.appVersion ?? undefined
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime, appVersion }
    if (error) reply.log.error({ ...fields, err: error }, 'request errored')
    else reply.log.info(fields, 'request completed')
  }
}
