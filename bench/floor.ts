// The bare floor: the least work a correct profile needs on this Node, measured in the same bench run as the
// service, against the same sandbox and the same load, in its own process. A node:http server around the profile
// work both floors share (bench/floor-profile.ts: the HS256 check, undici to the slash paths, JSON.parse, the dealer
// calls in parallel) and JSON.stringify of the composed profile. No framework, no validation, no logging.
// Honest by check: the bench asks it and the service for the same client and requires deep-equal bodies.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { floorProfile, PROFILE_PATH } from './floor-profile.ts'
import { serveParent } from './ipc.ts'
import { startMeters } from './meters.ts'

async function main (): Promise<void> {
  const work = floorProfile()

  async function profile (req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url !== PROFILE_PATH) return end(res, 404, '{}')
    const claims = work.verify(req.headers.authorization)
    if (claims === null) return end(res, 401, '{}')
    try {
      end(res, 200, JSON.stringify(await work.load(claims)))
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
      await work.close()
    }
  })
}

if (import.meta.main) await main()
