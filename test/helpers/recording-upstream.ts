// The sandbox upstream behind a proxy that records the headers of every request it passes on: what the
// upstream receives, for tests of what the service forwards. Both closed when the test ends.
import type { Test } from 'tap'
import {
  createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse
} from 'node:http'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { DEALER_KEY, PASSPORT_KEY } from './build-app.ts'
import { listenLocally } from './local-server.ts'

export interface Received { path: string, headers: IncomingHttpHeaders }

/** Passes a request on to `target` as it came (method, path, headers, body) and its answer back. */
export function forward (target: URL, req: IncomingMessage, res: ServerResponse): void {
  const options = { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }
  const out = httpRequest(options, answer => {
    res.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(res)
  })
  req.pipe(out)
}

export async function recordingUpstream (t: Test): Promise<{ url: string, received: Received[] }> {
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => sandbox.close())
  const target = new URL(sandbox.url)
  const received: Received[] = []
  const proxy = createServer((req, res) => {
    received.push({ path: req.url ?? '', headers: req.headers })
    forward(target, req, res)
  })
  return { url: await listenLocally(t, proxy), received }
}
