// pino options: JSON lines, and nothing secret in them whatever a log call passes.
import type { FastifyServerOptions } from 'fastify'
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
