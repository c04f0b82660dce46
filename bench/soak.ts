// `npm run soak` (not part of npm test): the service (a child process as npm start runs it, with --expose-gc; pino
// at debug captured from its stdout) in front of the fault upstream (sandbox/faults.ts: the sandbox with random
// faults injected per upstream call), under a bounded run of mixed requests: seeded and unknown clients' profiles,
// bad tokens, console calls good and bad, metrics scrapes. It fails (exit 1) on any unmapped or undocumented answer,
// a malformed error body, a secret in an answer or the log, a transport error, or RSS growth past the bound
// (measured after warm-up and at the end, each after a full GC). Options (argv or env): --duration / SOAK_DURATION_S
// (60), --concurrency / SOAK_CONCURRENCY (16), --fault-rate / SOAK_FAULT_RATE (0.25), --rss-bound-mib /
// SOAK_RSS_BOUND_MIB (50), --warmup / SOAK_WARMUP_S (a sixth of the run, 2 to 10 s), --faults / SOAK_FAULTS (a comma
// list of fault kinds, or `none`; all). Samples: --sample-every / SOAK_SAMPLE_S (seconds; 0, the default, is off)
// reads the service's RSS, heap used, external and array buffers every N seconds (no GC forced), prints each, writes
// them to --samples-out / SOAK_SAMPLES_OUT (bench/soak-samples.json) and fails when RSS grows more than
// --rss-last-third-bound-mib / SOAK_RSS_LAST_THIRD_BOUND_MIB (2) over the last third of the run. Any run fails when
// the service's peak RSS passes --rss-peak-bound-mib / SOAK_RSS_PEAK_BOUND_MIB (384, the pod's budget).
import { fork, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Compile } from 'typebox/compile'
import { ConsoleAnswer } from '../schemas/console.ts'
import { ErrorBody } from '../schemas/errors.ts'
import { Profile } from '../schemas/profile.ts'
import { signToken } from '../sandbox/sign.ts'
import { startFaultUpstream, MiB, type Fault } from '../sandbox/faults.ts'
import { seededClients, unknownClient } from '../sandbox/seed.ts'
import { operationNames, type OperationName } from '../schemas/operations.ts'
import { startEnv, startFlags } from '../scripts/start-command.ts'

const DOCUMENTED = new Set([200, 400, 401, 404, 413, 415, 429, 502, 503, 504])
/** Longer than the service's profile budget (2.5 s): no request timer is pending when memory is read. */
const SETTLE_MS = 3000

interface Memory { rss: number, heapUsed: number, heapTotal: number, external: number, peakRss: number }
/** process.memoryUsage() as the service is, no GC forced: what a per-minute sample shows. */
interface Sample {
  rss: number, heapUsed: number, heapTotal: number, external: number, arrayBuffers: number, peakRss: number
}
interface Ask { id: number, op: 'memory' | 'sample' | 'close' }
const SAMPLES_OUT = fileURLToPath(new URL('soak-samples.json', import.meta.url))

// ---------------------------------------------------------------- the service, in the child process

async function serve (): Promise<void> {
  const { buildApp } = await import('../src/app.ts')
  const { loadConfig } = await import('../src/config.ts')
  const app = await buildApp(loadConfig(process.env))
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()) }, 50)
  // A last-resort major GC also gives back the heap pages V8 would otherwise keep for later.
  const gc = (globalThis as { gc?: (options: object) => void }).gc
  process.on('message', async ({ id, op }: Ask) => {
    if (op === 'sample') {
      const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
      process.send!({ id, value: { rss, heapUsed, heapTotal, external, arrayBuffers, peakRss } satisfies Sample })
      return
    }
    if (op === 'memory') {
      gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' })
      const { rss, heapUsed, heapTotal, external } = process.memoryUsage()
      process.send!({ id, value: { rss, heapUsed, heapTotal, external, peakRss } satisfies Memory })
      return
    }
    clearInterval(sampler)
    await app.close()
    process.send!({ id, value: null }, () => process.exit(0))
  })
  process.once('disconnect', () => process.exit(0))
  process.send!({ ready: url })
}

// ---------------------------------------------------------------- the soak, in the parent process

function options () {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      concurrency: { type: 'string' },
      'fault-rate': { type: 'string' },
      'rss-bound-mib': { type: 'string' },
      warmup: { type: 'string' },
      faults: { type: 'string' },
      'sample-every': { type: 'string' },
      'samples-out': { type: 'string' },
      'rss-last-third-bound-mib': { type: 'string' },
      'rss-peak-bound-mib': { type: 'string' }
    }
  })
  const num = (arg: string | undefined, env: string, fallback: number) => {
    const value = Number(arg ?? process.env[env] ?? fallback)
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`${env} must be a non-negative number`)
    return value
  }
  const durationS = num(values.duration, 'SOAK_DURATION_S', 60)
  return {
    durationS,
    concurrency: Math.max(1, Math.floor(num(values.concurrency, 'SOAK_CONCURRENCY', 16))),
    faultRate: Math.min(1, num(values['fault-rate'], 'SOAK_FAULT_RATE', 0.25)),
    rssBoundMiB: num(values['rss-bound-mib'], 'SOAK_RSS_BOUND_MIB', 50),
    warmupS: num(values.warmup, 'SOAK_WARMUP_S', Math.min(10, Math.max(2, durationS / 6))),
    faults: faultsNamed(values.faults ?? process.env.SOAK_FAULTS),
    sampleEveryS: num(values['sample-every'], 'SOAK_SAMPLE_S', 0),
    samplesOut: values['samples-out'] ?? process.env.SOAK_SAMPLES_OUT ?? SAMPLES_OUT,
    rssLastThirdBoundMiB: num(values['rss-last-third-bound-mib'], 'SOAK_RSS_LAST_THIRD_BOUND_MIB', 2),
    // The RSS budget of a pod with a 512 Mi memory limit (docs/performance.md, The memory settings).
    rssPeakBoundMiB: num(values['rss-peak-bound-mib'], 'SOAK_RSS_PEAK_BOUND_MIB', 384)
  }
}

const secret = () => randomBytes(24).toString('base64url')
const pick = <T> (items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!

/** The faults injected into upstream calls, by weight; anything else is the sandbox's normal answer. */
const FAULTS: Array<{ kind: Fault['kind'], weight: number, make: () => Fault }> = [
  { kind: 'slow', weight: 5, make: () => ({ kind: 'slow', ms: 50 + Math.floor(Math.random() * 1500) }) },
  { kind: 'status', weight: 4, make: () => ({ kind: 'status', status: pick([500, 502, 503]) }) },
  { kind: 'reset', weight: 3, make: () => ({ kind: 'reset' }) },
  { kind: 'garbage_json', weight: 3, make: () => ({ kind: 'garbage_json' }) },
  { kind: 'wrong_type', weight: 2, make: () => ({ kind: 'wrong_type' }) },
  // Twice the service's 1 MiB cap: enough to be refused, cheap to serve thousands of times.
  { kind: 'huge', weight: 1, make: () => ({ kind: 'huge', bytes: 2 * MiB }) },
  {
    kind: 'redirect_loop',
    weight: 1,
    make: () => ({ kind: 'redirect_loop', mode: pick(['self', 'ping_pong'] as const) })
  },
  { kind: 'cross_origin', weight: 1, make: () => ({ kind: 'cross_origin' }) }
]

/** The faults a comma list names (`none` for none); all when unset. */
function faultsNamed (list: string | undefined): typeof FAULTS {
  if (list === undefined) return FAULTS
  const names = list.split(',').map(name => name.trim()).filter(name => name !== '' && name !== 'none')
  const unknown = names.filter(name => !FAULTS.some(f => f.kind === name))
  if (unknown.length > 0) {
    const known = FAULTS.map(f => f.kind).join(', ')
    throw new RangeError(`unknown fault kinds ${unknown.join(', ')}; known: ${known}, none`)
  }
  return FAULTS.filter(f => names.includes(f.kind))
}

function randomFault (rate: number, faults: typeof FAULTS): Fault {
  if (faults.length === 0 || Math.random() >= rate) return { kind: 'normal' }
  let roll = Math.random() * faults.reduce((sum, f) => sum + f.weight, 0)
  for (const fault of faults) {
    roll -= fault.weight
    if (roll < 0) return fault.make()
  }
  return { kind: 'normal' }
}

interface Shot { kind: string, method?: string, path: string, headers: Record<string, string>, body?: string }

/** npm start's environment, its compile cache as an absolute path (npm start runs in the project root). */
function startEnvironment (): Record<string, string> {
  const env = startEnv()
  if (env.NODE_COMPILE_CACHE !== undefined) {
    env.NODE_COMPILE_CACHE = fileURLToPath(new URL(`../${env.NODE_COMPILE_CACHE}`, import.meta.url))
  }
  return env
}

function startChild (env: Record<string, string>, onLogLine: (line: string) => void) {
  const child: ChildProcess = fork(import.meta.filename, [], {
    // npm start's environment and node flags, so its RSS is production's; --expose-gc for the readings.
    env: { ...startEnvironment(), ...env, SOAK_ROLE: 'service' },
    execArgv: [...startFlags(), '--expose-gc'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  createInterface({ input: child.stdout! }).on('line', onLogLine)
  createInterface({ input: child.stderr! }).on('line', onLogLine)
  const pending = new Map<number, (value: unknown) => void>()
  let nextId = 1
  const ready = new Promise<string>((resolve, reject) => {
    child.on('message', (message: { ready?: string, id?: number, value?: unknown }) => {
      if (message.ready !== undefined) return resolve(message.ready)
      pending.get(message.id!)?.(message.value)
      pending.delete(message.id!)
    })
    child.once('exit', code => reject(new Error(`the service exited (code ${code}) before it was ready`)))
  })
  const ask = <T> (op: Ask['op']) => new Promise<T>(resolve => {
    const id = nextId++
    pending.set(id, resolve as (value: unknown) => void)
    child.send({ id, op } satisfies Ask)
  })
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  return { ready, ask, exited, kill: () => child.kill('SIGKILL') }
}

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}

async function soak (): Promise<number> {
  const opts = options()
  const keys = { passport: secret(), dealer: secret() }
  const jwtSecret = secret()
  const consoleKey = secret()
  const metricsKey = secret()

  const upstream = await startFaultUpstream({ keys })
  const injected: Record<string, number> = {}
  for (const name of operationNames) {
    upstream.set(name, () => {
      const fault = randomFault(opts.faultRate, opts.faults)
      injected[fault.kind] = (injected[fault.kind] ?? 0) + 1
      return fault
    })
  }

  const tokenOf = (who: { uid_client: string, login: string, vendor: string }, signWith = jwtSecret, now?: number) =>
    signToken(
      { sub: who.uid_client, login: who.login, vendor: who.vendor },
      signWith,
      now === undefined ? {} : { now, ttlSeconds: 60 }
    )
  const seededTokens = seededClients.map(c => tokenOf(c.identity))
  const unknownToken = tokenOf(unknownClient)
  const secrets: Record<string, string> = {
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    AUTH_JWT_SECRET: jwtSecret,
    CONSOLE_API_KEY: consoleKey,
    METRICS_API_KEY: metricsKey,
    ...Object.fromEntries(seededTokens.map((token, i) => [`token ${i} signature`, token.split('.')[2]!]))
  }

  // The log: scanned line by line as it arrives, kept only as counts.
  const log = { lines: 0, byLevel: {} as Record<string, number>, leaks: [] as string[] }
  const onLogLine = (line: string) => {
    log.lines++
    const level = /"level":(\d+)/.exec(line)?.[1] ?? 'text'
    log.byLevel[level] = (log.byLevel[level] ?? 0) + 1
    for (const [name, value] of Object.entries(secrets)) {
      if (line.includes(value)) log.leaks.push(`${name} in a log line`)
    }
  }

  const service = startChild({
    PATH: process.env.PATH ?? '',
    UPSTREAM_URL: upstream.url,
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    AUTH_JWT_SECRET: jwtSecret,
    CONSOLE_API_KEY: consoleKey,
    METRICS_API_KEY: metricsKey,
    LOG_LEVEL: 'debug',
    UPSTREAM_TIMEOUT_MS: '1000',
    PROFILE_TIMEOUT_MS: '2500',
    // The soak is one caller address and a few clients at thousands of requests a minute.
    RATE_LIMIT_PROFILE_PER_MINUTE: '1000000',
    RATE_LIMIT_CONSOLE_PER_MINUTE: '1000000',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000'
  }, onLogLine)
  const base = await service.ready
  const startMemory = await service.ask<Memory>('memory')

  const isError = Compile(ErrorBody)
  const isProfile = Compile(Profile)
  const isConsole = Compile(ConsoleAnswer)
  const profile = (kind: string, authorization?: string): Shot =>
    ({ kind, path: '/api/users/profile', headers: authorization === undefined ? {} : { authorization } })
  const consoleShot = (kind: string, body: string, headers: Record<string, string> = {}): Shot =>
    ({
      kind,
      method: 'POST',
      path: '/request-console',
      headers: { 'content-type': 'application/json', 'x-console-key': consoleKey, ...headers },
      body
    })
  const validConsole = () => {
    const operation: OperationName = pick(operationNames)
    const who = Math.random() < 0.8 ? pick(seededClients).identity : unknownClient
    const params = operation === 'passport.get_client' ? who : { uid_client: who.uid_client }
    return JSON.stringify({ operation, params })
  }
  const shots: Array<[number, () => Shot]> = [
    [40, () => profile('profile', `Bearer ${pick(seededTokens)}`)],
    [8, () => profile('profile unknown', `Bearer ${unknownToken}`)],
    [3, () => profile('token expired',
      `Bearer ${tokenOf(pick(seededClients).identity, jwtSecret, Date.now() - 3_600_000)}`)],
    [3, () => profile('token forged', `Bearer ${tokenOf(pick(seededClients).identity, secret() + secret())}`)],
    [3, () => profile('token garbage',
      pick(['Bearer x.y.z', 'Bearer ', `Basic ${randomUUID()}`, `Bearer ${randomBytes(40).toString('base64url')}`]))],
    [2, () => profile('token missing')],
    [20, () => consoleShot('console', validConsole())],
    [2, () => consoleShot('console bad key', validConsole(), { 'x-console-key': secret() })],
    [2, () => consoleShot('console bad body', pick([
      '{', '{"operation":"nope","params":{}}', '[]', '{"operation":"dealer.client","params":{"uid_client":"x"}}'
    ]))],
    [1, () => consoleShot('console wrong type', validConsole(), { 'content-type': 'text/plain' })],
    [1, () => consoleShot('console too large',
      JSON.stringify({ operation: 'dealer.client', params: { uid_client: 'A'.repeat(20_000) } }))],
    [2, () => ({ kind: 'metrics', path: '/metrics', headers: { authorization: `Bearer ${metricsKey}` } })]
  ]
  const shotWeight = shots.reduce((sum, [w]) => sum + w, 0)
  const nextShot = (): Shot => {
    let roll = Math.random() * shotWeight
    for (const [weight, make] of shots) {
      roll -= weight
      if (roll < 0) return make()
    }
    return shots[0]![1]()
  }

  const byStatus = new Map<string, number>()
  const byKind = new Map<string, number[]>()
  const problems = new Map<string, { count: number, example: string }>()
  const problem = (what: string, example: string) => {
    const seen = problems.get(what) ?? { count: 0, example }
    seen.count++
    problems.set(what, seen)
  }
  const latencies: number[] = []
  let total = 0

  async function fire (shot: Shot): Promise<void> {
    const started = performance.now()
    let res: Response
    let text: string
    try {
      res = await fetch(base + shot.path, {
        method: shot.method ?? 'GET',
        headers: shot.headers,
        body: shot.body,
        signal: AbortSignal.timeout(30_000)
      })
      text = await res.text()
    } catch (error) {
      problem('transport error', `${shot.kind}: ${(error as Error).message}`)
      return
    }
    const ms = performance.now() - started
    total++
    latencies.push(ms)
    const kindLatencies = byKind.get(shot.kind) ?? []
    kindLatencies.push(ms)
    byKind.set(shot.kind, kindLatencies)
    let body: unknown = text
    if (shot.kind !== 'metrics') {
      try {
        body = JSON.parse(text)
      } catch {
        problem('body not JSON', `${shot.kind} ${res.status}: ${text.slice(0, 120)}`)
      }
    }
    const code = res.status >= 400 && isError.Check(body) ? body.code : '-'
    const key = `${res.status} ${code}`
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1)
    if (!DOCUMENTED.has(res.status)) problem('undocumented status', `${shot.kind} ${res.status}: ${text.slice(0, 200)}`)
    if (code === 'INTERNAL_ERROR') problem('unmapped error (500 INTERNAL_ERROR)', shot.kind)
    if (res.status >= 400 && !(isError.Check(body) && body.statusCode === res.status)) {
      problem('malformed error body', `${shot.kind} ${res.status}: ${text.slice(0, 200)}`)
    }
    if (res.status === 200 && shot.kind.startsWith('profile') && !isProfile.Check(body)) {
      problem('profile breaks its schema', shot.kind)
    }
    if (res.status === 200 && shot.kind === 'console' && !isConsole.Check(body)) {
      problem('console answer breaks its schema', shot.kind)
    }
    if (!res.headers.get('x-request-id')) problem('no x-request-id', `${shot.kind} ${res.status}`)
    const head = JSON.stringify([...res.headers])
    for (const [name, value] of Object.entries(secrets)) {
      // The metrics key is the caller's own credential there; it must still not come back.
      if (text.includes(value) || head.includes(value)) problem(`${name} in an answer`, `${shot.kind} ${res.status}`)
    }
  }

  const runFor = async (seconds: number) => {
    const end = Date.now() + seconds * 1000
    await Promise.all(Array.from({ length: opts.concurrency }, async () => {
      while (Date.now() < end) await fire(nextShot())
    }))
  }

  const settle = () => new Promise(resolve => setTimeout(resolve, SETTLE_MS))
  let peak = startMemory.rss
  let runSeconds = 0
  let warmedRequests = 0
  // No GC forced here: a full GC every few seconds is not what production runs.
  const sampler = setInterval(() => {
    service.ask<Sample>('sample').then(m => { peak = Math.max(peak, m.peakRss) })
  }, 5000)
  const samples: Array<{ t: number } & Sample> = []
  const mibOf = (bytes: number) => (bytes / MiB).toFixed(1)
  let sampledFrom = 0
  const takeSample = async () => {
    const t = Math.round((performance.now() - sampledFrom) / 100) / 10
    const sample = { t, ...await service.ask<Sample>('sample') }
    samples.push(sample)
    peak = Math.max(peak, sample.peakRss)
    process.stdout.write(`sample ${String(sample.t).padStart(7)} s  rss ${mibOf(sample.rss)} MiB  ` +
      `heap used ${mibOf(sample.heapUsed)} MiB  external ${mibOf(sample.external)} MiB  ` +
      `array buffers ${mibOf(sample.arrayBuffers)} MiB\n`)
  }
  let sampleTimer: NodeJS.Timeout | undefined
  let warmMemory!: Memory
  let endMemory!: Memory
  try {
    const faults = opts.faults.map(f => f.kind).join(', ') || 'none'
    process.stdout.write(`soak: ${opts.durationS} s, ${opts.concurrency} concurrent, faults (${faults}) ` +
      `on ${Math.round(opts.faultRate * 100)}% of upstream calls, warm-up ${opts.warmupS} s\n`)
    const runStarted = performance.now()
    if (opts.sampleEveryS > 0) {
      sampledFrom = runStarted
      await takeSample()
      sampleTimer = setInterval(() => { takeSample().catch(() => {}) }, opts.sampleEveryS * 1000)
    }
    await runFor(opts.warmupS)
    // Measured once the last answers' timers have fired and the log has drained, after a full GC.
    await settle()
    warmMemory = await service.ask<Memory>('memory')
    const warmedFrom = total
    await runFor(Math.max(0, opts.durationS - opts.warmupS))
    runSeconds = (performance.now() - runStarted) / 1000
    warmedRequests = total - warmedFrom
    // The last sample is the end of the load, whatever the interval.
    clearInterval(sampleTimer)
    if (opts.sampleEveryS > 0) await takeSample()
    await settle()
    endMemory = await service.ask<Memory>('memory')
    peak = Math.max(peak, endMemory.peakRss)
  } finally {
    clearInterval(sampler)
    clearInterval(sampleTimer)
    const timer = setTimeout(() => service.kill(), 15_000)
    await service.ask('close').catch(() => {})
    await service.exited
    clearTimeout(timer)
    await upstream.close()
  }
  if (log.leaks.length > 0) problem('secret in the log', log.leaks[0]!)

  // ---------------------------------------------------------------- the summary
  const mib = (bytes: number) => (bytes / MiB).toFixed(1)
  const growth = endMemory.rss - warmMemory.rss
  if (growth > opts.rssBoundMiB * MiB) {
    problem('RSS growth over the bound', `${mib(growth)} MiB > ${opts.rssBoundMiB} MiB`)
  }
  if (peak > opts.rssPeakBoundMiB * MiB) {
    problem('peak RSS over the bound', `${mib(peak)} MiB > ${opts.rssPeakBoundMiB} MiB`)
  }
  // RSS over the last third of the run: the first sample in it against the last (the end of the load).
  let lastThird: { fromS: number, toS: number, rssGrowthMiB: number, boundMiB: number } | undefined
  if (samples.length > 0) {
    const last = samples.at(-1)!
    const first = samples.find(sample => sample.t >= last.t * 2 / 3)!
    if (first !== last) {
      const growthMiB = Math.round((last.rss - first.rss) / MiB * 100) / 100
      lastThird = { fromS: first.t, toS: last.t, rssGrowthMiB: growthMiB, boundMiB: opts.rssLastThirdBoundMiB }
      if (growthMiB > opts.rssLastThirdBoundMiB) {
        problem('RSS growth over the last third past the bound',
          `${growthMiB} MiB from ${first.t} s to ${last.t} s > ${opts.rssLastThirdBoundMiB} MiB`)
      }
    }
    const round = (bytes: number) => Math.round(bytes / MiB * 100) / 100
    await writeFile(opts.samplesOut, JSON.stringify({
      generatedAt: new Date().toISOString(),
      settings: {
        durationS: opts.durationS,
        concurrency: opts.concurrency,
        faultRate: opts.faultRate,
        warmupS: opts.warmupS,
        sampleEveryS: opts.sampleEveryS,
        memory: 'process.memoryUsage() in the service process over IPC, no GC forced; MiB'
      },
      lastThird: lastThird ?? null,
      peakRssMiB: round(peak),
      samples: samples.map(({ t, rss, heapUsed, heapTotal, external, arrayBuffers }) => ({
        t,
        rssMiB: round(rss),
        heapUsedMiB: round(heapUsed),
        heapTotalMiB: round(heapTotal),
        externalMiB: round(external),
        arrayBuffersMiB: round(arrayBuffers)
      }))
    }, null, 2) + '\n')
  }
  const sorted = [...latencies].sort((a, b) => a - b)
  const fmt = (ms: number) => ms.toFixed(1).padStart(8)
  const lines: string[] = []
  const rate = (total / Math.max(1, runSeconds)).toFixed(0)
  lines.push('', `requests: ${total} in ${runSeconds.toFixed(1)} s (${rate}/s)`, '')
  lines.push('status  code                        count')
  for (const [key, count] of [...byStatus].sort()) {
    const [status, code] = key.split(' ')
    lines.push(`${status!.padEnd(8)}${code!.padEnd(28)}${String(count).padStart(5)}`)
  }
  lines.push('', 'kind                  count   p50 ms   p99 ms')
  const latencyLine = (kind: string, s: number[]) =>
    `${kind.padEnd(20)}${String(s.length).padStart(7)}${fmt(percentile(s, 0.5))} ${fmt(percentile(s, 0.99))}`
  for (const [kind, values] of [...byKind].sort()) lines.push(latencyLine(kind, values.sort((a, b) => a - b)))
  lines.push(latencyLine('all', sorted))
  lines.push('', `upstream requests: ${Object.entries(upstream.counts()).map(([op, n]) => `${op} ${n}`).join(', ')}`)
  lines.push(`upstream behaviours: ${Object.entries(injected).sort().map(([kind, n]) => `${kind} ${n}`).join(', ')}`)
  lines.push('', `service RSS (after gc): start ${mib(startMemory.rss)} MiB, ` +
    `after warm-up ${mib(warmMemory.rss)} MiB, end ${mib(endMemory.rss)} MiB, peak ${mib(peak)} MiB ` +
    `(bound ${opts.rssPeakBoundMiB} MiB)`)
  lines.push(`RSS growth after warm-up: ${mib(growth)} MiB (bound ${opts.rssBoundMiB} MiB)`)
  // Not a bound (a short run is too noisy for one), but what a slow leak shows first: run longer to see it.
  const perRequest = (endMemory.heapUsed - warmMemory.heapUsed) / Math.max(1, warmedRequests)
  lines.push(`heap used ${mib(warmMemory.heapUsed)} -> ${mib(endMemory.heapUsed)} MiB ` +
    `(${perRequest.toFixed(0)} B per request after warm-up), ` +
    `heap total ${mib(warmMemory.heapTotal)} -> ${mib(endMemory.heapTotal)} MiB, ` +
    `external ${mib(warmMemory.external)} -> ${mib(endMemory.external)} MiB`)
  if (samples.length > 0) {
    lines.push(lastThird === undefined
      ? `RSS over the last third: not measured (${samples.length} samples; sample more often than a third of the run)`
      : `RSS over the last third (${lastThird.fromS} s to ${lastThird.toS} s): ${lastThird.rssGrowthMiB} MiB ` +
        `(bound ${lastThird.boundMiB} MiB); ${samples.length} samples in ${opts.samplesOut}`)
  }
  const levels = Object.entries(log.byLevel).map(([level, n]) => `level ${level}: ${n}`).join(', ')
  lines.push(`log: ${log.lines} lines (${levels}), secrets found: ${log.leaks.length}`)
  lines.push('')
  if (problems.size === 0) {
    lines.push('PASS: no unmapped or undocumented answer, every error body exact, ' +
      'no secret in any answer or log line, RSS within bound')
  } else {
    lines.push('FAIL:')
    for (const [what, { count, example }] of problems) lines.push(`  ${what}: ${count} (e.g. ${example})`)
  }
  process.stdout.write(lines.join('\n') + '\n')
  return problems.size === 0 ? 0 : 1
}

if (import.meta.main) {
  if (process.env.SOAK_ROLE === 'service') await serve()
  else {
    try {
      // Explicitly: fetch's idle keep-alive sockets would hold the process a few seconds more.
      process.exit(await soak())
    } catch (error) {
      if (!(error instanceof RangeError)) throw error
      process.stderr.write(`soak: ${error.message}\n`)
      process.exit(2)
    }
  }
}
