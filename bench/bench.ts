// `npm run bench`: a table of scenarios and one runner. Each shape of load (SHAPES) is served by the service as
// `npm start` runs it and by two floors under the same node flags and environment: the bare floor (bench/floor.ts:
// the least work a correct profile needs) and the Fastify floor (bench/fastify-floor.ts: the least a team on this
// stack writes), each in a process of its own, against the sandbox upstream in another; a reference row runs the bare
// floor under Node's defaults. Processes are warmed, then every scenario runs once per round, the floors' runs right
// after their service run, so they share the box's state. Priced options (OPTIONS) and a same-run A/B of another
// checkout (--ab) are more service processes loaded in the same rounds. Medians of the rounds with their spread; the
// verdicts are issue 42's targets (bench/report.ts). bench/README.md has the options and examples.
import autocannon, { type Client as AutocannonClient } from 'autocannon'
import { deepStrictEqual } from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer as createTcpServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { signToken } from '../sandbox/sign.ts'
import { assignment, startEnv, startFlags } from '../scripts/start-command.ts'
import { ConfigSchema } from '../src/config.ts'
import { clientSet, type ClientSetName } from './clients.ts'
import { PROFILE_PATH } from './floor-profile.ts'
import { startChild, type Child } from './ipc.ts'
import type { ProcessStats } from './meters.ts'
import {
  evaluate, summarise, summaryTable, sweepTable, targetsTable, verdict, writeSummary,
  type Run, type Scenario, type Shape, type Summary, type SweepResult
} from './report.ts'
import type { SandboxStats } from './sandbox.ts'
import type { StoreSettings } from './service.ts'

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const DELAY_MS = 20
const CONNECTIONS = 50
const MiB = 1024 * 1024

/**
 * The shapes of issue 37, at 50 connections each: id, what, upstream delay, clients (bench/clients.ts), and the
 * processes that serve it (the service, the bare floor, the Fastify floor). a and b50 share a service process, a,
 * b50 and m each floor process; a shape that would set another's peak RSS has its own. m has more clients than a
 * key set's verified-token cache holds (HS256 tokens are not cached), and they fill the last-known store.
 */
const SHAPES: Shape[] = ([
  ['a', '3 viewed cars, no upstream delay', 0, 'default', ''],
  ['b50', '3 viewed cars, 20 ms upstream delay', DELAY_MS, 'default', ''],
  ['l50', '300 viewed cars, 20 ms', DELAY_MS, 'large', '@l50'],
  ['m', '5,000 clients, no delay', 0, 'many', '@m'],
  ['t50', 'https upstream, 20 ms', DELAY_MS, 'default', '@t50', true]
] as const).map(([id, what, delayMs, clients, own, tls]) => ({
  id,
  what,
  delayMs,
  clients,
  service: `service${own}`,
  // m's floors are a's: only the service keeps state per client.
  floor: `floor${own === '@m' ? '' : own}`,
  fastify: `fastify${own === '@m' ? '' : own}`,
  ...(tls === true ? { tls } : {})
}))
const shapeOf = (id: string) => SHAPES.find(s => s.id === id)!

/** How an option's process differs and how the bench knows it was on, given its process and what the run set up. */
interface Context { child: Child, redis?: Redis, tokens: Tokens, runs: Run[], id: string }
interface Option {
  base: 'a' | 'm'
  title: string
  env: (redis?: Redis) => Record<string, string>
  evidence: (c: Context) => Promise<[boolean, string]>
  encoding?: 'br' | 'gzip'
  /** The load sends each client's current ETag in If-None-Match: every answer is a 304. */
  conditional?: true
  expectedUpstream?: null
  /** A redis-server of its own. */
  redis?: true
}
const FRESH_S = 30
const COPY_PREFIX = String((ConfigSchema.properties.PROFILE_CACHE_REDIS_PREFIX as { default?: unknown }).default)
const encoded = (encoding: 'br' | 'gzip'): Option => ({
  base: 'a',
  title: `answers compressed, Accept-Encoding: ${encoding}`,
  env: () => ({}),
  encoding,
  evidence: async c => {
    const res = await fetch(c.child.url + PROFILE_PATH,
      { headers: { authorization: c.tokens('default')[0]!, 'accept-encoding': encoding } })
    await res.arrayBuffer()
    const got = res.headers.get('content-encoding')
    return [got === encoding, `Content-Encoding: ${got ?? 'none'}`]
  }
})
const settingsOf = async (c: Context) => await c.child.ask<StoreSettings>('lastKnownSettings')
const OPTIONS: Record<string, Option> = {
  br: encoded('br'),
  gzip: encoded('gzip'),
  // The in-memory store is on by default: m prices it, this is the service without it.
  'store-off': {
    base: 'm',
    title: 'last-known store off (PROFILE_STALE_IF_ERROR_S=0)',
    env: () => ({ PROFILE_STALE_IF_ERROR_S: '0' }),
    evidence: async c => {
      const { staleIfErrorS } = await settingsOf(c)
      return [staleIfErrorS === 0, `PROFILE_STALE_IF_ERROR_S=${staleIfErrorS}`]
    }
  },
  'store-redis': {
    base: 'm',
    title: 'last-known store in Redis, encrypted (REDIS_URL, PROFILE_CACHE_KEY; rate limits there too)',
    redis: true,
    env: redis => ({ REDIS_URL: redis!.url, PROFILE_CACHE_KEY: randomBytes(32).toString('base64') }),
    evidence: async c => {
      const keys = await c.redis!.keys(COPY_PREFIX)
      return [keys > 0, `${keys} copies under ${COPY_PREFIX} after the run`]
    }
  },
  // A 304 still costs the profile's load: this prices the bytes not sent (docs/api.md).
  etag: {
    base: 'a',
    title: 'If-None-Match with each client\'s current ETag: 304s without a body',
    env: () => ({}),
    conditional: true,
    evidence: async c => {
      const authorization = c.tokens('default')[0]!
      const [tag] = await etagsOf(c.child.url, [authorization])
      const res = await fetch(c.child.url + PROFILE_PATH, { headers: { authorization, 'if-none-match': tag! } })
      await res.arrayBuffer()
      return [res.status === 304, `If-None-Match answered ${res.status}`]
    }
  },
  fresh: {
    base: 'a',
    title: `PROFILE_FRESH_S=${FRESH_S}: young copies answered without the upstream`,
    expectedUpstream: null,
    env: () => ({ PROFILE_FRESH_S: String(FRESH_S) }),
    evidence: async c => {
      const upstream = c.runs.filter(r => r.scenario === c.id).map(r => r.upstream)
      return [(await settingsOf(c)).freshS > 0 && upstream.every(n => n < 3), `upstream/profile ${upstream.join(', ')}`]
    }
  }
}
/** What issue 37 item 7 prices in every full run: the last-known store in memory and in Redis, br and gzip. */
const DEFAULT_OPTIONS = 'br,gzip,store-off,store-redis,etag'

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '2.5' },
    // Per process, discarded: the service's CPU per profile keeps falling for about eight seconds of load.
    warmup: { type: 'string', default: '8' },
    only: { type: 'string' },
    variants: { type: 'string', default: DEFAULT_OPTIONS },
    ab: { type: 'string' },
    'ab-flags': { type: 'string' },
    'node-flags': { type: 'string' },
    'flags-sweep': { type: 'boolean', default: false },
    prof: { type: 'string' },
    label: { type: 'string', default: '' },
    out: { type: 'string' }
  }
})
const ROUNDS = Number(args.rounds)
const SECONDS = Number(args.seconds)
const WARMUP = Number(args.warmup)
/** Options and the reference row are priced, held to no target: fewer rounds and a shorter warm-up. */
const SIDE_ROUNDS = Math.min(2, ROUNDS)
const SIDE_WARMUP = Math.min(4, WARMUP)
const FURTHER_WARMUP = Math.min(1, WARMUP)
if (args.prof !== undefined && !['cpu', 'heap', 'survivors'].includes(args.prof)) {
  throw new Error('--prof is cpu, heap or survivors')
}

/** Node flags and the environment set before node: npm start's, a sweep's set, or Node's defaults. */
interface Settings { name: string, flags: string[], env: Record<string, string> }
function startSettings (): Settings {
  const env = startEnv()
  // npm start runs in the project root: the compile cache as an absolute path.
  if (env.NODE_COMPILE_CACHE !== undefined) env.NODE_COMPILE_CACHE = here(`../${env.NODE_COMPILE_CACHE}`)
  const flags = args['node-flags'] === undefined ? startFlags() : args['node-flags'].split(' ').filter(f => f !== '')
  return { name: args['node-flags'] === undefined ? 'npm start' : `--node-flags ${flags.join(' ')}`, flags, env }
}
const START = startSettings()

/**
 * The other side of a same-run A/B: another checkout's service (--ab <dir>) under this run's settings, or this
 * checkout's under other settings (--ab-flags "NAME=value... --flag..."): its words of the form NAME=value are the
 * environment before node (the compile cache stays), the rest node flags.
 */
const AB = args.ab !== undefined
  ? { name: args.ab, settings: (base: Settings) => base }
  : args['ab-flags'] === undefined
    ? undefined
    : (() => {
        const words = args['ab-flags'].split(' ').filter(w => w !== '')
        const env = Object.fromEntries(words.flatMap(w => w.startsWith('-') ? [] : [assignment(w) ?? []]))
        const flags = words.filter(w => w.startsWith('-'))
        const name = words.join(' ')
        return {
          name,
          settings: ({ env: { NODE_COMPILE_CACHE: cache } }: Settings): Settings =>
            ({ name, flags, env: { ...(cache === undefined ? {} : { NODE_COMPILE_CACHE: cache }), ...env } })
        }
      })()
const DEFAULTS: Settings = { name: 'Node\'s defaults', flags: [], env: {} }

/**
 * `--flags-sweep`: the base settings (npm start's, or --node-flags'), each flag it sets taken away, semi-spaces of 4
 * to 64 MiB, other old-space caps and malloc arenas (issue 37 item 2); the service and the Fastify floor under each,
 * one set after another.
 */
function sweepSets (): Settings[] {
  const base = startSettings()
  const replace = (prefix: string, mib: number) => [...base.flags.filter(f => !f.startsWith(prefix)), prefix + mib]
  const sets: Settings[] = [base, DEFAULTS]
  for (const flag of base.flags) {
    sets.push({ ...base, name: `without ${flag}`, flags: base.flags.filter(f => f !== flag) })
  }
  for (const mib of [4, 8, 16, 32, 64]) {
    sets.push({ ...base, name: `semi-space ${mib}`, flags: replace('--max-semi-space-size=', mib) })
  }
  for (const mib of [192, 384]) {
    sets.push({ ...base, name: `old space ${mib}`, flags: replace('--max-old-space-size=', mib) })
  }
  const { MALLOC_ARENA_MAX: _, ...noArena } = base.env
  sets.push({ ...base, name: 'without MALLOC_ARENA_MAX', env: noArena })
  sets.push({ ...base, name: 'MALLOC_ARENA_MAX=2', env: { ...base.env, MALLOC_ARENA_MAX: '2' } })
  const same = (a: Settings, b: Settings) => [...a.flags].sort().join() === [...b.flags].sort().join() &&
    JSON.stringify(a.env) === JSON.stringify(b.env)
  return sets.filter((s, i) => sets.findIndex(o => same(o, s)) === i)
}

/** Options left out of this run, and why: the summary says so. */
const SKIPPED: string[] = []
function hasRedis (): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * The scenarios of this run: each shape's service, bare floor and Fastify floor (the sweep leaves the bare floor out),
 * the reference, the options, the A/B.
 */
function scenarios (sweep: boolean): Scenario[] {
  const profile = (id: string, shape: Shape, role: Scenario['role'], process: string, title: string, rounds = ROUNDS):
  Scenario => ({ id, title, shape, role, process, rounds, expectedUpstream: 3 })
  const all: Scenario[] = SHAPES.flatMap(shape => [
    profile(shape.id, shape, 'service', shape.service, `service, ${shape.what}`),
    ...(sweep ? [] : [profile(`f${shape.id}`, shape, 'floor', shape.floor, 'bare floor, same flags')]),
    profile(`ff${shape.id}`, shape, 'fastify', shape.fastify, 'Fastify floor, same flags')
  ])
  if (!sweep) {
    all.push(profile('fa@node', shapeOf('a'), 'reference', 'floor@node', 'bare floor, Node\'s defaults', SIDE_ROUNDS))
  }
  const only = args.only?.split(',').map(s => s.trim())
  const selected = only === undefined ? all : all.filter(s => only.includes(s.id))
  if (sweep) return selected
  const names = args.variants.split(',').map(s => s.trim()).filter(s => s !== '' && s !== 'none')
  for (const name of names) {
    const option = OPTIONS[name]
    if (option === undefined) throw new Error(`--variants: ${name} is none of ${Object.keys(OPTIONS).join(', ')}`)
    if (option.redis === true && !hasRedis()) {
      SKIPPED.push(`option ${name}: SKIPPED (no redis-server on this machine)`)
      continue
    }
    selected.push({
      ...profile(`${option.base}@${name}`, shapeOf(option.base), 'option', `service@${name}`, option.title,
        SIDE_ROUNDS),
      ...(option.encoding === undefined ? {} : { encoding: option.encoding }),
      ...(option.conditional === undefined ? {} : { conditional: option.conditional }),
      ...(option.expectedUpstream === undefined ? {} : { expectedUpstream: option.expectedUpstream })
    })
  }
  if (args.ab !== undefined && args['ab-flags'] !== undefined) throw new Error('--ab or --ab-flags, not both')
  if (AB !== undefined) {
    for (const s of selected.filter(s => s.role === 'service')) {
      selected.push({
        ...s,
        id: `${s.id}@ab`,
        role: 'ab',
        process: s.process.replace('service', 'ab'),
        title: `A/B: ${AB.name}, ${s.shape.what}`
      })
    }
  }
  if (selected.length === 0) throw new Error(`--only names none of ${all.map(s => s.id).join(', ')}`)
  return selected
}

/** Seconds of warm-up each scenario gets: its process's first scenario the full warm-up, a further one a second. */
function warmups (list: Scenario[]): number[] {
  const seen = new Set<string>()
  return list.map(s => {
    const first = !seen.has(s.process)
    seen.add(s.process)
    return !first ? FURTHER_WARMUP : s.role === 'option' || s.role === 'reference' ? SIDE_WARMUP : WARMUP
  })
}

/** What the table says a run takes: warm-ups, measured runs, https bursts, about 5 s to start a process, 10 s more. */
function expectedSeconds (list: Scenario[]): number {
  const warm = warmups(list).reduce((a, b) => a + b, 0)
  const measured = list.reduce((sum, s) => sum + Math.min(ROUNDS, s.rounds) * (SECONDS + (s.shape.tls ? 1 : 0)), 0)
  return Math.round(10 + warm + measured + 5 * new Set(list.map(s => s.process)).size)
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))
async function freePort (): Promise<number> {
  const server = createTcpServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

interface Redis {
  url: string
  commands (): Promise<number>
  keys (prefix: string): Promise<number>
  stop (): Promise<void>
}
/** A throwaway redis-server on a free port, no persistence, for one option's process. */
async function startRedis (): Promise<Redis> {
  const port = await freePort()
  const words = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
  const child = spawn('redis-server', words, { stdio: 'ignore' })
  const exited = once(child, 'exit')
  const command = async (...words: string[]) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    await once(socket, 'connect')
    socket.end(`*${words.length}\r\n${words.map(w => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`)
    let reply = ''
    for await (const chunk of socket) reply += String(chunk)
    return reply
  }
  for (let i = 0; ; i++) {
    try { if ((await command('PING')).startsWith('+PONG')) break } catch {}
    if (i === 50 || child.exitCode !== null) throw new Error('redis-server did not start (is it installed?)')
    await sleep(100)
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    commands: async () => Number(/total_commands_processed:(\d+)/.exec(await command('INFO', 'stats'))?.[1] ?? 0),
    keys: async prefix => Number(/^\*(\d+)/.exec(await command('KEYS', `${prefix}*`))?.[1] ?? 0),
    async stop () { child.kill('SIGTERM'); await exited }
  }
}

/** A self-signed RSA 2048 certificate for 127.0.0.1, made for the run by openssl (node:crypto makes no X.509). */
function makeCertificate (): { keyFile: string, certFile: string, remove (): void } {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-tls-'))
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
  { stdio: ['ignore', 'ignore', 'pipe'] })
  return { keyFile, certFile, remove: () => { rmSync(dir, { recursive: true, force: true }) } }
}

/** Bearer tokens of a client set, in client order. */
type Tokens = (clients: ClientSetName) => string[]

/** Each client's ETag from the service at `url`, asked once per process and client set: the sandbox's data is fixed. */
const etags = new Map<string, Promise<string[]>>()
function etagsOf (url: string, tokens: string[]): Promise<string[]> {
  const key = `${url} ${tokens.length} ${tokens[0]}`
  let tags = etags.get(key)
  if (tags === undefined) {
    etags.set(key, tags = (async () => {
      const found: string[] = []
      for (const authorization of tokens) {
        const res = await fetch(url + PROFILE_PATH, { headers: { authorization } })
        await res.arrayBuffer()
        found.push(res.headers.get('etag') ?? '')
      }
      return found
    })())
  }
  return tags
}

/**
 * Connection k sends clients k, k + n, k + 2n... in turn: no two requests in flight share a client. With `tags`,
 * each request names its client's ETag in If-None-Match.
 */
function spreadClients (tokens: string[], tags?: string[]) {
  return (connections: number) => {
    let slot = 0
    return (client: AutocannonClient) => {
      const own = tokens.flatMap((authorization, i): Array<Record<string, string>> =>
        i % connections !== slot % connections
          ? []
          : [tags === undefined ? { authorization } : { authorization, 'if-none-match': tags[i]! }])
      slot++
      let turn = 0
      const next = () => { client.setHeaders(own[turn++ % own.length]!) }
      next()
      client.on('response', next)
    }
  }
}

/** The processes and the sandbox of one run. */
interface Wiring { sandbox: Child, processes: Map<string, Child>, tokens: Tokens }

const cpuOf = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system
const mib = (bytes: number) => Math.round(bytes / MiB * 10) / 10

/** One run of a scenario: a fixed number of whole requests (each connection ends after an answer), or seconds. */
async function measure (w: Wiring, s: Scenario, round: number, size: { amount: number } | { seconds: number }):
Promise<Run> {
  await w.sandbox.ask('delay', s.shape.delayMs)
  const child = w.processes.get(s.process)!
  const tokens = w.tokens(s.shape.clients)
  const tags = s.conditional === true ? await etagsOf(child.url, tokens) : undefined
  const [p0, u0] = [await child.ask<ProcessStats>('stats'), await w.sandbox.ask<SandboxStats>('stats')]
  const started = performance.now()
  const result = await autocannon({
    url: child.url + PROFILE_PATH,
    connections: CONNECTIONS,
    timeout: 10,
    headers: { authorization: tokens[0]!, ...(s.encoding === undefined ? {} : { 'accept-encoding': s.encoding }) },
    setupClient: spreadClients(tokens, tags)(CONNECTIONS),
    ...('amount' in size ? { amount: size.amount } : { duration: size.seconds })
  })
  const wallSeconds = (performance.now() - started) / 1000
  const [p1, u1] = [await child.ask<ProcessStats>('stats'), await w.sandbox.ask<SandboxStats>('stats')]
  const served = p1.served - p0.served
  const per = (n: number) => served === 0 ? 0 : n / served
  const upstream = (u1.counts.total + u1.counts.redirects) - (u0.counts.total + u0.counts.redirects)
  const cpu = cpuOf(p1.cpu) - cpuOf(p0.cpu)
  return {
    scenario: s.id,
    round,
    requests: result.requests.total,
    rps: Math.round(result.requests.total / wallSeconds),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.mismatches,
    // With If-None-Match, 304 is the answer expected: the column counts every other.
    non2xx: tags === undefined ? result.non2xx : result.requests.total - (result.statusCodeStats['304']?.count ?? 0),
    upstream: Math.round(per(upstream) * 1000) / 1000,
    cpuUs: Math.round(per(cpu)),
    gcShare: cpu === 0 ? 0 : Math.round((p1.gc.pauseUs - p0.gc.pauseUs) / cpu * 1000) / 1000,
    v8Us: p0.threads === null || p1.threads === null ? null : Math.round(per(p1.threads.v8 - p0.threads.v8)),
    allocatedKiB: Math.round(per(p1.allocatedBytes - p0.allocatedBytes) / 1024 * 10) / 10,
    tlsPer1000: s.shape.tls === true ? Math.round(per(u1.tlsConnections - u0.tlsConnections) * 1e5) / 100 : null
  }
}

/** Whole requests for about `seconds` at `rps`, at least `least` a connection. */
const wholeRequests = (rps: number, seconds: number, least: number) =>
  Math.max(least, Math.ceil(rps * seconds / CONNECTIONS)) * CONNECTIONS

/**
 * One request of each scenario: the success path, not a fast error. And the floors must be honest: for the same two
 * clients (IVANOV's record without bonuses, PETROVA's with), every service process answers what its floors answer.
 */
async function check (w: Wiring, list: Scenario[]): Promise<void> {
  for (const s of list) {
    const child = w.processes.get(s.process)!
    const get = async (url: string, client: number) =>
      await fetch(url + PROFILE_PATH, { headers: { authorization: w.tokens(s.shape.clients)[client]! } })
    const res = await get(child.url, 0)
    const body = await res.text()
    if (res.status !== 200 || res.headers.has('x-degraded')) throw new Error(`${s.id}: answered ${res.status}: ${body}`)
    if (s.role === 'floor' || s.role === 'fastify' || s.role === 'reference') continue
    for (const name of [s.shape.floor, s.shape.fastify]) {
      const floor = w.processes.get(name)
      if (floor === undefined) continue
      for (const client of [0, 1]) {
        deepStrictEqual(await (await get(child.url, client)).json(), await (await get(floor.url, client)).json(),
          `${s.process} and ${name} answer client ${client} of the ${s.shape.clients} set differently`)
      }
    }
  }
}

const runLine = (r: Run) => `  ${r.scenario.padEnd(16)} round ${r.round}: ${String(r.rps).padStart(5)} req/s ` +
  `p50 ${r.p50} p99 ${r.p99} ms  ${r.cpuUs} µs/req  gc ${Math.round(r.gcShare * 100)}%  v8 ${r.v8Us ?? '–'} µs  ` +
  `${r.allocatedKiB} KiB/req  upstream/req ${r.upstream}` + (r.tlsPer1000 === null ? '' : `  TLS/1k ${r.tlsPer1000}`) +
  `  errors ${r.errors} non2xx ${r.non2xx}  (${r.requests})`

interface Outcome { summaries: Summary[], evidence: string[], warnings: string[] }

/** Starts the processes of `list`, checks, warms and measures them in interleaved rounds, stops them. */
async function runOnce (list: Scenario[], settings: Settings): Promise<Outcome> {
  const secret = (bytes: number) => randomBytes(bytes).toString('base64url')
  const keys = { passport: secret(24), dealer: secret(24) }
  const jwtSecret = secret(32)
  const certificate = list.some(s => s.shape.tls) ? makeCertificate() : undefined
  const sandbox = await startChild(here('sandbox.ts'), {
    env: {
      SANDBOX_PASSPORT_KEY: keys.passport,
      SANDBOX_DEALER_KEY: keys.dealer,
      ...(certificate === undefined
        ? {}
        : { SANDBOX_TLS_KEY_FILE: certificate.keyFile, SANDBOX_TLS_CERT_FILE: certificate.certFile })
    }
  })
  const processes = new Map<string, Child>()
  const redises = new Map<string, Redis>()
  const warnings: string[] = []
  let counting = false
  try {
    const tlsUrl = certificate === undefined ? '' : await sandbox.ask<string>('tlsUrl')
    const rateLimits = Object.fromEntries(Object.entries(ConfigSchema.properties).flatMap(([name, schema]) => {
      const maximum = (schema as { maximum?: unknown }).maximum
      return /^RATE_LIMIT_.*(?:PER_MINUTE|PER_SECOND|MAX)$/.test(name) && typeof maximum === 'number'
        ? [[name, String(maximum)]]
        : []
    }))
    const profileDir = args.prof === undefined ? undefined : mkdtempSync(join(os.tmpdir(), `bench-${args.prof}-prof-`))
    const cached = new Set<string>()
    const first = new Map<string, Scenario>()
    for (const s of list) if (!first.has(s.process)) first.set(s.process, s)
    for (const [name, s] of first) {
      const option = s.role === 'option' ? OPTIONS[name.slice('service@'.length)]! : undefined
      if (option?.redis === true) redises.set(name, await startRedis())
      const own = s.role === 'reference' ? DEFAULTS : s.role === 'ab' ? AB!.settings(settings) : settings
      // The https upstream, trusted as production trusts a private CA.
      const upstream: Record<string, string> = s.shape.tls
        ? { UPSTREAM_URL: tlsUrl, NODE_EXTRA_CA_CERTS: certificate!.certFile }
        : { UPSTREAM_URL: sandbox.url }
      // LOG_LEVEL: the service's, which the Fastify floor's pino reads too.
      const common = {
        PASSPORT_API_KEY: keys.passport, DEALER_API_KEY: keys.dealer, AUTH_JWT_SECRET: jwtSecret, LOG_LEVEL: 'warn'
      }
      const service = { HOST: '127.0.0.1', PORT: '0', ...rateLimits }
      const optionEnv = option?.env(redises.get(name))
      const isFloor = s.role === 'floor' || s.role === 'reference' || s.role === 'fastify'
      const entry = s.role === 'ab' && args.ab !== undefined
        ? resolve(args.ab, 'bench/service.ts')
        : here(s.role === 'fastify' ? 'fastify-floor.ts' : isFloor ? 'floor.ts' : 'service.ts')
      const env: Record<string, string> = { ...own.env, ...common, ...(isFloor ? {} : service), ...upstream }
      Object.assign(env, optionEnv)
      const cacheKey = [...own.flags, entry].join(' ')
      if (env.NODE_COMPILE_CACHE !== undefined && !cached.has(cacheKey)) {
        cached.add(cacheKey)
        // As the image's build does: the process then strips no TypeScript (the cache is keyed by the flags).
        execFileSync(process.execPath, [...own.flags, here('../src/compile-cache.ts'), entry],
          { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] })
      }
      processes.set(name, await startChild(entry, {
        env: {
          ...env,
          ...(profileDir === undefined
            ? {}
            : { BENCH_PROFILE_DIR: profileDir, BENCH_PROFILE: args.prof!, BENCH_PROCESS_NAME: name })
        },
        execArgv: own.flags,
        onLine: line => {
          // pino levels: 40 warn and above.
          if (counting && Number(/"level":(\d+)/.exec(line)?.[1] ?? 0) >= 40 && warnings.length < 5) warnings.push(line)
        }
      }))
    }
    const signed = new Map<ClientSetName, string[]>()
    const tokens: Tokens = clients => {
      if (!signed.has(clients)) {
        signed.set(clients, clientSet(clients).map(({ identity: { uid_client: sub, login, vendor } }) =>
          `Bearer ${signToken({ sub, login, vendor }, jwtSecret)}`))
      }
      return signed.get(clients)!
    }
    const w: Wiring = { sandbox, processes, tokens }
    await check(w, list)

    const rps = new Map<string, number>()
    const seconds = warmups(list)
    for (const [i, s] of list.entries()) {
      // A timed part sizes the rest, which is whole requests: a request a timed run cuts off makes the service abort
      // its upstream calls, closing their sockets, and the first measured round would pay for both.
      const timed = Math.min(1, seconds[i]! / 2)
      const sizing = await measure(w, s, 0, { seconds: timed })
      const run = await measure(w, s, 0, { amount: wholeRequests(sizing.rps, seconds[i]! - timed, 2) })
      rps.set(s.id, run.rps)
      process.stdout.write(runLine(run) + '\n')
    }
    counting = true
    for (const child of processes.values()) await child.ask('profileStart')
    const runs: Run[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of list.filter(s => round <= s.rounds)) {
        // The pools close connections idle for 10 s: an unmeasured second first, so the handshakes counted are
        // steady traffic's, not the pool's refill.
        if (s.shape.tls) await measure(w, s, round, { amount: wholeRequests(rps.get(s.id)!, 1, 2) })
        const run = await measure(w, s, round, { amount: wholeRequests(rps.get(s.id)!, SECONDS, 5) })
        rps.set(s.id, run.rps)
        runs.push(run)
        process.stdout.write(runLine(run) + '\n')
      }
    }
    counting = false
    for (const [name, child] of processes) {
      const path = await child.ask<string | undefined>('profileStop')
      if (path !== undefined) process.stdout.write(`${name}: ${args.prof} profile of the measured rounds: ${path}\n`)
    }
    const evidence: string[] = []
    for (const s of list.filter(s => s.role === 'option')) {
      const name = s.process.slice('service@'.length)
      const [active, text] = await OPTIONS[name]!.evidence({
        child: processes.get(s.process)!, redis: redises.get(s.process), tokens, runs, id: s.id
      })
      evidence.push(`option ${name}: ${active ? 'active' : 'NOT ACTIVE (the service ignores it)'}: ${text}`)
    }
    const peakRss: Record<string, number> = {}
    for (const [name, child] of processes) peakRss[name] = mib((await child.ask<ProcessStats>('stats')).maxRss)
    return { summaries: summarise(list, runs, peakRss), evidence, warnings }
  } finally {
    for (const child of processes.values()) await child.stop()
    await sandbox.stop()
    for (const redis of redises.values()) await redis.stop()
    certificate?.remove()
  }
}

function commit (): string {
  try {
    const git = (...words: string[]) =>
      execFileSync('git', words, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== ''
    return git('rev-parse', '--short', 'HEAD') + (dirty ? '+dirty' : '')
  } catch {
    return 'unknown'
  }
}

async function main (): Promise<void> {
  const began = performance.now()
  const cpus = os.cpus()
  const machine = `${os.availableParallelism()} cores, ${cpus[0]?.model.trim() ?? 'unknown'}, Node ${process.version}`
  process.stdout.write(`bench: ${machine}, load ${os.loadavg().map(l => l.toFixed(2)).join(' ')}\n`)
  const sweep = args['flags-sweep']
  const list = scenarios(sweep)
  const sets = sweep ? sweepSets() : [START]
  const under = sweep ? ` under ${sets.length} flag sets` : ''
  process.stdout.write(`scenarios: ${list.map(s => s.id).join(', ')}${under}; ` +
    `expected about ${expectedSeconds(list) * sets.length} s\n`)
  if (sweep) {
    const results: SweepResult[] = []
    for (const set of sets) {
      process.stdout.write(`\nflag set: ${set.name}: ${set.flags.join(' ')} ${JSON.stringify(set.env)}\n`)
      results.push({ ...set, summaries: (await runOnce(list, set)).summaries })
    }
    const shapes = SHAPES.map(s => s.id).filter(id => list.some(s => s.shape.id === id))
    process.stdout.write('\ncost index (vCPU at 200 profiles/s + peak RSS GiB / 9), median of the rounds\n\n' +
      sweepTable(results, shapes, false) + '\n\n' + sweepTable(results, shapes, true) + '\n')
  } else {
    const { summaries, evidence: measured, warnings } = await runOnce(list, START)
    const evidence = [...measured, ...SKIPPED]
    const targets = evaluate(SHAPES, summaries)
    process.stdout.write('\n' + summaryTable(summaries, false) + '\n\n' + targetsTable(targets, false) + '\n\n')
    for (const line of [...evidence, ...warnings.map(w => `warn+ log line: ${w}`)]) process.stdout.write(line + '\n')
    const full = args.only === undefined && args.prof === undefined && args['node-flags'] === undefined &&
      AB === undefined && args.variants === DEFAULT_OPTIONS
    const out = args.out ?? (full ? here('summary.json') : undefined)
    if (out !== undefined) {
      await writeSummary(out, {
        generatedAt: new Date().toISOString(),
        commit: commit(),
        label: args.label,
        run: full ? 'full' : 'partial',
        machine,
        settings: {
          rounds: ROUNDS,
          seconds: SECONDS,
          warmup: WARMUP,
          only: args.only,
          variants: args.variants,
          ab: AB?.name,
          flags: START.flags,
          env: Object.keys(START.env)
        },
        options: evidence,
        failed: targets.filter(t => verdict(t) === '**miss**').length
      }, summaries, targets)
      process.stdout.write(`wrote ${out}\n`)
    }
    process.stdout.write('\n' + summaryTable(summaries, true) + '\n\n' + targetsTable(targets, true) + '\n')
  }
  process.stdout.write(`bench took ${Math.round((performance.now() - began) / 1000)} s\n`)
}

await main()
