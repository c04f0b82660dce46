// pino options: JSON lines, and nothing secret in them whatever a log call passes.
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
// CommonJS without named exports at run time; its types see the module, whose `SonicBoom` is the class.
import sonicBoom from 'sonic-boom'
import type { Config } from './config.ts'

/** Paths pino censors: callers' tokens and keys, upstream keys, cookies. */
const REDACT_PATHS = [
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

export function loggerOptions (
  config: Pick<Config, 'LOG_LEVEL'>
): Exclude<FastifyServerOptions['logger'], boolean | undefined> {
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
    // appVersion: the caller's x-app-version where the route reads it (plugins/app/app-version/), else left out.
    const appVersion = request.appVersion ?? undefined
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime, appVersion }
    if (error) reply.log.error({ ...fields, err: error }, 'request errored')
    else reply.log.info(fields, 'request completed')
  }
}

/** Lines held while stdout's reader is behind; past this, new lines are dropped instead of held in memory. */
const LOG_BACKLOG_MAX_BYTES = 4 * 1024 * 1024

/** Where pino writes: `write` takes one line and never blocks nor throws. */
export interface LogDestination { write (line: string): void }

/**
 * The service's stdout as pino's stream, such that no reader can stop the process: each line is written
 * at once without waiting (stdout, a pipe, is non-blocking), a full pipe keeps the line for the next
 * write (up to LOG_BACKLOG_MAX_BYTES), and a reader gone for good (EPIPE) ends the writing. pino's own
 * destination retries a failed write every 100 ms without end, so SIGTERM with a dead log shipper never
 * exited; this one is never flushed at exit, so there is nothing to wait for.
 */
export function stdoutDestination (): LogDestination {
  // Opens fd 1 through Node first: a pipe is then non-blocking, so a write to a full one fails at once.
  const fd = process.stdout.fd
  const stream = new sonicBoom.SonicBoom({ fd, sync: true, maxLength: LOG_BACKLOG_MAX_BYTES, retryEAGAIN: () => false })
  let open = true
  stream.on('error', (error: NodeJS.ErrnoException) => { if (error.code !== 'EAGAIN') open = false })
  return { write (line) { if (open) stream.write(line) } }
}
