// Every answer carries `x-request-id`, the request's id (gen-req-id.ts makes it).
import fp from 'fastify-plugin'

export default fp(async function requestIdPlugin (fastify) {
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  fastify.addHook('onRequest', function requestIdHeader (request, reply, done) {
    reply.header('x-request-id', request.id)
    done()
  })
}, { name: 'request-id' })
