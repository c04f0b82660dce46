// `npm run bench`: autocannon against the real service in its own process, wired to the sandbox
// upstream in a third process. A warm-up round is discarded (JIT, the keep-alive pools, the learned
// slash paths, the token cache); then rounds of every scenario interleaved, so a noisy machine shows as
// spread instead of as one scenario's false result. Each run sends a fixed number of requests sized
// from the previous run of its scenario: every connection ends after its last answer, so no request is
// cut off at the end and the upstream count per request is exact.
//
//   npm run bench                                    full run, writes bench/report.json
//   npm run bench -- --only a,c --rounds 1 --cpu-prof  the service's CPU profile of the measured rounds
//   npm run bench -- --label "after: ..."            the label kept in the report's history
//   npm run bench -- --only a --node-flags=--max-semi-space-size=4   V8 flags for the service (experiments)
import autocannon, { type Client as AutocannonClient } from 'autocannon'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ConfigSchema } from '../src/config.ts'
import { operations } from '../src/upstream/operations.ts'
import { claimsFor, hs256 } from '../test/helpers/tokens.ts'
import { benchClient, benchClients, BENCH_CLIENT_COUNT } from './clients.ts'
import { startChild, type Child } from './ipc.ts'
import {
  evaluateTargets, markdownTable, summarise, targetsTable, textTable, verdict, writeReport,
  type Machine, type Run, type ScenarioId, type ScenarioInfo
} from './report.ts'
import type { SandboxStats } from './sandbox.ts'
import { NOOP_PATH, type ServiceStats } from './service.ts'

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))
const REPORT_PATH = here('report.json')
const PROFILE_PATH = '/api/users/profile'
const CONSOLE_PATH = '/request-console'
const BENCH_DELAY_MS = 20
const MiB = 1024 * 1024

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
    // Node/V8 flags for the service process only, e.g. --node-flags=--max-semi-space-size=4 (an experiment:
    // the report records them). Without it, the flags `npm start` gives node (package.json).
    'node-flags': { type: 'string' },
    out: { type: 'string' }
  }
})
/** The flags `npm start` runs node with (`node --flag ... src/server.ts`): the bench measures production. */
function startScriptFlags (): string[] {
  const pkg = JSON.parse(readFileSync(here('../package.json'), 'utf8')) as { scripts: { start: string } }
  return pkg.scripts.start.split(/\s+/).filter(word => word.startsWith('--'))
}
const NODE_FLAGS = args['node-flags'] === undefined
  ? startScriptFlags()
  : args['node-flags'].split(' ').filter(flag => flag !== '')
const ROUNDS = Number(args.rounds)
const RUN_SECONDS = Number(args.seconds)
const WARMUP_SECONDS = Number(args.warmup)

const scenarios: ScenarioInfo[] = [
  { id: 'a', title: 'profile', method: 'GET', path: PROFILE_PATH, connections: 50, delayMs: 0, expectedUpstream: 3 },
  // Not one of the scenarios: few enough connections not to saturate the CPU, so its latency is
  // what the service adds to the upstream's, not queueing.
  { id: 'b5', title: 'profile, unsaturated', method: 'GET', path: PROFILE_PATH, connections: 5, delayMs: BENCH_DELAY_MS, expectedUpstream: 3 },
  { id: 'b50', title: 'profile', method: 'GET', path: PROFILE_PATH, connections: 50, delayMs: BENCH_DELAY_MS, expectedUpstream: 3 },
  { id: 'b200', title: 'profile', method: 'GET', path: PROFILE_PATH, connections: 200, delayMs: BENCH_DELAY_MS, expectedUpstream: 3 },
  { id: 'c', title: 'trivial route', method: 'GET', path: NOOP_PATH, connections: 50, delayMs: 0, expectedUpstream: null },
  { id: 'd', title: 'console passport', method: 'POST', path: CONSOLE_PATH, connections: 50, delayMs: 0, expectedUpstream: 1 },
  // Calibration, not a scenario of the service: the sandbox's passport answer at the same delay, straight
  // from autocannon. It shows what the upstream and this machine's timers cost on their own.
  { id: 'u5', title: 'sandbox alone, passport', method: 'POST', path: `${operations['passport.get_client'].path}/`, connections: 5, delayMs: BENCH_DELAY_MS, expectedUpstream: 1, target: 'sandbox' }
]
const only = args.only?.split(',').map(s => s.trim())
const selected = only === undefined ? scenarios : scenarios.filter(s => only.includes(s.id))
if (selected.length === 0) throw new Error(`--only names none of ${scenarios.map(s => s.id).join(', ')}`)
// A partial or profiled run is not the benchmark: it does not replace the committed report.
const reportPath = args.out ?? (only === undefined && !args['cpu-prof'] ? REPORT_PATH : undefined)

const secret = (bytes: number) => randomBytes(bytes).toString('base64url')

/** Rate limits high enough never to answer 429 here, whatever limits the config has grown. */
function rateLimitsOutOfTheWay (): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    const maximum = (schema as { maximum?: unknown }).maximum
    if (/^RATE_LIMIT_.*(?:PER_MINUTE|PER_SECOND|MAX)$/.test(name) && typeof maximum === 'number') env[name] = String(maximum)
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
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== ''
    return dirty ? `${sha}+dirty` : sha
  } catch {
    return 'unknown'
  }
}

const mib = (bytes: number) => Math.round(bytes / MiB * 10) / 10
const cpuMicros = (cpu: NodeJS.CpuUsage) => cpu.user + cpu.system
const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

interface Wiring { service: Child, sandbox: Child, loads: Record<ScenarioId, Load> }

/** One request of each scenario by hand: the bench must measure the success path, not a fast error. */
async function checkScenarios ({ service, sandbox, loads }: Wiring): Promise<void> {
  for (const s of selected) {
    const load = loads[s.id]
    const res = await fetch((s.target === 'sandbox' ? sandbox.url : service.url) + s.path, {
      method: s.method,
      headers: load.headers,
      ...(load.body === undefined ? {} : { body: load.body })
    })
    const body = await res.json() as Record<string, unknown>
    if (res.status !== 200) throw new Error(`${s.id}: ${s.method} ${s.path} answered ${res.status}: ${JSON.stringify(body)}`)
    if (s.path === PROFILE_PATH && (res.headers.has('x-degraded') || body.contractor === null)) {
      throw new Error(`${s.id}: the profile is degraded or incomplete (${res.headers.get('x-degraded')})`)
    }
    if (s.path === CONSOLE_PATH && body.status !== 200) throw new Error(`${s.id}: the console's upstream answered ${String(body.status)}`)
  }
}

async function measure (w: Wiring, s: ScenarioInfo, round: number, size: { amount: number } | { seconds: number }): Promise<Run> {
  await w.sandbox.ask('delay', s.delayMs)
  await w.service.ask('resetPeak')
  const [svc0, sbx0] = await Promise.all([w.service.ask<ServiceStats>('stats'), w.sandbox.ask<SandboxStats>('stats')])
  const load = w.loads[s.id]
  const bench0 = process.cpuUsage()
  const started = performance.now()
  const result = await autocannon({
    url: (s.target === 'sandbox' ? w.sandbox.url : w.service.url) + s.path,
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
  const [svc1, sbx1] = await Promise.all([w.service.ask<ServiceStats>('stats'), w.sandbox.ask<SandboxStats>('stats')])

  const served = svc1.served - svc0.served
  const completed = result.requests.total
  const upstream = (sbx1.counts.total + sbx1.counts.redirects) - (sbx0.counts.total + sbx0.counts.redirects)
  const redirects = sbx1.counts.redirects - sbx0.counts.redirects
  const serviceCpu = cpuMicros(svc1.cpu) - cpuMicros(svc0.cpu)
  const sandboxCpu = cpuMicros(sbx1.cpu) - cpuMicros(sbx0.cpu)
  // Per request the service counted; the calibration run sends nothing to the service.
  const handled = s.target === 'sandbox' ? completed : served
  const perServed = (n: number) => handled === 0 ? 0 : n / handled
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
    served,
    upstreamPerRequest: Math.round(perServed(upstream) * 1000) / 1000,
    redirectsPerRequest: Math.round(perServed(redirects) * 1000) / 1000,
    cpuUsPerRequest: Math.round(perServed(serviceCpu)),
    cpuShare: {
      service: Math.round(serviceCpu / wallUs * 100) / 100,
      sandbox: Math.round(sandboxCpu / wallUs * 100) / 100,
      bench: Math.round(cpuMicros(bench1) / wallUs * 100) / 100
    },
    peakRssMiB: mib(svc1.peak.rss),
    memoryAtPeak: { heapTotalMiB: mib(svc1.peak.heapTotal), heapUsedMiB: mib(svc1.peak.heapUsed), externalMiB: mib(svc1.peak.external) }
  }
}

/** What a scenario sends besides its method and path; for the profile, a setup that picks each connection's clients. */
interface Load {
  headers: Record<string, string>
  body?: string
  /** A fresh setup for each run (it hands out clients to connections). */
  setupClient?: (connections: number) => (client: AutocannonClient) => void
}

function loadsFor (jwtSecret: string, consoleKey: string, passportKey: string): Record<ScenarioId, Load> {
  // Valid for ten minutes, longer than the whole bench.
  const tokens = benchClients().map(c => `Bearer ${hs256(claimsFor(c.identity), jwtSecret)}`)
  const profile: Load = {
    headers: { authorization: tokens[0]! },
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
  return {
    a: profile,
    b5: profile,
    b50: profile,
    b200: profile,
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

function runLine (r: Run): string {
  return `  ${r.scenario.padEnd(4)} round ${r.round}: ${String(r.rps).padStart(5)} req/s  p50 ${r.p50} p90 ${r.p90} p99 ${r.p99} ms` +
    `  ${r.cpuUsPerRequest} µs/req  upstream/req ${r.upstreamPerRequest}  rss ${r.peakRssMiB} MiB` +
    `  errors ${r.errors + r.timeouts + r.mismatches} non2xx ${r.non2xx}  (${r.requests} in ${r.seconds} s)`
}

async function main (): Promise<void> {
  const began = performance.now()
  const info = machine()
  process.stdout.write(`bench: ${info.cores} cores, ${info.cpuModel}, Node ${info.node}, load ${info.loadAverageAtStart.join(' ')}\n`)
  const keys = { passport: secret(24), dealer: secret(24) }
  const jwtSecret = secret(32)
  const consoleKey = secret(24)
  const rateLimits = rateLimitsOutOfTheWay()

  const warnings: string[] = []
  let countWarnings = false
  const sandbox = await startChild(here('sandbox.ts'), { env: { SANDBOX_PASSPORT_KEY: keys.passport, SANDBOX_DEALER_KEY: keys.dealer } })
  let service: Child | undefined
  let profileDir: string | undefined
  try {
    profileDir = args['cpu-prof'] ? mkdtempSync(join(os.tmpdir(), 'bench-cpu-prof-')) : undefined
    service = await startChild(here('service.ts'), {
      env: {
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
        UPSTREAM_URL: sandbox.url,
        PASSPORT_API_KEY: keys.passport,
        DEALER_API_KEY: keys.dealer,
        AUTH_JWT_SECRET: jwtSecret,
        CONSOLE_API_KEY: consoleKey,
        ...rateLimits,
        ...(profileDir === undefined ? {} : { BENCH_CPU_PROFILE_DIR: profileDir })
      },
      execArgv: NODE_FLAGS,
      onLine: line => { if (countWarnings && line.trim() !== '') warnings.push(line) }
    })
    const wiring: Wiring = { service, sandbox, loads: loadsFor(jwtSecret, consoleKey, keys.passport) }
    const atReady = await service.ask<ServiceStats>('stats')
    await checkScenarios(wiring)

    process.stdout.write(`warm-up: ${WARMUP_SECONDS} s per scenario, discarded\n`)
    const lastRps = new Map<ScenarioId, number>()
    for (const s of selected) {
      const run = await measure(wiring, s, 0, { seconds: WARMUP_SECONDS })
      lastRps.set(s.id, run.rps)
      process.stdout.write(runLine(run) + '\n')
    }
    // Requests cut off by the end of a timed warm-up run finish (or abort) before anything is counted.
    await sleep(500)

    countWarnings = true
    await service.ask('profileStart')
    const runs: Run[] = []
    process.stdout.write(`measured: ${ROUNDS} rounds of ${selected.map(s => s.id).join(', ')}, about ${RUN_SECONDS} s each\n`)
    for (let round = 1; round <= ROUNDS; round++) {
      for (const s of selected) {
        // Whole requests per connection, sized to last about RUN_SECONDS at the latest measured rate.
        const perConnection = Math.max(10, Math.ceil((lastRps.get(s.id) ?? 100) * RUN_SECONDS / s.connections))
        const run = await measure(wiring, s, round, { amount: perConnection * s.connections })
        lastRps.set(s.id, run.rps)
        runs.push(run)
        process.stdout.write(runLine(run) + '\n')
      }
    }
    countWarnings = false
    const profile = await service.ask<string | undefined>('profileStop')
    if (profile !== undefined) process.stdout.write(`service CPU profile of the measured rounds: ${profile}\n`)

    const atEnd = await service.ask<ServiceStats>('stats')
    const memory = { rssAtReadyMiB: mib(atReady.peak.rss), heapUsedAtReadyMiB: mib(atReady.peak.heapUsed), lifetimeMaxRssMiB: mib(atEnd.maxRss) }
    const summaries = summarise(selected, runs)
    const targets = evaluateTargets(summaries, runs, memory)
    process.stdout.write('\n' + textTable(summaries) + '\n\n')
    process.stdout.write('medians, (min–max) over the rounds; latency of 2xx answers at 1 ms resolution\n\n')
    for (const t of targets) process.stdout.write(`${verdict(t).replaceAll('*', '').padEnd(14)} ${t.description}: ${t.measured} (limit ${t.limit})\n`)
    process.stdout.write(`service RSS at ready ${memory.rssAtReadyMiB} MiB (heap used ${memory.heapUsedAtReadyMiB} MiB), lifetime max ${memory.lifetimeMaxRssMiB} MiB\n`)
    if (warnings.length > 0) process.stdout.write(`\nthe service logged ${warnings.length} warn+ lines, first: ${warnings[0]}\n`)

    const report = {
      generatedAt: new Date().toISOString(),
      commit: commit(),
      label: args.label,
      machine: info,
      settings: {
        rounds: ROUNDS,
        runSeconds: RUN_SECONDS,
        warmupSeconds: WARMUP_SECONDS,
        order: 'interleaved: every scenario once per round, rounds in sequence',
        sizing: 'fixed request count per run (a whole number per connection), from the previous run of the scenario',
        latency: 'autocannon, 2xx answers only, 1 ms resolution',
        cpu: 'process.cpuUsage() of the service (user + system) over the run, divided by the requests the service counted',
        rss: 'per run: the service samples process.memoryUsage() every 50 ms and reports the sample with the highest RSS; ' +
          'the target: the kernel\'s lifetime peak (getrusage maxrss), start-up and warm-up included',
        upstream: 'sandbox counts (operation requests + 307 hops) over the run, divided by the requests the service counted',
        service: { LOG_LEVEL: 'warn', rateLimits, upstreamDelayMs: BENCH_DELAY_MS, nodeFlags: NODE_FLAGS },
        clients: `${BENCH_CLIENT_COUNT} synthetic clients (the IVANOV and PETROVA records under their own identities), ` +
          'each connection sending its own clients in turn, so no two requests in flight share a client'
      },
      memory,
      scenarios: summaries,
      targets,
      serviceWarnings: { count: warnings.length, first: warnings.slice(0, 5) },
      runs
    }
    if (reportPath !== undefined) {
      await writeReport(reportPath, report)
      process.stdout.write(`\nwrote ${reportPath}\n`)
    }
    process.stdout.write('\n' + markdownTable(summaries) + '\n\n' + targetsTable(targets) + '\n')
  } finally {
    await service?.stop()
    await sandbox.stop()
    process.stdout.write(`bench took ${Math.round((performance.now() - began) / 1000)} s\n`)
  }
}

await main()
