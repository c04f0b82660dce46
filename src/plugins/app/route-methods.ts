// Which methods each known path serves, learnt from the routes as Fastify adds them (never a hand list):
// the not-found handler answers 405 with `Allow` for a known path (errors.ts), and OPTIONS gets `Allow`.
import fp from 'fastify-plugin'
import type { RouteOptions } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** The `Allow` value of a request path: its served methods, OPTIONS included; undefined for an unknown path. */
    allowedMethods (path: string): string | undefined
  }
}

/** A route pattern as a matcher of concrete paths: `:name` is one segment, `*` the rest. */
function matcher (url: string): RegExp {
  const source = url.split(/(:[\w-]+|\*)/).map(part =>
    part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('')
  return new RegExp(`^${source}$`)
}

export class RouteMethods {
  private readonly exact = new Map<string, Set<string>>()
  private readonly patterns: Array<{ match: RegExp, methods: Set<string> }> = []

  add (methods: string | string[], url: string): void {
    // OPTIONS is every known path's (here or in CORS' catch-all preflight route): it never makes a path known.
    const served = (Array.isArray(methods) ? methods : [methods]).filter(method => method !== 'OPTIONS')
    if (served.length === 0) return
    let set = this.exact.get(url) ?? this.patterns.find(p => p.match.source === matcher(url).source)?.methods
    if (set === undefined) {
      set = new Set()
      if (/[:*]/.test(url)) this.patterns.push({ match: matcher(url), methods: set })
      else this.exact.set(url, set)
    }
    for (const method of served) set.add(method)
  }

  /** The methods served at `path`, sorted and joined, OPTIONS included; undefined when no route matches. */
  allowed (path: string): string | undefined {
    const set = this.exact.get(path) ?? this.patterns.find(p => p.match.test(path))?.methods
    if (set === undefined) return undefined
    return [...set, 'OPTIONS'].sort().join(', ')
  }
}

export default fp(async function routeMethods (fastify) {
  const known = new RouteMethods()
  fastify.addHook('onRoute', (route: RouteOptions) => { known.add(route.method, route.url) })
  fastify.decorate('allowedMethods', (path: string) => known.allowed(path))
  // A served OPTIONS (CORS' preflight route, when CORS_ORIGINS is set) says what the path allows too.
  fastify.addHook('onRequest', function allowOnOptions (request, reply, done) {
    if (request.method === 'OPTIONS') {
      const allow = known.allowed(request.url.split('?', 1)[0]!)
      if (allow !== undefined) reply.header('allow', allow)
    }
    done()
  })
}, { name: 'route-methods' })
