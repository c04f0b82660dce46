// STUB: replaced by the auth work (issue 3 item 2).
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'

export default fp<{ config: Config }>(async function auth () {}, { name: 'auth' })
