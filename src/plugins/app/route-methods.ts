// Which methods each API path serves, learnt from the routes as Fastify adds them (its onRoute hook, never a hand
// list): the not-found handler answers 405 with `Allow` for such a path (errors.ts), and OPTIONS gets `Allow`.
// Every API route is static, so a path's methods are one lookup. A path under a parametric or wildcard route (the
// docs' files) is no known path: an unknown file is 404 whatever the method, as any unknown path.
import fp from 'fastify-plugin'
import type { RouteOptions } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** The `Allow` value of a request path: its served methods, OPTIONS included; undefined for an unknown path. */
    allowedMethods (path: string): string | undefined
  }
}

const isStatic = (url: string) => !url.includes(':') && !url.includes('*')

export default fp(async function routeMethods (fastify) {
  const served = new Map<string, Set<string>>()
  const allow = new Map<string, string>()
  fastify.addHook('onRoute', (route: RouteOptions) => {
    if (!isStatic(route.url)) return
    // OPTIONS is every known path's (here or in CORS' catch-all preflight route): it never makes a path known.
    const methods = [route.method].flat().filter(method => method !== 'OPTIONS')
    if (methods.length === 0) return
    const set = served.get(route.url) ?? new Set()
    for (const method of methods) set.add(method)
    served.set(route.url, set)
    allow.set(route.url, [...set, 'OPTIONS'].sort().join(', '))
  })
  fastify.decorate('allowedMethods', (path: string) => allow.get(path))
  // OPTIONS of a known path says what it allows, also when CORS' preflight route serves it (CORS_ORIGINS set); that
  // route is a catch-all, so an unknown path is sent to the not-found handler here, as it is without CORS.
  fastify.addHook('onRequest', function allowOnOptions (request, reply, done) {
    if (request.method !== 'OPTIONS') return done()
    const methods = allow.get(request.url.split('?', 1)[0]!)
    if (methods !== undefined) reply.header('allow', methods)
    else if (!request.is404) return reply.callNotFound()
    done()
  })
}, { name: 'route-methods' })
