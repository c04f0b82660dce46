// STUB: replaced by the console work (issue 3 item 4).
import type { TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Config } from '../config.ts'

export const consoleSchemas: TSchema[] = []

const consoleRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async () => {}
export default consoleRoute
