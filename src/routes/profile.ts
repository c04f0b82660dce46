// STUB: replaced by the profile work (issue 3 item 3).
import type { TSchema } from 'typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Config } from '../config.ts'

export const profileSchemas: TSchema[] = []

const profile: FastifyPluginAsyncTypebox<{ config: Config }> = async () => {}
export default profile
