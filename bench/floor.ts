// The floor: the least work a correct profile needs on this Node, measured in the same bench run as the
// service, against the same sandbox and the same load, in its own process. A node:http server, the
// HS256 check with node:crypto (signature and exp), undici.request straight to the slash paths,
// JSON.parse, the two dealer calls in parallel, breadcrumb `data` decoded, JSON.stringify of the composed
// profile. No framework, no validation, no logging, no deadlines, no breaker, no metrics: what the
// service does on top of this is what its CPU per profile is compared against (bench/report.ts).
// Honest by check: the bench asks both for the same client and requires deep-equal bodies.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import { operations } from '../schemas/operations.ts'
import { serveParent } from './ipc.ts'
import { startMeters } from './meters.ts'

const PROFILE_PATH = '/api/users/profile'

interface Claims { sub: string, login: string, vendor: string, exp: number }

function env (name: string): string {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is required`)
  return value
}

async function main (): Promise<void> {
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

  async function profile (req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url !== PROFILE_PATH) return end(res, 404, '{}')
    const claims = verify(req.headers.authorization)
    if (claims === null) return end(res, 401, '{}')
    const uid = claims.sub.toUpperCase()
    try {
      const identity = { vendor: claims.vendor, login: claims.login, uid_client: uid }
      const passport = await post(passportUrl, passportKey, JSON.stringify(identity))
      const params = JSON.stringify({ uid_client: uid })
      const [discount, contractor] = await Promise.all([
        post(discountUrl, dealerKey, params),
        post(contractorUrl, dealerKey, params)
      ])
      end(res, 200, JSON.stringify({
        uid_client: passport.uid_client,
        client: passport.client,
        catalog_cars_view: passport.catalog_cars_view.map(decode),
        catalog_cars_favourites: passport.catalog_cars_favourites.map(decode),
        discount: discount.success === true ? discount.data : null,
        contractor: contractor.success === true ? contractor.data : null,
        degraded: [],
        stale: []
      }))
    } catch {
      end(res, 502, '{}')
    }
  }

  function end (res: ServerResponse, status: number, body: string): void {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body)
    })
    res.end(body)
  }

  const server = createServer((req, res) => { profile(req, res) })
  // The same socket limits the service has (keep-alive, as autocannon uses).
  server.keepAliveTimeout = 72_000
  const meters = startMeters(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  serveParent(`http://127.0.0.1:${port}`, {
    ...meters.handlers,
    async close () {
      meters.stop()
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
      await dispatcher.close()
    }
  })
}

if (import.meta.main) await main()
