// `Cache-Control: no-store` on every error answer of every route (the not-found handler's, a 429 and a shed 503
// included) and on every answer of a route that needs credentials (its schema's `security`, or `config.private`),
// set when the answer is sent, so that no path to an answer escapes it (no-store.ts says why).
import fp from 'fastify-plugin'
import { forbidsStoring, needsCredentials, NO_STORE } from './no-store.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** true: every answer is about the caller and no cache may keep it (a route without `security` in its schema). */
    private?: boolean
  }
}

export default fp(async function cacheControl (fastify) {
  // Decided once per route, as it is added: a route whose schema names a security scheme is a private one.
  fastify.addHook('onRoute', function markPrivate (route) {
    if (route.config?.private === true || !needsCredentials(route.schema)) return
    route.config = { ...route.config, private: true }
  })
  // A callback hook: an async one costs a promise and a microtask turn on every request.
  fastify.addHook('onSend', function noStore (request, reply, payload, done) {
    const personal = reply.statusCode >= 400 || request.routeOptions.config.private === true
    if (personal && !forbidsStoring(reply.getHeader('cache-control'))) reply.header('cache-control', NO_STORE)
    done(null, payload)
  })
}, { name: 'cache-control' })
