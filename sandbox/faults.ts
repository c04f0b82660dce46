// A scriptable faulty upstream for process-level tests and the soak (never imported by the service): a node:http
// server in front of the sandbox upstream that, per operation, either passes the request through
// (seeded answers, the 307 to the slash path, key checks) or misbehaves in one chosen way, and records what
// reached it. It lives in sandbox/ so bench/soak.ts can use it without depending on test/.
import {
  Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server,
  type ServerResponse
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { operationNames, operations, type KeyName, type OperationName } from '../schemas/operations.ts'
import { CONSOLE_KEY_HEADER } from '../src/auth/key-check.ts'
import type { Fault } from './fault.ts'
import { faultResponse } from './fault-response.ts'
import type { SeededClient } from './seed.ts'
import { startSandboxUpstream } from './upstream.ts'

// The kinds of fault, and what each does: fault.ts. It is the fault upstream's vocabulary, so it is exported here too.
export type { Fault }

/**
 * A fault, or a function choosing one per request: the soak's random faults, or a test's choice by the
 * request's headers (the x-request-id the service forwards names one caller's requests).
 */
type FaultScript = Fault | ((operation: OperationName, headers: IncomingHttpHeaders) => Fault)

export const MiB = 1024 * 1024

/** What a huge answer got to send before the client stopped reading. */
interface HugeReport { operation: OperationName, bytesWritten: number, complete: boolean }

/**
 * A request as it reached the upstream, free of secrets so that a failing assertion may print it: the keys the
 * upstream knows read as their names ('[passport key]'), and a caller's credentials as '[redacted]'.
 */
interface Received { method: string, path: string, headers: IncomingHttpHeaders, body: string }

const CREDENTIALS = new Set(['authorization', 'proxy-authorization', 'cookie', CONSOLE_KEY_HEADER])

/** `request` with its body `body` as `Received`, each of `keys`' values replaced by its name wherever it stands. */
function received (request: IncomingMessage, body: Buffer, keys: Record<KeyName, string>): Received {
  const named = (text: string) => Object.entries(keys)
    .reduce((out, [name, key]) => key === '' ? out : out.replaceAll(key, `[${name} key]`), text)
  const headers: IncomingHttpHeaders = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    headers[name] = CREDENTIALS.has(name) ? '[redacted]' : Array.isArray(value) ? value.map(named) : named(value)
  }
  return { method: request.method ?? '', path: request.url ?? '', headers, body: named(body.toString('utf8')) }
}

export interface FaultUpstream {
  url: string
  /** Every request that reached it since the last reset, in order (a huge or reset one included); needs `record`. */
  received (): Received[]
  /** Another origin (another port on 127.0.0.1) that records every request it gets. */
  elsewhere: { url: string, received (): Received[] }
  /** Every later request of `operation` meets `script` (after any queued faults). */
  set (operation: OperationName, script: FaultScript): void
  /** The next requests of `operation` meet these faults, one each, before the set script again. */
  queue (operation: OperationName, ...faults: Fault[]): void
  /** Requests received per operation (both paths, redirects included) since the last reset. */
  counts (): Record<OperationName, number>
  /** Every huge answer started, once it ended. */
  huge (): HugeReport[]
  /** All operations back to normal, counts and records cleared. */
  reset (): void
  close (): Promise<void>
}

const NORMAL: Fault = { kind: 'normal' }
const CHUNK = Buffer.alloc(64 * 1024, ' ')

async function listen (server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The request's body, whole; empty when the request ends early. */
async function bodyOf (req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer)
  } catch {}
  return Buffer.concat(chunks)
}

function stop (server: Server): Promise<void> {
  return new Promise(resolve => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}

/**
 * `record`: keep what reached it, for tests (the soak's hours of requests would pile up). `clients`: those the
 * sandbox behind knows, the seed's by default.
 */
export async function startFaultUpstream (
  options: { keys: Record<KeyName, string>, record?: boolean, clients?: readonly SeededClient[] }
): Promise<FaultUpstream> {
  const sandbox = await startSandboxUpstream({
    keys: options.keys, ...(options.clients === undefined ? {} : { clients: options.clients })
  })
  const target = new URL(sandbox.url)
  const agent = new HttpAgent({ keepAlive: true })

  const byPath = new Map<string, OperationName>()
  for (const name of operationNames) {
    byPath.set(operations[name].path, name)
    byPath.set(operations[name].path + '/', name)
  }
  const zero = () => Object.fromEntries(operationNames.map(n => [n, 0])) as Record<OperationName, number>
  let counts = zero()
  let hugeReports: HugeReport[] = []
  let recorded: Received[] = []
  let recordedElsewhere: Received[] = []
  const scripts = new Map<OperationName, FaultScript>()
  const queued = new Map<OperationName, Fault[]>()
  const timers = new Set<NodeJS.Timeout>()

  const elsewhere = createServer(async (req, res) => {
    recordedElsewhere.push(received(req, await bodyOf(req), options.keys))
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
  const elsewhereUrl = await listen(elsewhere)

  /** Passes the request (its body already read) to the sandbox; `type` replaces the answer's content type. */
  function forward (req: IncomingMessage, body: Buffer, res: ServerResponse, type?: string): void {
    const { method, headers } = req
    const options = { host: target.hostname, port: target.port, path: req.url, method, headers, agent }
    const out = httpRequest(options, upstreamResponse => {
      const headers = { ...upstreamResponse.headers, ...(type === undefined ? {} : { 'content-type': type }) }
      res.writeHead(upstreamResponse.statusCode ?? 502, headers)
      upstreamResponse.pipe(res)
    })
    out.on('error', () => res.destroy())
    res.on('close', () => { if (!res.writableFinished) out.destroy() })
    out.end(body)
  }

  function streamHuge (res: ServerResponse, operation: OperationName, bytes: number, declared: boolean): void {
    const report: HugeReport = { operation, bytesWritten: 0, complete: false }
    res.writeHead(200, { 'content-type': 'application/json', ...(declared ? { 'content-length': bytes } : {}) })
    let ended = false
    res.on('close', () => {
      if (!ended) { ended = true; hugeReports.push(report) }
    })
    // One reused chunk, written only as fast as the client reads: the server itself never holds 40 MiB.
    const pump = (): void => {
      while (report.bytesWritten < bytes && !res.destroyed) {
        const size = Math.min(CHUNK.length, bytes - report.bytesWritten)
        report.bytesWritten += size
        if (!res.write(size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size))) {
          res.once('drain', pump)
          return
        }
      }
      if (report.bytesWritten >= bytes && !res.destroyed) {
        report.complete = true
        res.end()
      }
    }
    pump()
  }

  function misbehave (req: IncomingMessage, body: Buffer, res: ServerResponse, operation: OperationName,
    fault: Fault): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    if (fault.kind === 'normal') return forward(req, body, res)
    if (fault.kind === 'wrong_type') return forward(req, body, res, 'text/plain; charset=utf-8')
    if (fault.kind === 'reset') {
      req.socket.destroy()
      return
    }
    if (fault.kind === 'slow') {
      const timer = setTimeout(() => { timers.delete(timer); if (!res.destroyed) forward(req, body, res) }, fault.ms)
      timers.add(timer)
      res.on('close', () => { clearTimeout(timer); timers.delete(timer) })
      return
    }
    switch (fault.kind) {
      case 'status':
      case 'garbage_json':
      case 'answer': {
        const { status, headers, body } = faultResponse(fault)
        res.writeHead(status, headers).end(body)
        return
      }
      case 'huge':
        return streamHuge(res, operation, fault.bytes, fault.declared === true)
      case 'redirect_loop': {
        const location = fault.mode === 'self' ? path : path.endsWith('/') ? path.slice(0, -1) : `${path}/`
        res.writeHead(307, { location, 'content-type': 'text/html' }).end('<html>Temporary Redirect</html>')
        return
      }
      case 'cross_origin':
        res.writeHead(307, {
          location: `${elsewhereUrl}${path.endsWith('/') ? path : `${path}/`}`, 'content-type': 'text/html'
        }).end()
    }
  }

  // The body is read before anything else (the service's are small): recorded whole whatever the fault.
  const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    const body = await bodyOf(req)
    if (options.record === true) recorded.push(received(req, body, options.keys))
    const operation = byPath.get((req.url ?? '/').split('?')[0] ?? '/')
    if (operation === undefined) return forward(req, body, res)
    counts[operation]++
    const next = queued.get(operation)?.shift()
    const script = next ?? scripts.get(operation) ?? NORMAL
    misbehave(req, body, res, operation, typeof script === 'function' ? script(operation, req.headers) : script)
  })
  const url = await listen(server)

  return {
    url,
    received () {
      if (options.record !== true) throw new Error('started without record: true, the fault upstream keeps nothing')
      return [...recorded]
    },
    elsewhere: { url: elsewhereUrl, received: () => [...recordedElsewhere] },
    set (operation, script) { scripts.set(operation, script) },
    queue (operation, ...faults) { queued.set(operation, [...(queued.get(operation) ?? []), ...faults]) },
    counts: () => ({ ...counts }),
    huge: () => [...hugeReports],
    reset () {
      scripts.clear()
      queued.clear()
      counts = zero()
      hugeReports = []
      recorded = []
      recordedElsewhere = []
    },
    async close () {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      await Promise.all([stop(server), stop(elsewhere)])
      agent.destroy()
      await sandbox.close()
    }
  }
}
