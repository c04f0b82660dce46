// What a route module hands the route registry (registry.ts): the app registers its plugin and shared schemas from
// it, and the tests read the routes it serves and the error codes each can answer.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import type { Config } from '../config.ts'
import type { errorCodes } from '../errors.ts'

export type ErrorCode = typeof errorCodes[number]

export interface RouteModule {
  /** Registered by app.ts with the app's configuration. */
  plugin: FastifyPluginAsyncTypebox<{ config: Config }>
  /** The schemas with a `$id` its routes answer with or take, registered as shared schemas (OpenAPI components). */
  schemas: TSchema[]
  /** Each route it serves, as `METHOD /path`, with the error codes it can answer there. */
  errorCodes: Record<string, readonly ErrorCode[]>
}
