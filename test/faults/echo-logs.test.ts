// No upstream key and no client login in any log line, whatever the upstream sends back: an upstream that
// echoes the key it received and the client's login in every place it can write (a Location's query and path,
// a Content-Type's parameters, the status line, the body, bytes that break HTTP) fails every way a call can
// fail, for the passport, the dealers and the console, with the service on a real port at LOG_LEVEL=debug.
// Every log line is scanned.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Writable } from 'node:stream'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { operations, type OperationName } from '../../schemas/operations.ts'
import { loggerOptions } from '../../src/logger.ts'
import { consoleCall, faultService, readResponse, SECRETS } from '../helpers/fault-upstream.ts'
import { listenLocally } from '../helpers/local-server.ts'
import { bearer, claimsFor, hs256 } from '../helpers/tokens.ts'

const LOGIN = fx.IVANOV.login
const byPath = new Map<string, OperationName>(
  Object.entries(operations).map(([name, op]) => [op.path, name as OperationName]))

/** How the upstream fails; `echo` is the key it received and the login, as it would put them in a URL. */
type Mode = (req: IncomingMessage, res: ServerResponse, path: string, echo: string) => void

const html = (echo: string) => `<html><body>key and login: ${echo} ${decodeURIComponent(echo)}</body></html>`
const MODES: Record<string, Mode> = {
  status_5xx: (_req, res, _path, echo) => {
    res.writeHead(500, `Failed for ${decodeURIComponent(echo)}`, { 'content-type': `text/html; x-echo=${echo}` })
      .end(html(echo))
  },
  status_4xx: (_req, res, _path, echo) => {
    res.writeHead(422, { 'content-type': 'application/json', 'x-echo': echo })
      .end(JSON.stringify({ error: decodeURIComponent(echo) }))
  },
  content_type: (_req, res, _path, echo) => {
    res.writeHead(200, { 'content-type': `text/html; x-key=${decodeURIComponent(echo)}; q=${echo}` }).end(html(echo))
  },
  json: (_req, res, _path, echo) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(`{"success": tr ${decodeURIComponent(echo)}`)
  },
  contract: (_req, res, _path, echo) => {
    const text = decodeURIComponent(echo)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ [text]: text, success: text }))
  },
  too_large: (_req, res, _path, echo) => {
    res.writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ success: true, pad: decodeURIComponent(echo).repeat(40_000) }))
  },
  redirect_refused: (_req, res, _path, echo) => {
    res.writeHead(307, { location: `https://${echo.slice(0, 8)}:${echo}@sso.example/login?${echo}#${echo}` }).end()
  },
  redirect_other_path: (_req, res, _path, echo) => {
    res.writeHead(307, { location: `/login/${echo}/?back=${echo}` }).end()
  },
  redirect_unparseable: (_req, res, _path, echo) => {
    res.writeHead(307, { location: `http://[${decodeURIComponent(echo)}]/` }).end()
  },
  redirect_302: (_req, res, path, echo) => {
    res.writeHead(302, { location: `${path}/?${echo}` }).end()
  },
  redirect_loop: (_req, res, path, echo) => {
    res.writeHead(307, { location: `${path.endsWith('/') ? path : `${path}/`}#${echo}` }).end()
  },
  broken_http: (req, _res, _path, echo) => {
    req.socket.end(`HTTP/1.1 200 OK\r\nx-echo: ${decodeURIComponent(echo)}\u0001\r\n\r\n${echo}`)
  },
  connect: req => { req.socket.destroy() }
}

let mode: keyof typeof MODES = 'status_5xx'
let failing: 'passport' | 'dealers' = 'passport'

// The upstream: answers the passport normally while the dealers fail, and the other way round.
const server = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
    const path = (req.url ?? '/').split(/[?#]/)[0]!
    const operation = byPath.get(path.replace(/\/+$/, ''))
    if (operation === undefined) return res.writeHead(404).end()
    const isPassport = operation === 'passport.get_client'
    if (isPassport === (failing === 'dealers')) {
      const answer = isPassport
        ? fx.passportFound
        : operation === 'dealer.discount' ? fx.discountWithBonuses : fx.contractorResult
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
    }
    const key = String(req.headers['x-authorization'])
    const login = isPassport ? (JSON.parse(body) as { login: string }).login : LOGIN
    MODES[mode]!(req, res, path, encodeURIComponent(`${key}|${login}`))
  })
})
const upstreamUrl = await listenLocally(t, server)

const lines: string[] = []
const stream = new Writable({
  write (chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(line => line.length > 0))
    done()
  }
})
const base = await faultService(t, upstreamUrl, {
  LOG_LEVEL: 'debug',
  UPSTREAM_TIMEOUT_MS: '2000',
  PROFILE_STALE_IF_ERROR_S: '0'
}, { logger: { ...loggerOptions({ LOG_LEVEL: 'debug' }), stream } })

const token = hs256(claimsFor())
const profile = () => fetch(`${base}/api/users/profile`, { headers: bearer(token) })

t.test('every failure kind, echoing the keys and the login everywhere: no log line carries them', async t => {
  const reasons = new Set<string>()
  for (const name of Object.keys(MODES)) {
    mode = name
    for (const target of ['passport', 'dealers'] as const) {
      failing = target
      const { status, headers } = await readResponse(t, await profile())
      if (target === 'dealers') t.equal(headers.get('x-degraded'), 'discount,contractor', `${name}: dealers degraded`)
      else t.ok(status >= 502 && status <= 504, `${name}: the passport's failure is the caller's ${status}`)
    }
    failing = 'passport'
    await readResponse(t, await consoleCall(base, 'passport.get_client', fx.passportParams))
  }
  for (const line of lines) {
    const reason = (JSON.parse(line) as { reason?: unknown }).reason
    if (typeof reason === 'string') reasons.add(reason)
  }
  // The scan below is only worth something if the failures were logged, each under its reason.
  t.strictSame([...reasons].sort(), ['connect', 'content_type', 'contract', 'json', 'redirect_invalid',
    'redirect_loop', 'redirect_refused', 'status', 'too_large'], 'every failure kind was logged')
  t.ok(lines.some(line => line.includes('"redirects":[{"status":307')), 'hops were logged, reduced')

  const secrets = { PASSPORT_KEY: SECRETS.PASSPORT_KEY, DEALER_KEY: SECRETS.DEALER_KEY, login: LOGIN }
  const leaks = lines.flatMap(line => Object.entries(secrets)
    .filter(([, secret]) => line.includes(secret) || line.includes(encodeURIComponent(secret)))
    .map(([name]) => `${name}: ${line.slice(0, 400)}`))
  t.strictSame(leaks, [], `none of ${lines.length} log lines carries a key or the login`)
})
