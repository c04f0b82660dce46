// The sandbox upstream: a real HTTP server that behaves like the passport and dealer upstreams
// (docs/upstream.md) for the seeded clients. It is built from the operation registry, so a new
// operation only needs its answer in `resolvers` below. Used by `npm run dev`, end-to-end tests and the
// benchmark, so the hot path stays cheap: seeded answers are serialized once, at start.
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { compileOperationContracts } from '../src/upstream/contract/check.ts'
import { operationNames, operations, type KeyName, type OperationName, type ParamsOf } from '../schemas/operations.ts'
import { faultResponse, JSON_TYPE } from './fault-response.ts'
import { seededClients, unknownResponses, type SeededClient } from './seed.ts'
import { outcomeFaults, outcomeSeeds, type OutcomeFault } from './outcomes.ts'

export interface SandboxUpstreamOptions {
  /** The `x-authorization` value each upstream requires. */
  keys: Record<KeyName, string>
  host?: string
  /** 0 picks a free port. */
  port?: number
  /** Fixed delay before every answer, for the benchmark. */
  delayMs?: number
  /** Defaults to the seed; tests pass their own to serve a drifted answer. */
  clients?: readonly SeededClient[]
  /** Request bodies above this are answered 413. */
  maxBodyBytes?: number
  /** Serves https with this PEM key and certificate (the benchmark's production-shaped upstream). */
  tls?: { key: string | Buffer, cert: string | Buffer }
  /** Also serves the test identities of outcomes.ts, failing each as its state says (`npm run dev`). */
  outcomes?: boolean
}

export interface SandboxCounts {
  /** Requests that reached an operation's slash path, whatever the answer. */
  total: number
  byOperation: Record<OperationName, number>
  /** 307 answers to unslashed operation paths (not part of `total`). */
  redirects: number
}

export interface SandboxUpstream {
  /** Base URL to give the upstream client, e.g. `http://127.0.0.1:39123`. */
  url: string
  counts (): SandboxCounts
  resetCounts (): void
  /** Changes the delay of answers sent from now on. */
  setDelay (ms: number): void
  /** TLS handshakes completed (new connections) since start; 0 over plain http. */
  secureConnections (): number
  close (): Promise<void>
}

/** Every answer carries the delay it was held for, so a test can see the server applied it. */
export const DELAY_HEADER = 'x-sandbox-delay-ms'

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(?:;|$)/i

interface CannedResponse { status: number, headers: OutgoingHttpHeaders, body: Buffer }
/** An outcome client's request: the fault it meets, and the answer it would have had. */
interface Faulted { fault: OutcomeFault, response: CannedResponse }

function jsonResponse (status: number, value: unknown, extra: OutgoingHttpHeaders = {}): CannedResponse {
  const body = Buffer.from(JSON.stringify(value))
  return { status, headers: { 'content-type': JSON_TYPE, 'content-length': body.length, ...extra }, body }
}

// The spec shows no envelope for these protocol errors; they follow its general rule (success false,
// a Russian message, a msg_code) so they read like the upstream's own failures.
function failure (
  status: number, msgCode: string, message: string, extra?: OutgoingHttpHeaders, details?: object
): CannedResponse {
  return jsonResponse(status, { success: false, message, msg_code: msgCode, ...details }, extra)
}

const NOT_FOUND = failure(404, 'NOT_FOUND', 'Метод не найден')
const METHOD_NOT_ALLOWED = failure(405, 'METHOD_NOT_ALLOWED', 'Метод запроса не поддерживается, используйте POST',
  { allow: 'POST' })
const UNAUTHORIZED = failure(401, 'UNAUTHORIZED', 'Неверный или отсутствующий ключ авторизации (x-authorization)')
const UNSUPPORTED_TYPE = failure(415, 'UNSUPPORTED_MEDIA_TYPE',
  'Ожидается тип содержимого application/x-www-form-urlencoded')
// Closing the connection spares reading the rest of an oversized body.
const TOO_LARGE = failure(413, 'PAYLOAD_TOO_LARGE', 'Слишком большое тело запроса', { connection: 'close' })
const INVALID_JSON = failure(400, 'INVALID_JSON', 'Тело запроса не является корректным JSON')

function redirect (location: string): CannedResponse {
  const href = location.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  const body = Buffer.from(`<html><body>Redirecting to <a href="${href}">${href}</a></body></html>`)
  return {
    status: 307, headers: { location, 'content-type': 'text/html; charset=utf-8', 'content-length': body.length }, body
  }
}

type Resolver<N extends OperationName> = (params: ParamsOf<N>) => CannedResponse
type Resolvers = { [N in OperationName]: Resolver<N> }

/** What each operation answers, looked up in maps of pre-serialized answers. */
function buildResolvers (clients: readonly SeededClient[]): Resolvers {
  const passportKey = (p: ParamsOf<'passport.get_client'>) => `${p.vendor}\n${p.login}\n${p.uid_client.toUpperCase()}`
  const passport = new Map(clients.map(c => [passportKey(c.identity), jsonResponse(200, c.passport)]))
  const discount = new Map(clients.map(c => [c.identity.uid_client.toUpperCase(), jsonResponse(200, c.discount)]))
  const contractor = new Map(clients.map(c => [c.identity.uid_client.toUpperCase(), jsonResponse(200, c.contractor)]))
  const passportNotFound = jsonResponse(operations['passport.get_client'].notFound.status, unknownResponses.passport)
  const noDiscount = jsonResponse(200, unknownResponses.discount)
  const noContractor = jsonResponse(200, unknownResponses.contractor)
  return {
    'passport.get_client': p => passport.get(passportKey(p)) ?? passportNotFound,
    'dealer.discount': p => discount.get(p.uid_client.toUpperCase()) ?? noDiscount,
    'dealer.client': p => contractor.get(p.uid_client.toUpperCase()) ?? noContractor
  }
}

function checkOptions (options: SandboxUpstreamOptions): void {
  for (const name of ['passport', 'dealer'] as const satisfies KeyName[]) {
    if (typeof options.keys?.[name] !== 'string' || options.keys[name] === '') {
      throw new TypeError(`startSandboxUpstream: keys.${name} must be a non-empty string`)
    }
  }
  if (options.delayMs !== undefined) checkDelay(options.delayMs)
}

function checkDelay (ms: number): void {
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`sandbox delay must be a non-negative integer, got ${ms}`)
}

export async function startSandboxUpstream (options: SandboxUpstreamOptions): Promise<SandboxUpstream> {
  checkOptions(options)
  const { keys, host = '127.0.0.1', port = 0, clients = seededClients, maxBodyBytes = 64 * 1024 } = options
  let delayMs = options.delayMs ?? 0
  const contracts = compileOperationContracts()
  const resolvers = buildResolvers(options.outcomes === true ? [...clients, ...outcomeSeeds] : clients)
  const faultFor = options.outcomes === true ? outcomeFaults() : undefined
  const resolve = (name: OperationName, params: unknown) =>
    (resolvers[name] as Resolver<OperationName>)(params as never)

  const slashPaths = new Map<string, OperationName>()
  const unslashedPaths = new Set<string>()
  for (const name of operationNames) {
    slashPaths.set(operations[name].path + '/', name)
    unslashedPaths.add(operations[name].path)
  }

  const zeroCounts = (): SandboxCounts => ({
    total: 0,
    byOperation: Object.fromEntries(operationNames.map(name => [name, 0])) as Record<OperationName, number>,
    redirects: 0
  })
  let counts = zeroCounts()

  // Timers of delayed answers, cleared by close() so a stopped sandbox leaves nothing pending.
  const pending = new Set<NodeJS.Timeout>()

  function send (res: ServerResponse, response: CannedResponse): void {
    if (delayMs === 0) {
      write(res, response, 0)
      return
    }
    const ms = delayMs
    const timer = setTimeout(() => {
      pending.delete(timer)
      write(res, response, ms)
    }, ms)
    pending.add(timer)
  }

  function write (res: ServerResponse, response: CannedResponse, heldMs: number): void {
    if (res.destroyed) return
    if (heldMs > 0) res.setHeader(DELAY_HEADER, heldMs)
    res.writeHead(response.status, response.headers)
    res.end(response.body)
  }

  function handle (req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/'
    const queryAt = target.indexOf('?')
    const path = queryAt === -1 ? target : target.slice(0, queryAt)
    const name = slashPaths.get(path)
    if (name === undefined) {
      if (!unslashedPaths.has(path)) return send(res, NOT_FOUND)
      counts.redirects++
      return send(res, redirect(path + '/' + (queryAt === -1 ? '' : target.slice(queryAt))))
    }
    counts.total++
    counts.byOperation[name]++
    if (req.method !== 'POST') return send(res, METHOD_NOT_ALLOWED)
    if (req.headers['x-authorization'] !== keys[operations[name].key]) return send(res, UNAUTHORIZED)
    if (!FORM_TYPE.test(req.headers['content-type'] ?? '')) return send(res, UNSUPPORTED_TYPE)
    if (Number(req.headers['content-length']) > maxBodyBytes) return send(res, TOO_LARGE)
    readBody(req, res, name)
  }

  function readBody (req: IncomingMessage, res: ServerResponse, name: OperationName): void {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    req.on('data', (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > maxBodyBytes) {
        done = true
        send(res, TOO_LARGE)
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      if (done) return
      done = true
      const response = responseFor(name, Buffer.concat(chunks, size).toString('utf8'))
      if ('fault' in response) misbehave(res, response)
      else send(res, response)
    })
    req.on('error', () => { done = true })
  }

  /** An outcome client's fault (fault.ts's kinds), in place of its answer. */
  function misbehave (res: ServerResponse, { fault, response }: Faulted): void {
    switch (fault.kind) {
      case 'reset':
        res.socket?.destroy()
        return
      case 'status':
      case 'answer':
      case 'garbage_json': {
        const { status, headers, body } = faultResponse(fault)
        return send(res, { status, headers: { ...headers, 'content-length': body.length }, body })
      }
      case 'slow': {
        // Held until the service gives up (it closes the connection) or the sandbox closes.
        const timer = setTimeout(() => { pending.delete(timer); send(res, response) }, fault.ms)
        pending.add(timer)
        res.on('close', () => { clearTimeout(timer); pending.delete(timer) })
      }
    }
  }

  function responseFor (name: OperationName, text: string): CannedResponse | Faulted {
    let params: unknown
    try {
      params = JSON.parse(text)
    } catch {
      return INVALID_JSON
    }
    const check = contracts[name].params
    if (!check.check(params)) {
      const errors = check.errors(params)
      const listed = errors.map(e => `${e.path}: ${e.message}`).join('; ')
      return failure(400, 'INVALID_PARAMS', `Некорректные параметры запроса ${name}: ${listed}`, undefined, { errors })
    }
    const fault = faultFor?.(name, (params as { uid_client: string }).uid_client)
    return fault === undefined ? resolve(name, params) : { fault, response: resolve(name, params) }
  }

  // Longer than the client's keep-alive (10 s), so the client never reuses a socket the server just closed.
  const server = options.tls === undefined
    ? createServer({ keepAliveTimeout: 65_000 }, handle)
    : createTlsServer({ keepAliveTimeout: 65_000, key: options.tls.key, cert: options.tls.cert }, handle)
  let secureConnections = 0
  server.on('secureConnection', () => { secureConnections++ })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address

  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${urlHost}:${address.port}`,
    counts: () => ({ ...counts, byOperation: { ...counts.byOperation } }),
    resetCounts () { counts = zeroCounts() },
    secureConnections: () => secureConnections,
    setDelay (ms) {
      checkDelay(ms)
      delayMs = ms
    },
    close () {
      for (const timer of pending) clearTimeout(timer)
      pending.clear()
      return new Promise<void>((resolve, reject) => {
        server.close(error => error === undefined ? resolve() : reject(error))
        server.closeAllConnections()
      })
    }
  }
}
