// Every answer carries `x-request-id`: the caller's own when it is well formed, a fresh UUID otherwise.
// The same id is forwarded upstream and is on every log line of the request.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's `genReqId`: trusts an inbound id only when it cannot smuggle anything into logs or headers. */
export function requestId (req: IncomingMessage): string {
  const inbound = req.headers['x-request-id']
  return typeof inbound === 'string' && WELL_FORMED.test(inbound) ? inbound : randomUUID()
}

export default fp(async function requestIdPlugin (fastify) {
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  fastify.addHook('onRequest', function requestIdHeader (request, reply, done) {
    reply.header('x-request-id', request.id)
    done()
  })
}, { name: 'request-id' })
