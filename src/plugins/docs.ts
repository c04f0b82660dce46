// STUB: replaced by the docs work (issue 3 item 6).
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'

export default fp<{ config: Config }>(async function docs () {}, { name: 'docs' })
