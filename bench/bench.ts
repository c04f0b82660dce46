// `npm run bench`: autocannon against the real service in its own process, wired to the sandbox
// upstream in a third process, and against the floor (bench/floor.ts: the least work a correct profile
// needs) in a fourth, at the same loads. A warm-up round is discarded (JIT, the keep-alive pools, the
// learned slash paths, the token cache); then rounds of every scenario interleaved, so a noisy machine
// shows as spread instead of as one scenario's false result. Each run sends a fixed number of requests
// sized from the previous run of its scenario: every connection ends after its last answer, so no
// request is cut off at the end and the upstream count per request is exact. Options (metrics, Redis,
// tracing, logs at info, key-set tokens, compressed answers) are priced by a service process of their own
// each, loaded in the same rounds. Production's shape has scenarios of its own: heavy users' large
// profiles (l50), an https upstream (t50) and more clients than the verified-token cache holds (m), each
// against the floor at the same shape.
//
//   npm run bench                                       full run, writes bench/report.json
//   npm run bench -- --variants none                    without the priced options (quicker)
//   npm run bench -- --only a,fa --variants none --rounds 1 --cpu-prof   V8 CPU profiles of the measured rounds
//   npm run bench -- --only a --variants none --heap-prof                heap sampling profiles (every allocation)
//   npm run bench -- --only a --variants none --survivors-prof           what outlived a scavenge (the GC's work)
//   npm run bench -- --flags-sweep                      the service under V8 memory flag sets, writes flags-sweep.json
//   npm run bench -- --label "after: ..."               a label the report keeps
//   npm run bench -- --node-flags=--max-semi-space-size=8   V8 flags for the service (experiments)
import autocannon, { type Client as AutocannonClient } from 'autocannon'
import { deepStrictEqual } from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createConnection, createServer as createTcpServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ConfigSchema } from '../src/config.ts'
import { operations } from '../schemas/operations.ts'
import { startSandboxKeySet, type SandboxKeySet } from '../sandbox/jwks.ts'
import { signToken, type PrivateJwk } from '../sandbox/sign.ts'
import { startEnv, startFlags } from '../scripts/start-command.ts'
import { benchClient, CLIENT_SETS, clientSet, type ClientSetName } from './clients.ts'
import { startChild, type Child } from './ipc.ts'
import type { ProcessStats, ThreadCpu } from './meters.ts'
import type { StoreSettings } from './service.ts'
import {
  evaluateTargets, floorOf, markdownTable, sideBySideMarkdown, sideBySideText, summarise, targetsTable, textTable,
  verdict, writeReport,
  type LifetimeRss, type Machine, type Run, type ScenarioId, type ScenarioInfo
} from './report.ts'
import type { SandboxStats } from './sandbox.ts'
import { NOOP_PATH } from './service.ts'

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const REPORT_PATH = here('report.json')
const SWEEP_REPORT_PATH = here('flags-sweep.json')
const PROFILE_PATH = '/api/users/profile'
const CONSOLE_PATH = '/request-console'
const BENCH_DELAY_MS = 20
const MiB = 1024 * 1024
/** PROFILE_FRESH_S of the `fresh` option: at a's repeat rate (each client every fraction of a second), most hits. */
const FRESH_S = 30
/** Where the Redis-backed last-known store keeps its copies (the service's default prefix). */
const COPY_PREFIX = String((ConfigSchema.properties.PROFILE_CACHE_REDIS_PREFIX as { default?: unknown }).default)
/** The options that need a redis-server of their own, so each one's keys and command count are its own. */
const WITH_REDIS = ['service@redis', 'service@store-redis']

/**
 * The options whose price the bench measures, each in a service process of its own at its base
 * scenario's load: `a`, or `m` for the key-set tokens (with 500 clients the verified-token cache would
 * hide the signature check being priced).
 */
type OptionInfo = { title: string, base: 'a' | 'm' } & Pick<ScenarioInfo, 'token' | 'encoding'> &
  Partial<Pick<ScenarioInfo, 'expectedUpstream'>>
const OPTIONS: Record<string, OptionInfo> = {
  metrics: { title: 'metrics on (METRICS_API_KEY set)', base: 'a' },
  redis: { title: 'rate limits in Redis (REDIS_URL, a local redis-server)', base: 'a' },
  otel100: { title: 'tracing, 100 % sampled (OTLP to a local sink)', base: 'a' },
  otel10: { title: 'tracing, 10 % sampled (OTLP to a local sink)', base: 'a' },
  info: { title: 'logs at info (the default LOG_LEVEL), stdout a pipe', base: 'a' },
  rs256: { title: 'RS256 tokens from a key set (AUTH_JWKS_URL), 5000 clients', base: 'm', token: 'RS256' },
  es256: { title: 'ES256 tokens from a key set (AUTH_JWKS_URL), 5000 clients', base: 'm', token: 'ES256' },
  br: { title: 'answers compressed, Accept-Encoding: br', base: 'a', encoding: 'br' },
  gzip: { title: 'answers compressed, Accept-Encoding: gzip', base: 'a', encoding: 'gzip' },
  // Compression is on by default and a's load asks for none: what the plugin costs an answer it leaves alone.
  'compression-off': { title: 'compression off (COMPRESSION=off), no Accept-Encoding as in a', base: 'a' },
  // The in-memory last-known store is on by default: m prices it, this is the service without it.
  'store-off': { title: 'last-known store off (PROFILE_STALE_IF_ERROR_S=0), 5000 clients', base: 'm' },
  'store-redis': {
    title: 'last-known store in Redis, encrypted (REDIS_URL, PROFILE_CACHE_KEY; rate limits there too), 5000 clients',
    base: 'm'
  },
  // Most profiles come from the copy at a's repeat rate: fewer than 3 upstream requests each, by design.
  fresh: {
    title: `PROFILE_FRESH_S=${FRESH_S}: copies younger than that answered without the upstream`,
    base: 'a',
    expectedUpstream: null
  }
}
type OptionName = 'metrics' | 'redis' | 'otel100' | 'otel10' | 'info' | 'rs256' | 'es256' | 'br' | 'gzip' |
  'compression-off' | 'store-off' | 'store-redis' | 'fresh'
const DEFAULT_OPTIONS = Object.keys(OPTIONS).join(',')

/**
 * The V8 memory settings `--flags-sweep` compares: semi-space sizes trade scavenges (CPU) against memory,
 * old-space caps bound the heap, the two flags npm start adds (why each: bench/README.md), and the old
 * generation's headroom: a 256 MiB cap gives V8's smallest growing factor, so the promoted bytes of requests
 * in flight start a mark-compact after little growth (docs/performance.md, "V8 flags").
 */
const NEW_FLAGS = ['--no-allocation-site-pretenuring', '--no-maglev']
const FLAG_SETS: string[][] = [
  [],
  ['--max-semi-space-size=4', '--max-old-space-size=256'],
  ['--max-semi-space-size=4', '--max-old-space-size=256', '--no-allocation-site-pretenuring'],
  ['--max-semi-space-size=2', '--max-old-space-size=256', ...NEW_FLAGS],
  ['--max-semi-space-size=4', '--max-old-space-size=256', ...NEW_FLAGS],
  ['--max-semi-space-size=8', '--max-old-space-size=256', ...NEW_FLAGS],
  ['--max-semi-space-size=16', '--max-old-space-size=256', ...NEW_FLAGS],
  ['--max-semi-space-size=4', '--max-old-space-size=128', ...NEW_FLAGS],
  ['--max-semi-space-size=4', '--max-old-space-size=256', ...NEW_FLAGS, '--heap-growing-percent=50'],
  ['--max-semi-space-size=4', '--max-old-space-size=256', ...NEW_FLAGS, '--heap-growing-percent=100'],
  ['--max-semi-space-size=8', '--max-old-space-size=256', ...NEW_FLAGS, '--heap-growing-percent=100'],
  ['--max-semi-space-size=16', '--max-old-space-size=256', ...NEW_FLAGS, '--heap-growing-percent=100']
]

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '2.5' },
    // Seconds per process, discarded. The service's JIT tiers settle later than the floor's smaller code (its CPU
    // per profile still fell by a third from the second to the eighth second); production runs warm.
    warmup: { type: 'string', default: '8' },
    only: { type: 'string' },
    // Comma list of OPTIONS to price, or `none`.
    variants: { type: 'string', default: DEFAULT_OPTIONS },
    'flags-sweep': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
    'heap-prof': { type: 'boolean', default: false },
    'survivors-prof': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
    // Node/V8 flags for the service process only, e.g. --node-flags=--max-semi-space-size=4 (an experiment:
    // the report records them). Without it, the flags `npm start` gives node (package.json).
    'node-flags': { type: 'string' },
    // The floors under npm start's memory settings (its node flags and MALLOC_ARENA_MAX) instead of Node's
    // defaults: an experiment that shows what the service's memory budget costs in CPU, apart from its code.
    'floor-as-start': { type: 'boolean', default: false },
    out: { type: 'string' }
  }
})

/**
 * The environment `npm start` sets before node (glibc's arena count, the compile cache): the service
 * processes get it too, the compile cache as an absolute path (npm start runs in the project root).
 */
function startScriptEnv (): Record<string, string> {
  const env = startEnv()
  if (env.NODE_COMPILE_CACHE !== undefined) {
    env.NODE_COMPILE_CACHE = fileURLToPath(new URL(`../${env.NODE_COMPILE_CACHE}`, import.meta.url))
  }
  return env
}
// The flags `npm start` runs node with: the bench measures production.
const NODE_FLAGS = args['node-flags'] === undefined
  ? startFlags()
  : args['node-flags'].split(' ').filter(flag => flag !== '')
const START_ENV = startScriptEnv()

/**
 * Fills the compile cache for these flags, as the Dockerfile does at build: the service process then
 * strips no TypeScript (bench/service.ts and what it imports included), as production starts.
 */
function fillCompileCache (flags: string[]): void {
  if (START_ENV.NODE_COMPILE_CACHE === undefined) return
  execFileSync(process.execPath, [...flags, here('../src/compile-cache.ts'), here('service.ts')], {
    env: { ...process.env, ...START_ENV },
    stdio: ['ignore', 'ignore', 'inherit']
  })
}
const ROUNDS = Number(args.rounds)
const RUN_SECONDS = Number(args.seconds)
const WARMUP_SECONDS = Number(args.warmup)
/** A scenario served by an already warm process (b5 and b50 after a) only sizes its runs. */
const SHARED_WARMUP_SECONDS = Math.min(1, WARMUP_SECONDS)
/** An option's own process, and the sandbox's calibration: priced or informational, held to no target. */
const OPTION_WARMUP_SECONDS = Math.max(SHARED_WARMUP_SECONDS, Math.min(4, WARMUP_SECONDS))
const SWEEP = args['flags-sweep']
const PROFILING = args['cpu-prof'] ? 'cpu' : args['heap-prof'] ? 'heap' : args['survivors-prof'] ? 'survivors' : undefined

/** The process that serves b200 alone: the same service, started the same way. */
const SERVICE_AT_200 = 'service@b200'
/**
 * The process that serves the trivial route (c) and the console (d): saturating loads that are not the
 * issue's (a bench-only route, and operator calls production limits to 30 a minute). RSS never shrinks, so
 * in the profile's process their peaks would stand for its own.
 */
const SERVICE_OTHER = 'service@other'
/**
 * The production-shaped scenarios' processes, each its own for the same reason: a heavy user's 106 KB
 * passport answer, 5000 clients' cached state or TLS buffers would otherwise set the service's peak RSS.
 */
const SERVICE_LARGE = 'service@large'
const SERVICE_MANY = 'service@many'
const SERVICE_TLS = 'service@tls'
const FLOOR_LARGE = 'floor@large'
const FLOOR_TLS = 'floor@tls'
/** The processes whose upstream is the sandbox over https. */
const OVER_TLS = new Set([SERVICE_TLS, FLOOR_TLS])
/** Rounds of the https and 5000-client shapes (not targets yet), so the full run stays under 6 minutes. */
const SHAPE_ROUNDS = 2

const profileScenario = (
  id: string, connections: number, delayMs: number, target: string, group: ScenarioInfo['group'], title = 'profile',
  shape: Pick<ScenarioInfo, 'clients' | 'tls' | 'rounds'> = {}
): ScenarioInfo =>
  ({ id, title, method: 'GET', path: PROFILE_PATH, connections, delayMs, expectedUpstream: 3, target, group, ...shape })

// Each floor run right after its service run: the box drifts within seconds, so a ratio's two halves are measured
// as close together as they can be.
const baseScenarios: ScenarioInfo[] = [
  profileScenario('a', 50, 0, 'service', 'service'),
  // The floor at the loads of a and b50: what the service's CPU per profile is compared against.
  profileScenario('fa', 50, 0, 'floor', 'floor', 'floor profile'),
  // Not one of the issue's scenarios: few enough connections not to saturate the CPU, so its latency is
  // what the service adds to the upstream's, not queueing.
  profileScenario('b5', 5, BENCH_DELAY_MS, 'service', 'service', 'profile, unsaturated'),
  profileScenario('b50', 50, BENCH_DELAY_MS, 'service', 'service'),
  profileScenario('fb50', 50, BENCH_DELAY_MS, 'floor', 'floor', 'floor profile'),
  // In a service process of its own: 200 connections hold four times the profiles in flight, and RSS,
  // once grown, stays; the service process's peak is then the issue's load (50 connections).
  profileScenario('b200', 200, BENCH_DELAY_MS, SERVICE_AT_200, 'service'),
  {
    id: 'c',
    title: 'trivial route',
    method: 'GET',
    path: NOOP_PATH,
    connections: 50,
    delayMs: 0,
    expectedUpstream: null,
    target: SERVICE_OTHER,
    group: 'service'
  },
  {
    id: 'd',
    title: 'console passport',
    method: 'POST',
    path: CONSOLE_PATH,
    connections: 50,
    delayMs: 0,
    expectedUpstream: 1,
    target: SERVICE_OTHER,
    group: 'service'
  },
  // Production's shape (issue 26): heavy users' 300 viewed cars, an https upstream, 5000 clients.
  profileScenario('l50', 50, BENCH_DELAY_MS, SERVICE_LARGE, 'service', 'profile, 300 viewed cars', { clients: 'large' }),
  profileScenario('fl50', 50, BENCH_DELAY_MS, FLOOR_LARGE, 'floor', 'floor profile, 300 viewed cars',
    { clients: 'large' }),
  profileScenario('t50', 50, BENCH_DELAY_MS, SERVICE_TLS, 'service', 'profile, https upstream',
    { tls: true, rounds: SHAPE_ROUNDS }),
  profileScenario('ft50', 50, BENCH_DELAY_MS, FLOOR_TLS, 'floor', 'floor profile, https upstream',
    { tls: true, rounds: SHAPE_ROUNDS }),
  // At a's load: the base of the key-set token options, whose signature checks the cache cannot hide here.
  profileScenario('m', 50, 0, SERVICE_MANY, 'service', 'profile, 5000 clients', { clients: 'many', rounds: SHAPE_ROUNDS }),
  profileScenario('fm', 50, 0, 'floor', 'floor', 'floor profile, 5000 clients', { clients: 'many', rounds: SHAPE_ROUNDS }),
  // Calibration, not a scenario of the service: the sandbox's passport answer at the same delay, straight
  // from autocannon. It shows what the upstream and this machine's timers cost on their own.
  {
    id: 'u5',
    title: 'sandbox alone, passport',
    method: 'POST',
    path: `${operations['passport.get_client'].path}/`,
    connections: 5,
    delayMs: BENCH_DELAY_MS,
    expectedUpstream: 1,
    target: 'sandbox',
    group: 'calibration'
  }
]

function optionNames (): OptionName[] {
  const list = args.variants.split(',').map(s => s.trim()).filter(s => s !== '' && s !== 'none')
  for (const name of list) {
    if (!(name in OPTIONS)) throw new Error(`--variants: ${name} is none of ${Object.keys(OPTIONS).join(', ')}`)
  }
  return list as OptionName[]
}

/** Options are loaded in two rounds at most: each has its own process, and the bench must stay under 6 minutes. */
const OPTION_ROUNDS = 2

/** Measured rounds of a scenario: the bench's, fewer for options and the shapes that are not targets. */
const roundsOf = (s: ScenarioInfo) => Math.min(ROUNDS, s.group === 'option' ? OPTION_ROUNDS : s.rounds ?? ROUNDS)

function selectScenarios (): ScenarioInfo[] {
  if (SWEEP) {
    return [
      ...FLAG_SETS.map((flags, i) => ({
        ...profileScenario(`a@flags${i}`, 50, 0, `flags${i}`, 'flags'),
        variant: flags.length === 0 ? '(none: Node\'s defaults)' : flags.join(' ')
      })),
      baseScenarios.find(s => s.id === 'fa')!
    ]
  }
  const only = args.only?.split(',').map(s => s.trim())
  const base = only === undefined ? baseScenarios : baseScenarios.filter(s => only.includes(s.id))
  const options = optionNames().map(name => {
    const { title, base, token, encoding, expectedUpstream } = OPTIONS[name]!
    const of = baseScenarios.find(s => s.id === base)!
    return {
      ...profileScenario(`${base}@${name}`, of.connections, of.delayMs, `service@${name}`, 'option', title,
        { ...(of.clients === undefined ? {} : { clients: of.clients }) }),
      ...(expectedUpstream === undefined ? {} : { expectedUpstream }),
      variant: name,
      ...(token === undefined ? {} : { token }),
      ...(encoding === undefined ? {} : { encoding })
    }
  })
  const selected = [...base, ...options]
  if (selected.length === 0) throw new Error(`--only names none of ${baseScenarios.map(s => s.id).join(', ')}`)
  return selected
}
const selected = selectScenarios()
// A partial or profiled run is not the benchmark: it does not replace the committed report.
const fullRun = args.only === undefined && PROFILING === undefined && args['node-flags'] === undefined &&
  !args['floor-as-start']
const reportPath = args.out ??
  (SWEEP ? SWEEP_REPORT_PATH : fullRun && args.variants === DEFAULT_OPTIONS ? REPORT_PATH : undefined)

const secret = (bytes: number) => randomBytes(bytes).toString('base64url')

/** Rate limits high enough never to answer 429 here, whatever limits the config has grown. */
function rateLimitsOutOfTheWay (): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const maximum = (schema as { maximum?: unknown }).maximum
    const isLimit = /^RATE_LIMIT_.*(?:PER_MINUTE|PER_SECOND|MAX)$/.test(name)
    if (isLimit && typeof maximum === 'number') env[name] = String(maximum)
  }
  return env
}

function machine (): Machine {
  const cpus = os.cpus()
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    totalMemGiB: Math.round(os.totalmem() / 1024 / MiB * 10) / 10,
    loadAverageAtStart: os.loadavg().map(l => Math.round(l * 100) / 100)
  }
}

function commit (): string {
  try {
    const git = (...words: string[]) =>
      execFileSync('git', words, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const sha = git('rev-parse', '--short', 'HEAD')
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== ''
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return 'unknown'
  }
}

const mib = (bytes: number) => Math.round(bytes / MiB * 10) / 10
const cpuMicros = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

async function freePort (): Promise<number> {
  const server = createTcpServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

/** One RESP command to a local Redis, its raw answer. */
async function redisCommand (port: number, ...words: string[]): Promise<string> {
  const socket = createConnection({ host: '127.0.0.1', port })
  await once(socket, 'connect')
  socket.end(`*${words.length}\r\n${words.map(w => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`)
  let answer = ''
  for await (const chunk of socket) answer += String(chunk)
  return answer
}

/** A throwaway redis-server on a free port, no persistence: the Redis-backed rate limits' store. */
async function startRedis (): Promise<{
  url: string
  commands (): Promise<number>
  /** DBSIZE, and how many keys start with `prefix` (KEYS: a throwaway server of the bench's own). */
  keys (prefix: string): Promise<{ all: number, prefixed: number }>
  stop (): Promise<void>
}> {
  const port = await freePort()
  const child = spawn('redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const exited = once(child, 'exit')
  for (let i = 0; ; i++) {
    try {
      if ((await redisCommand(port, 'PING')).startsWith('+PONG')) break
    } catch {}
    if (i === 50 || child.exitCode !== null) throw new Error('redis-server did not start (is it installed?)')
    await sleep(100)
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async commands () {
      const info = await redisCommand(port, 'INFO', 'stats')
      return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0)
    },
    async keys (prefix) {
      const all = Number(/^:(\d+)/.exec(await redisCommand(port, 'DBSIZE'))?.[1] ?? 0)
      const prefixed = Number(/^\*(\d+)/.exec(await redisCommand(port, 'KEYS', `${prefix}*`))?.[1] ?? 0)
      return { all, prefixed }
    },
    async stop () {
      child.kill('SIGTERM')
      await exited
    }
  }
}

/**
 * A self-signed certificate for the loopback, made for this run by openssl (node:crypto makes keys, not
 * X.509 certificates): RSA 2048, as public CAs most often issue, valid for 127.0.0.1 for one day.
 */
function makeCertificate (): { keyFile: string, certFile: string, remove (): void } {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-tls-'))
  const keyFile = join(dir, 'key.pem')
  const certFile = join(dir, 'cert.pem')
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  return { keyFile, certFile, remove: () => { rmSync(dir, { recursive: true, force: true }) } }
}

/** A stand-in OTLP/HTTP collector: 200 to every POST /v1/traces, counted, to show the tracing runs exported. */
async function startTraceSink (): Promise<{ url: string, exports: () => number, stop (): Promise<void> }> {
  let exports = 0
  const server = createHttpServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.method === 'POST' && req.url?.startsWith('/v1/traces') === true) exports++
      const json = String(req.headers['content-type']).includes('json')
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
      res.end(json ? '{}' : '')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () => exports,
    async stop () {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  }
}

/** What a scenario sends besides its method and path; for the profile, a setup that picks each connection's clients. */
interface Load {
  headers: Record<string, string>
  body?: string
  /** A fresh setup for each run (it hands out clients to connections). */
  setupClient?: (connections: number) => (client: AutocannonClient) => void
}

interface Wiring {
  sandbox: Child
  /** Every measured process by name: `service`, `floor`, `service@metrics`, `flags3`... */
  processes: Map<string, Child>
  /** The load of a profile scenario: its clients' tokens, its Accept-Encoding. */
  profileLoad: (s: ScenarioInfo) => Load
  loads: Record<string, Load>
  /** Bearer tokens of a client set, in client order, signed as `token` says. */
  tokens: (clients: ClientSetName, token: TokenKind) => string[]
}

type TokenKind = NonNullable<ScenarioInfo['token']>

const loadOf = (w: Wiring, s: ScenarioInfo): Load => s.path === PROFILE_PATH ? w.profileLoad(s) : w.loads[s.id]!
const urlOf = (w: Wiring, s: ScenarioInfo): string =>
  (s.target === 'sandbox' ? w.sandbox.url : w.processes.get(s.target)!.url) + s.path

/**
 * One request of each scenario by hand: the bench must measure the success path, not a fast error. And
 * the floor must be honest: for the same client, its body and every service process's are deep-equal.
 */
async function checkScenarios (w: Wiring, scenarios: ScenarioInfo[]): Promise<void> {
  for (const s of scenarios) {
    const load = loadOf(w, s)
    const res = await fetch(urlOf(w, s), {
      method: s.method,
      headers: load.headers,
      ...(load.body === undefined ? {} : { body: load.body })
    })
    const body = await res.json() as Record<string, unknown>
    if (res.status !== 200) {
      throw new Error(`${s.id}: ${s.method} ${s.path} answered ${res.status}: ${JSON.stringify(body)}`)
    }
    if (s.path === PROFILE_PATH && (res.headers.has('x-degraded') || body.contractor === null)) {
      throw new Error(`${s.id}: the profile is degraded or incomplete (${res.headers.get('x-degraded')})`)
    }
    if (s.path === CONSOLE_PATH && body.status !== 200) {
      throw new Error(`${s.id}: the console's upstream answered ${String(body.status)}`)
    }
  }
  // Every service process against the floor of its scenario's shape, for the same clients: its first
  // profile scenario's clients and tokens, or (c, d's process) the default clients and the floor of a.
  for (const [name, child] of w.processes) {
    if (name.startsWith('floor')) continue
    const s = scenarios.find(s => s.target === name && s.path === PROFILE_PATH)
    const floorId = floorOf(s?.id ?? 'a')
    const floorName = baseScenarios.find(f => f.id === floorId)?.target ?? 'floor'
    const floor = w.processes.get(floorName)
    if (floor === undefined) continue
    const clients = s?.clients ?? 'default'
    // IVANOV's record (no bonuses) and PETROVA's (bonuses); the large set's first two.
    for (const client of [0, 1]) {
      const get = async (url: string, token: TokenKind) => await (await fetch(url + PROFILE_PATH, {
        headers: { authorization: w.tokens(clients, token)[client]! }
      })).json()
      deepStrictEqual(await get(child.url, s?.token ?? 'HS256'), await get(floor.url, 'HS256'),
        `${name} and ${floorName} answer client ${client} of the ${clients} set differently`)
    }
  }
}

async function statsOf (w: Wiring, s: ScenarioInfo): Promise<ProcessStats | undefined> {
  return s.target === 'sandbox' ? undefined : await w.processes.get(s.target)!.ask<ProcessStats>('stats')
}

/** Whole requests for about `seconds` at `rps`, at least `least` a connection: each ends after an answer. */
function wholeRequests (s: ScenarioInfo, rps: number, seconds: number, least: number): number {
  return Math.max(least, Math.ceil(rps * seconds / s.connections)) * s.connections
}

async function measure (
  w: Wiring, s: ScenarioInfo, round: number, size: { amount: number } | { seconds: number }
): Promise<Run> {
  await w.sandbox.ask('delay', s.delayMs)
  const measured = s.target === 'sandbox' ? undefined : w.processes.get(s.target)!
  await measured?.ask('resetPeak')
  const [p0, sbx0] = await Promise.all([statsOf(w, s), w.sandbox.ask<SandboxStats>('stats')])
  const load = loadOf(w, s)
  const bench0 = process.cpuUsage()
  const started = performance.now()
  const result = await autocannon({
    url: urlOf(w, s),
    connections: s.connections,
    timeout: 10,
    method: s.method,
    headers: load.headers,
    ...(load.body === undefined ? {} : { body: load.body }),
    ...(load.setupClient === undefined ? {} : { setupClient: load.setupClient(s.connections) }),
    ...('amount' in size ? { amount: size.amount } : { duration: size.seconds })
  })
  const wallUs = (performance.now() - started) * 1000
  const bench1 = process.cpuUsage(bench0)
  const [p1, sbx1] = await Promise.all([statsOf(w, s), w.sandbox.ask<SandboxStats>('stats')])

  const completed = result.requests.total
  // Per request the process counted; the calibration run sends nothing to a measured process.
  const handled = p0 === undefined || p1 === undefined ? completed : p1.served - p0.served
  const upstream = (sbx1.counts.total + sbx1.counts.redirects) - (sbx0.counts.total + sbx0.counts.redirects)
  const redirects = sbx1.counts.redirects - sbx0.counts.redirects
  const cpu = p0 === undefined || p1 === undefined ? 0 : cpuMicros(p1.cpu) - cpuMicros(p0.cpu)
  const gcUs = p0 === undefined || p1 === undefined ? 0 : p1.gc.pauseUs - p0.gc.pauseUs
  const allocated = p0 === undefined || p1 === undefined ? 0 : p1.allocatedBytes - p0.allocatedBytes
  const sandboxCpu = cpuMicros(sbx1.cpu) - cpuMicros(sbx0.cpu)
  const handshakes = sbx1.tlsConnections - sbx0.tlsConnections
  const perHandled = (n: number) => handled === 0 ? 0 : n / handled
  return {
    scenario: s.id,
    round,
    requests: completed,
    seconds: Math.round(wallUs / 10_000) / 100,
    rps: Math.round(completed / (wallUs / 1e6)),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    mismatches: result.mismatches,
    served: handled,
    upstreamPerRequest: Math.round(perHandled(upstream) * 1000) / 1000,
    redirectsPerRequest: Math.round(perHandled(redirects) * 1000) / 1000,
    cpuUsPerRequest: Math.round(perHandled(cpu)),
    threadUsPerRequest: p0?.threads == null || p1?.threads == null
      ? null
      : threadsPer(p0.threads, p1.threads, perHandled),
    gcShare: cpu === 0 ? 0 : Math.round(gcUs / cpu * 1000) / 1000,
    allocatedKiBPerRequest: Math.round(perHandled(allocated) / 1024 * 10) / 10,
    cpuShare: {
      service: Math.round(cpu / wallUs * 100) / 100,
      sandbox: Math.round(sandboxCpu / wallUs * 100) / 100,
      bench: Math.round(cpuMicros(bench1) / wallUs * 100) / 100
    },
    peakRssMiB: p1 === undefined ? 0 : mib(p1.peak.rss),
    tlsConnectionsPer1000: s.tls === true ? Math.round(perHandled(handshakes) * 1000 * 100) / 100 : null,
    memoryAtPeak: p1 === undefined
      ? { heapTotalMiB: 0, heapUsedMiB: 0, externalMiB: 0 }
      : { heapTotalMiB: mib(p1.peak.heapTotal), heapUsedMiB: mib(p1.peak.heapUsed), externalMiB: mib(p1.peak.external) }
  }
}

/** A profile scenario's load: its tokens sent in turn, with its Accept-Encoding. */
function profileLoadOf (tokens: string[], encoding: ScenarioInfo['encoding']): Load {
  return {
    headers: { authorization: tokens[0]!, ...(encoding === undefined ? {} : { 'accept-encoding': encoding }) },
    // Connection k sends the clients k, k + n, k + 2n... in turn: a connection's requests follow one
    // another, so no two requests in flight ever share a client, however long one of them takes.
    setupClient: connections => {
      let nextSlot = 0
      return client => {
        const own = tokens.filter((_, i) => i % connections === nextSlot % connections)
        nextSlot++
        let turn = 0
        const useNext = () => { client.setHeaders({ authorization: own[turn++ % own.length]! }) }
        useNext()
        client.on('response', useNext)
      }
    }
  }
}

function otherLoads (consoleKey: string, passportKey: string): Record<string, Load> {
  return {
    c: { headers: {} },
    d: {
      headers: { 'content-type': 'application/json', 'x-console-key': consoleKey },
      body: JSON.stringify({ operation: 'passport.get_client', params: benchClient(0).identity })
    },
    // What the service's client sends for a passport lookup.
    u5: {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-authorization': passportKey },
      body: JSON.stringify(benchClient(0).identity)
    }
  }
}

/** Each thread group's CPU over a run, per request. */
function threadsPer (before: ThreadCpu, after: ThreadCpu, per: (n: number) => number): ThreadCpu {
  const out = { ...after }
  for (const key of Object.keys(out) as (keyof ThreadCpu)[]) out[key] = Math.round(per(after[key] - before[key]))
  return out
}

/** The run's CPU by thread: the main thread's user + system, V8's workers, libuv's pool, the rest. */
function threadsText (t: ThreadCpu | null): string {
  return t === null ? '' : `  (main ${t.mainUser}+${t.mainSystem} v8 ${t.v8} uv ${t.libuv} other ${t.other})`
}

function runLine (r: Run): string {
  return `  ${r.scenario.padEnd(10)} round ${r.round}: ${String(r.rps).padStart(5)} req/s` +
    `  p50 ${r.p50} p99 ${r.p99} ms` +
    `  ${r.cpuUsPerRequest} µs/req  gc ${Math.round(r.gcShare * 100)}%  ${r.allocatedKiBPerRequest} KiB/req` +
    threadsText(r.threadUsPerRequest) +
    `  upstream/req ${r.upstreamPerRequest}  rss ${r.peakRssMiB} MiB` +
    (r.tlsConnectionsPer1000 === null ? '' : `  TLS conns/1k ${r.tlsConnectionsPer1000}`) +
    `  errors ${r.errors + r.timeouts + r.mismatches} non2xx ${r.non2xx}  (${r.requests} in ${r.seconds} s)`
}

/** A measured process: which entry, with what environment and node flags. */
interface ProcessPlan { entry: string, env: Record<string, string>, flags: string[] }

async function main (): Promise<void> {
  const began = performance.now()
  const info = machine()
  const load = info.loadAverageAtStart.join(' ')
  process.stdout.write(`bench: ${info.cores} cores, ${info.cpuModel}, Node ${info.node}, load ${load}\n`)
  const keys = { passport: secret(24), dealer: secret(24) }
  const jwtSecret = secret(32)
  const consoleKey = secret(24)
  const metricsKey = secret(24)
  const rateLimits = rateLimitsOutOfTheWay()
  const targets = [...new Set(selected.map(s => s.target).filter(t => t !== 'sandbox'))]

  const warnings = new Map<string, { count: number, first: string[] }>()
  let countWarnings = false
  const certificate = targets.some(t => OVER_TLS.has(t)) ? makeCertificate() : undefined
  const sandbox = await startChild(here('sandbox.ts'), {
    env: {
      SANDBOX_PASSPORT_KEY: keys.passport,
      SANDBOX_DEALER_KEY: keys.dealer,
      ...(certificate === undefined
        ? {}
        : { SANDBOX_TLS_KEY_FILE: certificate.keyFile, SANDBOX_TLS_CERT_FILE: certificate.certFile })
    }
  })
  const tlsUrl = certificate === undefined ? undefined : await sandbox.ask<string>('tlsUrl')
  const processes = new Map<string, Child>()
  const redises = new Map<string, Awaited<ReturnType<typeof startRedis>>>()
  let sink: Awaited<ReturnType<typeof startTraceSink>> | undefined
  let keySet: SandboxKeySet | undefined
  try {
    if (selected.some(s => s.token !== undefined && s.token !== 'HS256')) keySet = await startSandboxKeySet()
    for (const target of targets.filter(t => WITH_REDIS.includes(t))) redises.set(target, await startRedis())
    if (targets.some(t => t.startsWith('service@otel'))) sink = await startTraceSink()
    const profileDir = PROFILING === undefined ? undefined : mkdtempSync(join(os.tmpdir(), `bench-${PROFILING}-prof-`))
    const serviceEnv: Record<string, string> = {
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      UPSTREAM_URL: sandbox.url,
      PASSPORT_API_KEY: keys.passport,
      DEALER_API_KEY: keys.dealer,
      AUTH_JWT_SECRET: jwtSecret,
      CONSOLE_API_KEY: consoleKey,
      ...rateLimits
    }
    const optionEnv = (name: OptionName): Record<string, string> => {
      const tracing = (ratio: string) => ({
        OTEL_EXPORTER_OTLP_ENDPOINT: sink!.url,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: ratio
      })
      switch (name) {
        case 'metrics': return { METRICS_API_KEY: metricsKey }
        case 'redis': return { REDIS_URL: redises.get('service@redis')!.url }
        case 'store-off': return { PROFILE_STALE_IF_ERROR_S: '0' }
        // 32 random bytes made for the run, as `openssl rand -base64 32` makes them for a deployment.
        case 'store-redis': return {
          REDIS_URL: redises.get('service@store-redis')!.url, PROFILE_CACHE_KEY: randomBytes(32).toString('base64')
        }
        case 'fresh': return { PROFILE_FRESH_S: String(FRESH_S) }
        case 'otel100': return tracing('1')
        case 'otel10': return tracing('0.1')
        case 'info': return { LOG_LEVEL: 'info' }
        // Exactly one verification key is accepted: the key set instead of the secret.
        case 'rs256': case 'es256': return { AUTH_JWT_SECRET: '', AUTH_JWKS_URL: keySet!.url }
        // Compression is on by default (COMPRESSION=on): the load's Accept-Encoding turns it on.
        case 'br': case 'gzip': return {}
        case 'compression-off': return { COMPRESSION: 'off' }
      }
    }
    // The https upstream, trusted as production trusts its CA: through NODE_EXTRA_CA_CERTS.
    const overTls = (target: string): Record<string, string> => OVER_TLS.has(target)
      ? { UPSTREAM_URL: tlsUrl!, NODE_EXTRA_CA_CERTS: certificate!.certFile }
      : {}
    const plan = (target: string): ProcessPlan => {
      if (target.startsWith('floor')) {
        const env = {
          UPSTREAM_URL: sandbox.url,
          PASSPORT_API_KEY: keys.passport,
          DEALER_API_KEY: keys.dealer,
          AUTH_JWT_SECRET: jwtSecret,
          ...overTls(target),
          ...(args['floor-as-start'] ? { MALLOC_ARENA_MAX: START_ENV.MALLOC_ARENA_MAX ?? '' } : {})
        }
        return { entry: 'floor.ts', env, flags: args['floor-as-start'] ? startFlags() : [] }
      }
      const env = { ...START_ENV, ...serviceEnv, ...overTls(target) }
      const shapes = [SERVICE_AT_200, SERVICE_OTHER, SERVICE_LARGE, SERVICE_MANY, SERVICE_TLS]
      if (target === 'service' || shapes.includes(target)) {
        return { entry: 'service.ts', env, flags: NODE_FLAGS }
      }
      if (target.startsWith('service@')) {
        return { entry: 'service.ts', env: { ...env, ...optionEnv(target.slice(8) as OptionName) }, flags: NODE_FLAGS }
      }
      return { entry: 'service.ts', env, flags: FLAG_SETS[Number(target.slice('flags'.length))]! }
    }
    const plans = Object.fromEntries(targets.map(t => [t, plan(t)]))
    // Once per set of flags the service processes run with (the cache is keyed by them).
    const flagSets = new Map(Object.entries(plans)
      .filter(([name]) => name !== 'floor')
      .map(([, p]) => [p.flags.join(' '), p.flags]))
    for (const flags of flagSets.values()) fillCompileCache(flags)
    for (const target of targets) {
      const { entry, env, flags } = plans[target]!
      const own = { count: 0, first: [] as string[] }
      warnings.set(target, own)
      processes.set(target, await startChild(here(entry), {
        env: {
          // An empty value stands for unset (AUTH_JWT_SECRET under a key set).
          ...Object.fromEntries(Object.entries(env).filter(([, value]) => value !== '')),
          ...(profileDir === undefined
            ? {}
            : { BENCH_PROFILE_DIR: profileDir, BENCH_PROFILE: PROFILING!, BENCH_PROCESS_NAME: target })
        },
        execArgv: flags,
        onLine: line => {
          // pino levels: 40 warn, 50 error, 60 fatal.
          const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0)
          if (!countWarnings || level < 40) return
          own.count++
          if (own.first.length < 5) own.first.push(line)
        }
      }))
    }
    const signingKeys: Record<TokenKind, string | PrivateJwk | undefined> = {
      HS256: jwtSecret, RS256: keySet?.signing.rsa, ES256: keySet?.signing.ec
    }
    const signed = new Map<string, string[]>()
    const tokens = (clients: ClientSetName, token: TokenKind): string[] => {
      const key = `${clients} ${token}`
      if (!signed.has(key)) {
        signed.set(key, clientSet(clients).map(({ identity: { uid_client: sub, login, vendor } }) =>
          `Bearer ${signToken({ sub, login, vendor }, signingKeys[token]!)}`))
      }
      return signed.get(key)!
    }
    const profileLoads = new Map<string, Load>()
    const profileLoad = (s: ScenarioInfo): Load => {
      const clients = s.clients ?? 'default'
      const token = s.token ?? 'HS256'
      const key = `${clients} ${token} ${s.encoding ?? ''}`
      if (!profileLoads.has(key)) profileLoads.set(key, profileLoadOf(tokens(clients, token), s.encoding))
      return profileLoads.get(key)!
    }
    const wiring: Wiring = { sandbox, processes, profileLoad, loads: otherLoads(consoleKey, keys.passport), tokens }
    const atReady = new Map<string, ProcessStats>()
    for (const [name, child] of processes) atReady.set(name, await child.ask<ProcessStats>('stats'))
    await checkScenarios(wiring, selected)
    if (processes.has('floor')) {
      const others = [...processes.keys()].filter(n => n !== 'floor').join(', ')
      process.stdout.write(`the floor's profiles deep-equal the service's (${others})\n`)
    }

    process.stdout.write(`warm-up: ${WARMUP_SECONDS} s per process (${OPTION_WARMUP_SECONDS} s for an option's, ` +
      `${SHARED_WARMUP_SECONDS} s for each further scenario it serves), discarded\n`)
    const lastRps = new Map<ScenarioId, number>()
    const warmed = new Set<string>()
    for (const s of selected) {
      const seconds = warmed.has(s.target)
        ? SHARED_WARMUP_SECONDS
        : s.group === 'option' || s.target === 'sandbox' ? OPTION_WARMUP_SECONDS : WARMUP_SECONDS
      warmed.add(s.target)
      // A timed part sizes the rest, which is whole requests: a request cut off by a timed run's end makes the service
      // abort its upstream calls, which closes their sockets and takes its error paths, and the first measured round
      // paid for both (new connections, code deoptimised on the way out).
      const timed = Math.min(1, seconds / 2)
      const sizing = await measure(wiring, s, 0, { seconds: timed })
      const run = await measure(wiring, s, 0, { amount: wholeRequests(s, sizing.rps, seconds - timed, 2) })
      lastRps.set(s.id, run.rps)
      process.stdout.write(runLine(run) + '\n')
    }

    countWarnings = true
    for (const child of processes.values()) await child.ask('profileStart')
    const redisBefore = new Map<string, number>()
    for (const [target, redis] of redises) redisBefore.set(target, await redis.commands())
    const exportsBefore = sink?.exports()
    const runs: Run[] = []
    process.stdout.write(`measured: ${ROUNDS} rounds of ${selected.map(s => s.id).join(', ')} ` +
      `(options ${OPTION_ROUNDS} at most, t50, ft50, m, fm ${SHAPE_ROUNDS}), about ${RUN_SECONDS} s each\n`)
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of selected) {
        if (round > roundsOf(s)) continue
        const rps = lastRps.get(s.id) ?? 100
        // The pools close connections idle for 10 s and a scenario's rounds are a minute apart: an unmeasured
        // second first, so the handshakes counted are steady traffic's, not the pool's refill. Whole requests, as
        // in a measured run: a request cut off by a timed run's end aborts its upstream calls, and so their sockets.
        if (s.tls === true) await measure(wiring, s, round, { amount: wholeRequests(s, rps, 1, 2) })
        const run = await measure(wiring, s, round, { amount: wholeRequests(s, rps, RUN_SECONDS, 5) })
        lastRps.set(s.id, run.rps)
        runs.push(run)
        process.stdout.write(runLine(run) + '\n')
      }
    }
    countWarnings = false
    for (const [name, child] of processes) {
      const profile = await child.ask<string | undefined>('profileStop')
      if (profile === undefined) continue
      process.stdout.write(`${name}: ${PROFILING} profile of the measured rounds: ${profile}\n`)
    }

    // Whether each priced option was on at all: an option the service does not know yet is ignored by it.
    const options: Array<{ option: string, title: string, active: boolean, evidence: string }> = []
    for (const s of selected.filter(s => s.group === 'option')) {
      const name = s.variant as OptionName
      const child = processes.get(s.target)!
      let evidence: string
      let active: boolean
      if (name === 'metrics') {
        const { status } = await fetch(`${child.url}/metrics`, { headers: { authorization: `Bearer ${metricsKey}` } })
        active = status === 200
        evidence = `GET /metrics answered ${status}`
      } else if (name === 'redis' || name === 'store-redis') {
        const redis = redises.get(s.target)!
        // Less the INFO command that read the count before.
        const commands = (await redis.commands()) - redisBefore.get(s.target)! - 1
        evidence = `redis-server processed ${commands} commands during the measured rounds`
        if (name === 'redis') {
          active = commands > 0
        } else {
          const keys = await redis.keys(COPY_PREFIX)
          active = commands > 0 && keys.prefixed > 0
          evidence += `; after the run DBSIZE ${keys.all}, of them ${keys.prefixed} copies under ${COPY_PREFIX}`
        }
      } else if (name === 'store-off' || name === 'fresh') {
        const settings = await child.ask<StoreSettings>('lastKnownSettings')
        const said = `the service read PROFILE_STALE_IF_ERROR_S=${settings.staleIfErrorS}, ` +
          `PROFILE_FRESH_S=${settings.freshS}`
        if (name === 'store-off') {
          // The base m keeps 5000 clients' copies: its heap after the rounds shows what the store holds.
          const heap = async (target: string) => {
            const stats = await processes.get(target)?.ask<ProcessStats>('stats')
            return stats === undefined ? '–' : `${mib(stats.peak.heapUsed)} MiB`
          }
          active = settings.staleIfErrorS === 0 && settings.freshS === 0
          evidence = `${said} (no store at all); heap used at its last run's RSS peak ${await heap(s.target)}, ` +
            `${SERVICE_MANY}'s (store on) ${await heap(SERVICE_MANY)}`
        } else {
          const own = runs.filter(r => r.scenario === s.id).map(r => r.upstreamPerRequest)
          const res = await fetch(child.url + PROFILE_PATH, { headers: { authorization: tokens('default', 'HS256')[0]! } })
          await res.arrayBuffer()
          active = settings.freshS > 0 && own.length > 0 && own.every(n => n < 3)
          evidence = `${said}; upstream requests per profile ${own.join(', ')} (3 without it); ` +
            `a repeated profile answered with Age: ${res.headers.get('age') ?? 'none'}`
        }
      } else if (name === 'info') {
        active = true
        evidence = 'LOG_LEVEL=info'
      } else if (name === 'rs256' || name === 'es256') {
        const get = async (token: TokenKind) => (await fetch(child.url + PROFILE_PATH, {
          headers: { authorization: tokens('many', token)[0]! }
        })).status
        const [own, secret] = [await get(s.token!), await get('HS256')]
        active = own === 200 && secret === 401
        evidence = `a token the key set signed (${s.token}) answered ${own}, an HS256 token of the bench's secret ${secret}`
      } else if (name === 'br' || name === 'gzip' || name === 'compression-off') {
        // compression-off: a client that asks for br gets the answer as it is.
        const [asked, expected] = name === 'compression-off' ? ['br', null] : [name, name]
        const res = await fetch(child.url + PROFILE_PATH, {
          headers: { authorization: tokens('default', 'HS256')[0]!, 'accept-encoding': asked }
        })
        await res.arrayBuffer()
        const encoding = res.headers.get('content-encoding')
        active = encoding === expected
        evidence = `a profile asked with Accept-Encoding: ${asked} came with Content-Encoding: ${encoding ?? 'none'}`
      } else {
        const exports = sink!.exports() - (exportsBefore ?? 0)
        active = exports > 0
        evidence = `the OTLP sink received ${exports} trace exports during the measured rounds`
      }
      options.push({ option: name, title: OPTIONS[name]!.title, active, evidence })
    }

    const atEnd = new Map<string, ProcessStats>()
    for (const [name, child] of processes) atEnd.set(name, await child.ask<ProcessStats>('stats'))
    const lifetimeRss: LifetimeRss = Object.fromEntries([...atEnd].map(([name, stats]) => [name, mib(stats.maxRss)]))
    const service = atReady.get('service')
    const memory = service === undefined
      ? undefined
      : {
          rssAtReadyMiB: mib(service.peak.rss),
          heapUsedAtReadyMiB: mib(service.peak.heapUsed),
          lifetimeMaxRssMiB: lifetimeRss.service!,
          ...(lifetimeRss[SERVICE_AT_200] === undefined
            ? {}
            : { at200ConnectionsMaxRssMiB: lifetimeRss[SERVICE_AT_200] }),
          ...(lifetimeRss[SERVICE_OTHER] === undefined ? {} : { otherRoutesMaxRssMiB: lifetimeRss[SERVICE_OTHER] }),
          ...(lifetimeRss[SERVICE_LARGE] === undefined ? {} : { largeProfileMaxRssMiB: lifetimeRss[SERVICE_LARGE] }),
          ...(lifetimeRss[SERVICE_MANY] === undefined ? {} : { manyClientsMaxRssMiB: lifetimeRss[SERVICE_MANY] }),
          ...(lifetimeRss[SERVICE_TLS] === undefined ? {} : { tlsMaxRssMiB: lifetimeRss[SERVICE_TLS] })
        }
    const summaries = summarise(selected, runs)
    for (const o of options) {
      const own = summaries.find(s => s.variant === o.option && s.group === 'option')
      const base = summaries.find(s => s.id === own?.id.split('@')[0])
      if (base === undefined || own === undefined) continue
      const ratio = (own.cpuUsPerRequest.median / base.cpuUsPerRequest.median).toFixed(2)
      o.evidence += `; CPU per profile ${ratio} × ${base.id}'s (the same load, default settings)`
    }
    const targetList = evaluateTargets(summaries, runs, memory)
    process.stdout.write('\n' + textTable(summaries) + '\n\n')
    process.stdout.write('medians, (min–max) over the rounds; latency of 2xx answers at 1 ms resolution; ' +
      'GC: main-thread pauses / process CPU\n\n')
    process.stdout.write(sideBySideText(summaries, lifetimeRss) + '\n')
    process.stdout.write('peak RSS here: the kernel\'s lifetime maxrss of each process\n\n')
    for (const o of options) {
      const state = o.active ? 'active' : 'NOT ACTIVE (the service ignores it)'
      process.stdout.write(`option ${o.option}: ${state}: ${o.evidence}\n`)
    }
    for (const t of targetList) {
      const result = verdict(t).replaceAll('*', '').padEnd(14)
      process.stdout.write(`${result} ${t.description}: ${t.measured} (limit ${t.limit})\n`)
    }
    if (memory !== undefined) {
      process.stdout.write(`service RSS at ready ${memory.rssAtReadyMiB} MiB ` +
        `(heap used ${memory.heapUsedAtReadyMiB} MiB), ` +
        `lifetime max ${memory.lifetimeMaxRssMiB} MiB\n`)
    }
    for (const [name, w] of warnings) {
      if (w.count > 0) process.stdout.write(`\n${name} logged ${w.count} warn+ lines, first: ${w.first[0]}\n`)
    }

    const report = {
      generatedAt: new Date().toISOString(),
      commit: commit(),
      label: args.label,
      machine: info,
      settings: {
        mode: SWEEP ? 'flags sweep' : 'bench',
        rounds: ROUNDS,
        optionRounds: OPTION_ROUNDS,
        runSeconds: RUN_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        order: 'interleaved: every scenario once per round, rounds in sequence',
        sizing: 'fixed request count per run (a whole number per connection), from the previous run of the scenario',
        latency: 'autocannon, 2xx answers only, 1 ms resolution',
        cpu: 'process.cpuUsage() of the process under load (user + system) over the run, ' +
          'divided by the requests it counted',
        gc: 'v8.GCProfiler in the process: main-thread pause time of every collection over the run, ' +
          'divided by the process CPU time',
        allocation: 'v8.GCProfiler in the process: heap used now plus every byte the collector freed, ' +
          'over the run, per request (V8 heap only)',
        rss: 'per run: the process samples process.memoryUsage() every 50 ms ' +
          'and reports the sample with the highest RSS; the target and the side-by-side table: ' +
          'the kernel\'s lifetime peak (getrusage maxrss), start-up and warm-up included',
        upstream: 'sandbox counts (operation requests + 307 hops) over the run, ' +
          'divided by the requests the process counted',
        service: {
          LOG_LEVEL: 'warn',
          rateLimits,
          upstreamDelayMs: BENCH_DELAY_MS,
          nodeFlags: NODE_FLAGS,
          startEnv: Object.keys(START_ENV)
        },
        floor: 'bench/floor.ts, no node flags',
        processes: Object.fromEntries(Object.entries(plans).map(([name, p]) => [name, {
          entry: p.entry,
          flags: p.flags,
          env: Object.keys(p.env).filter(k => !(k in serviceEnv) || p.env[k] !== serviceEnv[k])
        }])),
        clients: 'synthetic clients (the IVANOV and PETROVA records under their own identities), ' +
          'each connection sending its own clients in turn, so no two requests in flight share a client; ' +
          `sets: ${Object.entries(CLIENT_SETS).map(([name, what]) => `${name}: ${what}`).join('; ')}`,
        tls: 'the sandbox over https on the loopback for t50 and ft50: a self-signed RSA 2048 certificate ' +
          'made for the run (openssl req -x509), trusted through NODE_EXTRA_CA_CERTS; new connections are ' +
          'the https server\'s secureConnection events',
        keySet: 'sandbox/jwks.ts on the loopback (one RSA 2048 and one EC P-256 key), AUTH_JWKS_URL; ' +
          'tokens signed by sandbox/sign.ts',
        compression: 'the service\'s default (COMPRESSION=on, src/plugins/external/compress.ts); ' +
          'the load sends Accept-Encoding; autocannon counts the compressed bytes, decompressing nothing'
      },
      memory,
      lifetimeMaxRssMiB: lifetimeRss,
      options,
      scenarios: summaries,
      targets: targetList,
      serviceWarnings: warnings.get('service') ?? { count: 0, first: [] },
      warnings: Object.fromEntries(warnings),
      runs
    }
    if (reportPath !== undefined) {
      await writeReport(reportPath, report)
      process.stdout.write(`\nwrote ${reportPath}\n`)
    }
    const tables = [markdownTable(summaries), sideBySideMarkdown(summaries, lifetimeRss), targetsTable(targetList)]
    process.stdout.write('\n' + tables.join('\n\n') + '\n')
  } finally {
    for (const child of processes.values()) await child.stop()
    await sandbox.stop()
    for (const redis of redises.values()) await redis.stop()
    await sink?.stop()
    await keySet?.close()
    certificate?.remove()
    process.stdout.write(`bench took ${Math.round((performance.now() - began) / 1000)} s\n`)
  }
}

await main()
