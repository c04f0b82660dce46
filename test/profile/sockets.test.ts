// What only real sockets show: the dealer lookups really run in parallel, and a caller that goes away
// takes its upstream calls with it. A node:http upstream on port 0 and the real undici Agent.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { buildApp } from '../../src/app.ts'
import { testConfig } from '../helpers/build-app.ts'
import { bearer, hs256 } from '../helpers/tokens.ts'
import { listenLocally } from '../helpers/local-server.ts'

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void

/** An upstream on port 0 that hands each request, body read, to `handler`; closed at teardown. */
async function upstreamServer (t: Test, handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', chunk => { body += chunk })
    req.on('end', () => handler(req, res, body))
  })
  const origin = await listenLocally(t, server)
  return origin
}

function respondJson (res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
  res.end(JSON.stringify(body))
}

async function app (t: Test, env: Record<string, string>) {
  const built = await buildApp(testConfig(env))
  t.teardown(() => built.close())
  return built
}

t.test('discount and contractor run in parallel: each answers only once the other has arrived', async t => {
  const waiting = new Map<string, () => void>()
  const arrived: string[] = []
  const url = await upstreamServer(t, (req, res) => {
    const path = req.url ?? ''
    arrived.push(path)
    if (path === '/bc_passport/get_client') return respondJson(res, fx.passportFound)
    const body = path === '/bc_api_web_service/discount' ? fx.discountWithBonuses : fx.contractorResult
    const other = path === '/bc_api_web_service/discount'
      ? '/bc_api_web_service/client'
      : '/bc_api_web_service/discount'
    const release = () => respondJson(res, body)
    // Sequential calls would deadlock here until the budget ends and degrade a section.
    const otherRelease = waiting.get(other)
    if (otherRelease === undefined) {
      waiting.set(path, release)
    } else {
      otherRelease()
      release()
    }
  })
  const front = await app(t, { UPSTREAM_URL: url, PROFILE_TIMEOUT_MS: '3000' })
  const res = await front.inject({ url: '/api/users/profile', headers: bearer(hs256()) })
  t.equal(res.statusCode, 200)
  t.notOk(res.headers['x-degraded'], 'nothing degraded')
  t.strictSame(res.json().degraded, [])
  t.equal(arrived[0], '/bc_passport/get_client', 'the passport first')
  t.equal(arrived.length, 3)
})

t.test('a caller that disconnects aborts its upstream calls', async t => {
  t.setTimeout(15_000)
  let passportArrived!: () => void
  const passportSeen = new Promise<void>(resolve => { passportArrived = resolve })
  let upstreamClosed!: (finished: boolean) => void
  const closed = new Promise<boolean>(resolve => { upstreamClosed = resolve })
  const url = await upstreamServer(t, (_req, res) => {
    // Never answers: only the front's abort can end this exchange before the test times out.
    res.on('close', () => upstreamClosed(res.writableFinished))
    passportArrived()
  })
  // Deadlines far beyond the test's own timeout: they cannot be what ends the exchange.
  const front = await app(t, { UPSTREAM_URL: url, PROFILE_TIMEOUT_MS: '600000', UPSTREAM_TIMEOUT_MS: '600000' })
  const address = await front.listen({ port: 0, host: '127.0.0.1' })
  const caller = httpRequest(`${address}/api/users/profile`, { headers: bearer(hs256()) })
  caller.on('error', () => {})
  caller.end()
  await passportSeen
  caller.destroy()
  t.equal(await closed, false, 'the upstream exchange was torn down before any answer')
})
