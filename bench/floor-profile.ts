// What both floors (bench/floor.ts, bench/fastify-floor.ts) do for a profile, written once so that they differ only
// in the server around it: the HS256 check with node:crypto (signature and exp), undici.request straight to the slash
// paths, JSON.parse, the passport then the two dealer calls in parallel, breadcrumb `data` decoded. No validation of
// the answers, no deadlines, no breaker, no metrics, no copies.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { Agent, request } from 'undici'
import { operations } from '../schemas/operations.ts'

export const PROFILE_PATH = '/api/users/profile'

interface Claims { sub: string, login: string, vendor: string, exp: number }

function env (name: string): string {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is required`)
  return value
}

/** The profile work under the environment the bench gives a floor: its check, its load, its pool to close. */
export function floorProfile () {
  const upstream = env('UPSTREAM_URL')
  const passportKey = env('PASSPORT_API_KEY')
  const dealerKey = env('DEALER_API_KEY')
  const secret = Buffer.from(env('AUTH_JWT_SECRET'))
  // The slash paths the upstream redirects to: the service learns them after its first call of each.
  const url = (path: string) => new URL(path + '/', upstream).href
  const passportUrl = url(operations['passport.get_client'].path)
  const discountUrl = url(operations['dealer.discount'].path)
  const contractorUrl = url(operations['dealer.client'].path)
  // The same pool the service's client has (src/upstream/client.ts).
  const dispatcher = new Agent({ connections: 128, keepAliveTimeout: 10_000 })

  /** HS256 signature and exp; null for anything else. */
  function verify (header: string | undefined): Claims | null {
    if (header === undefined || !header.startsWith('Bearer ')) return null
    const token = header.slice(7)
    const dot = token.lastIndexOf('.')
    if (dot === -1) return null
    const expected = createHmac('sha256', secret).update(token.slice(0, dot)).digest()
    const signature = Buffer.from(token.slice(dot + 1), 'base64url')
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return null
    const claims = JSON.parse(Buffer.from(token.slice(token.indexOf('.') + 1, dot), 'base64url').toString()) as Claims
    return typeof claims.exp === 'number' && claims.exp * 1000 > Date.now() ? claims : null
  }

  async function post (href: string, key: string, body: string): Promise<any> {
    const res = await request(href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-authorization': key },
      body,
      dispatcher
    })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new Error(`upstream answered ${res.statusCode}`)
    return JSON.parse(text)
  }

  const decode = (crumb: { data: string }) => {
    let data = null
    try { data = JSON.parse(crumb.data) } catch {}
    return { ...crumb, data }
  }

  /** The composed profile of the client the claims name; throws when an upstream answers other than 200. */
  async function load (claims: Claims) {
    const uid = claims.sub.toUpperCase()
    const identity = { vendor: claims.vendor, login: claims.login, uid_client: uid }
    const passport = await post(passportUrl, passportKey, JSON.stringify(identity))
    const params = JSON.stringify({ uid_client: uid })
    const [discount, contractor] = await Promise.all([
      post(discountUrl, dealerKey, params),
      post(contractorUrl, dealerKey, params)
    ])
    return {
      uid_client: passport.uid_client,
      client: passport.client,
      catalog_cars_view: passport.catalog_cars_view.map(decode),
      catalog_cars_favourites: passport.catalog_cars_favourites.map(decode),
      discount: discount.success === true ? discount.data : null,
      contractor: contractor.success === true ? contractor.data : null,
      degraded: [],
      stale: []
    }
  }

  return { verify, load, close: async () => { await dispatcher.close() } }
}
