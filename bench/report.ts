// What the bench makes of its runs: per scenario the median and spread of every measure, the issue's
// targets with measured value and verdict, the tables it prints, and bench/report.json (the latest run
// only: earlier runs are in git history).
import { writeFile } from 'node:fs/promises'
import type { ThreadCpu } from './meters.ts'

/** A scenario: `a`, `b50` of the service, `fa`, `fb50` of the floor, `a@metrics` an option, `a@flags3` a flag set. */
export type ScenarioId = string

/** What a scenario measures: the service, the floor, a priced option, a V8 flag set, or a calibration. */
export type ScenarioGroup = 'service' | 'floor' | 'option' | 'flags' | 'calibration'

export interface ScenarioInfo {
  id: ScenarioId
  title: string
  method: 'GET' | 'POST'
  path: string
  connections: number
  delayMs: number
  /** Upstream exchanges one request should cost (3 for a profile), null for the trivial route. */
  expectedUpstream: number | null
  /** The process the load goes to: `service`, `floor`, a variant's process, or `sandbox` to calibrate. */
  target: string
  group: ScenarioGroup
  /** For an option or a flag set: what it is (the env it sets, the node flags). */
  variant?: string
  /** The clients a profile scenario sends (bench/clients.ts): `default` (500), `many` (5000), `large` (300 cars). */
  clients?: 'default' | 'many' | 'large'
  /** How the callers' tokens are signed: HS256 with the service's secret, or by a key set (AUTH_JWKS_URL). */
  token?: 'HS256' | 'RS256' | 'ES256'
  /** The Accept-Encoding the load sends; none when unset. */
  encoding?: 'br' | 'gzip'
  /** The upstream is the sandbox over https (a certificate made for the run). */
  tls?: true
  /** Measured rounds, when fewer than the bench's: a scenario that prices or shows a shape, not a target. */
  rounds?: number
}

/** One measured run of one scenario. */
export interface Run {
  scenario: ScenarioId
  round: number
  requests: number
  seconds: number
  rps: number
  p50: number
  p90: number
  p99: number
  max: number
  errors: number
  timeouts: number
  non2xx: number
  mismatches: number
  /** Requests the service counted itself; equals `requests` when no request was lost on the way. */
  served: number
  /** Upstream HTTP requests (307 hops included) the sandbox counted, per request served. */
  upstreamPerRequest: number
  /** The 307 hops among them, per request served (0 once the client has learned the slash paths). */
  redirectsPerRequest: number
  /** CPU (user + system) of the process under load, per request served. */
  cpuUsPerRequest: number
  /**
   * The same CPU by thread, per request served: the main thread's user and system time, V8's worker threads
   * (parallel and concurrent GC, background compilation), libuv's pool and the rest; null off Linux.
   */
  threadUsPerRequest: ThreadCpu | null
  /** The collector's main-thread pause time over the run, as a share of the process's CPU time. */
  gcShare: number
  /** KiB allocated on the V8 heap per request served (load-independent). */
  allocatedKiBPerRequest: number
  /** Share of one core each process used during the run (`service`: the process under load): contention shows here. */
  cpuShare: { service: number, sandbox: number, bench: number }
  peakRssMiB: number
  /** TLS handshakes the sandbox completed over the run per 1000 requests served (https scenarios only). */
  tlsConnectionsPer1000: number | null
  /** The V8 heap and external memory in the sample with the highest RSS. */
  memoryAtPeak: { heapTotalMiB: number, heapUsedMiB: number, externalMiB: number }
}

export interface Memory {
  /** RSS of the service once listening, before any request. */
  rssAtReadyMiB: number
  heapUsedAtReadyMiB: number
  /** getrusage maxrss at the end: the highest RSS the process ever had. */
  lifetimeMaxRssMiB: number
  /** The same of the service process that served the 200-connection scenario alone (b200), when it ran. */
  at200ConnectionsMaxRssMiB?: number
  /** The same of the service process that served the trivial route (c) and the console (d), when they ran. */
  otherRoutesMaxRssMiB?: number
  /** The same of the service processes of the large profiles (l50), the 5000 clients (m) and https (t50). */
  largeProfileMaxRssMiB?: number
  manyClientsMaxRssMiB?: number
  tlsMaxRssMiB?: number
}

export interface Spread { median: number, min: number, max: number }

export interface ScenarioSummary extends ScenarioInfo {
  runs: number
  rps: Spread
  p50: Spread
  p90: Spread
  p99: Spread
  cpuUsPerRequest: Spread
  gcShare: Spread
  /** CPU of V8's worker threads (GC helpers, background compilation) per request; null off Linux. */
  v8ThreadsUsPerRequest: Spread | null
  allocatedKiBPerRequest: Spread
  upstreamPerRequest: Spread
  redirectsPerRequest: Spread
  peakRssMiB: Spread
  tlsConnectionsPer1000: Spread | null
  cpuShare: { service: number, sandbox: number, bench: number }
  /** Summed over all runs. */
  errors: number
  non2xx: number
}

export interface Target {
  id: string
  /** Not one of the targets: shown for what it explains. */
  informational?: true
  description: string
  limit: string
  measured: string
  pass: boolean
}

export interface Machine {
  cpuModel: string
  cores: number
  node: string
  platform: string
  totalMemGiB: number
  loadAverageAtStart: number[]
}

export interface Report {
  generatedAt: string
  commit: string
  label: string
  machine: Machine
  settings: Record<string, unknown>
  /** The service's, when the run had the service (not in the flags sweep). */
  memory: Memory | undefined
  /** The kernel's lifetime peak RSS of each measured process. */
  lifetimeMaxRssMiB: LifetimeRss
  /** Whether each priced option was on in its process, and how the bench knows. */
  options: Array<{ option: string, title: string, active: boolean, evidence: string }>
  scenarios: ScenarioSummary[]
  targets: Target[]
  /** Warn-level (or worse) log lines the service wrote during the measured rounds. */
  serviceWarnings: { count: number, first: string[] }
  /** The same, per measured process. */
  warnings: Record<string, { count: number, first: string[] }>
  runs: Run[]
}

export function median (values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function spread (values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
}

/**
 * The service's measure over the floor's, round by round (each floor run follows its service run by seconds, so a
 * pair shares the box's state): shown beside the ratio of the medians the verdict uses, which the box's drift
 * between rounds can move. Empty when the two ran different rounds.
 */
function roundByRound (runs: Run[], service: string, floor: string, pick: (run: Run) => number): string {
  const ratios: string[] = []
  for (const run of runs.filter(r => r.scenario === service)) {
    const pair = runs.find(r => r.scenario === floor && r.round === run.round)
    if (pair !== undefined && pick(pair) > 0) ratios.push((pick(run) / pick(pair)).toFixed(2))
  }
  return ratios.length < 2 ? '' : `; round by round ${ratios.join(', ')} ×`
}

export function summarise (infos: ScenarioInfo[], runs: Run[]): ScenarioSummary[] {
  return infos.map(info => {
    const own = runs.filter(r => r.scenario === info.id)
    const of = (pick: (run: Run) => number) => spread(own.map(pick))
    return {
      ...info,
      runs: own.length,
      rps: of(r => r.rps),
      p50: of(r => r.p50),
      p90: of(r => r.p90),
      p99: of(r => r.p99),
      cpuUsPerRequest: of(r => r.cpuUsPerRequest),
      gcShare: of(r => r.gcShare),
      v8ThreadsUsPerRequest: own.length > 0 && own.every(r => r.threadUsPerRequest != null)
        ? of(r => r.threadUsPerRequest!.v8)
        : null,
      allocatedKiBPerRequest: of(r => r.allocatedKiBPerRequest),
      upstreamPerRequest: of(r => r.upstreamPerRequest),
      redirectsPerRequest: of(r => r.redirectsPerRequest),
      peakRssMiB: of(r => r.peakRssMiB),
      tlsConnectionsPer1000: own.length > 0 && own.every(r => r.tlsConnectionsPer1000 !== null)
        ? of(r => r.tlsConnectionsPer1000!)
        : null,
      cpuShare: {
        service: median(own.map(r => r.cpuShare.service)),
        sandbox: median(own.map(r => r.cpuShare.sandbox)),
        bench: median(own.map(r => r.cpuShare.bench))
      },
      errors: own.reduce((sum, r) => sum + r.errors + r.timeouts + r.mismatches, 0),
      non2xx: own.reduce((sum, r) => sum + r.non2xx, 0)
    }
  })
}

const fixed = (value: number, digits = 0) => value.toFixed(digits)
const percent = (s: Spread): Spread => ({ median: s.median * 100, min: s.min * 100, max: s.max * 100 })
const withSpread = (s: Spread, digits = 0) =>
  s.min === s.max
    ? fixed(s.median, digits)
    : `${fixed(s.median, digits)} (${fixed(s.min, digits)}–${fixed(s.max, digits)})`

/** The targets, each with its limit, the measured median and the verdict. */
export function evaluateTargets (summaries: ScenarioSummary[], allRuns: Run[], memory: Memory | undefined): Target[] {
  const by = new Map(summaries.map(s => [s.id, s]))
  const targets: Target[] = []
  for (const id of ['b50', 'b200', 'b5'] as const) {
    const s = by.get(id)
    if (s === undefined) continue
    const p50Limit = 2 * s.delayMs + 3
    const p99Limit = 2 * s.delayMs + 15
    // A closed loop's mean latency is connections / throughput (Little's law): once the CPU is saturated
    // the latency is queueing, and this figure says so.
    const meanMs = fixed(s.connections / s.rps.median * 1000)
    const queue = `closed loop: ${s.connections} connections / ${fixed(s.rps.median)} req/s = ${meanMs} ms mean`
    // The sandbox alone at the same delay: two of its answers in sequence are the floor of a profile here.
    const u = by.get('u5')
    const floor = id === 'b5' && u !== undefined
      ? `; the upstream alone: p50 ${fixed(u.p50.median)} ms, so two in sequence ${fixed(2 * u.p50.median)} ms`
      : ''
    const info = id === 'b5' ? { informational: true as const } : {}
    const label = id === 'b5' ? '(b) unsaturated, informational:' : '(b)'
    targets.push({
      id: `${id}-p50`,
      ...info,
      description: `${label} ${s.connections} connections, delay ${s.delayMs} ms: p50 within 2 × delay + 3 ms`,
      limit: `≤ ${p50Limit} ms`,
      measured: `${withSpread(s.p50)} ms (${queue}${floor})`,
      pass: s.p50.median <= p50Limit
    }, {
      id: `${id}-p99`,
      ...info,
      description: `${label} ${s.connections} connections, delay ${s.delayMs} ms: p99 within 2 × delay + 15 ms`,
      limit: `≤ ${p99Limit} ms`,
      measured: `${withSpread(s.p99)} ms`,
      pass: s.p99.median <= p99Limit
    })
  }
  const profiles = summaries.filter(s => s.expectedUpstream === 3)
  if (profiles.length > 0) {
    const runs = allRuns.filter(r => profiles.some(s => s.id === r.scenario))
    targets.push({
      id: 'upstream-per-profile',
      description: 'Exactly 3 upstream requests per profile after warm-up ' +
        `(${profiles.map(s => s.id).join(', ')}; 307 hops included; every run)`,
      limit: '= 3',
      measured: profiles.map(s => `${s.id} ${withSpread(s.upstreamPerRequest, 3)}`).join(', '),
      pass: runs.every(r => r.upstreamPerRequest === 3)
    })
  }
  const a = by.get('a')
  const c = by.get('c')
  if (a !== undefined && c !== undefined) {
    const ratio = a.cpuUsPerRequest.median / c.cpuUsPerRequest.median
    targets.push({
      id: 'cpu-profile-vs-trivial',
      informational: true,
      description: 'CPU per profile (a) at most 4 × the CPU per request of the trivial route (c), service process ' +
        '(an earlier issue\'s aim, below the floor)',
      limit: `≤ 4 × ${fixed(c.cpuUsPerRequest.median)} µs = ${fixed(4 * c.cpuUsPerRequest.median)} µs`,
      measured: `${fixed(a.cpuUsPerRequest.median)} µs (${ratio.toFixed(2)} ×)`,
      pass: ratio <= 4
    })
  }
  for (const pair of FLOOR_PAIRS) {
    const s = by.get(pair.service)
    const f = by.get(pair.floor)
    if (s === undefined || f === undefined) continue
    const info = pair.informational === true ? { informational: true as const } : {}
    const where = `${s.connections} connections, delay ${s.delayMs} ms, ${pair.shape} (${pair.service} against ${pair.floor})`
    const cpu = s.cpuUsPerRequest.median / f.cpuUsPerRequest.median
    const rounds = (pick: (run: Run) => number) => roundByRound(allRuns, pair.service, pair.floor, pick)
    targets.push({
      id: `cpu-vs-floor-${pair.service}`,
      ...info,
      description: `CPU per profile at most ${pair.cpu} × the floor's, ${where}`,
      limit: `≤ ${pair.cpu} × ${fixed(f.cpuUsPerRequest.median)} µs = ${fixed(pair.cpu * f.cpuUsPerRequest.median)} µs`,
      measured: `${withSpread(s.cpuUsPerRequest)} µs (${cpu.toFixed(2)} ×${rounds(r => r.cpuUsPerRequest)})`,
      pass: cpu <= pair.cpu
    })
    const rps = s.rps.median / f.rps.median
    targets.push({
      id: `throughput-vs-floor-${pair.service}`,
      ...info,
      description: `Throughput at least 0.85 × the floor's, ${where}`,
      limit: `≥ 0.85 × ${fixed(f.rps.median)} req/s = ${fixed(0.85 * f.rps.median)} req/s`,
      measured: `${withSpread(s.rps)} req/s (${rps.toFixed(2)} ×${rounds(r => r.rps)})`,
      pass: rps >= 0.85
    })
  }
  const tls = summaries.filter(s => s.tlsConnectionsPer1000 !== null)
  if (tls.length > 0) {
    targets.push({
      id: 'tls-connections',
      informational: true,
      description: 'New TLS connections to the upstream per 1000 profiles after warm-up ' +
        `(${tls.map(s => s.id).join(', ')}; the sandbox's handshakes): the keep-alive pool reuses its connections`,
      limit: '≤ 1',
      measured: tls.map(s => `${s.id} ${withSpread(s.tlsConnectionsPer1000!, 2)}`).join(', '),
      pass: tls.every(s => s.tlsConnectionsPer1000!.median <= 1)
    })
  }
  const errors = summaries.reduce((sum, s) => sum + s.errors, 0)
  const non2xx = summaries.reduce((sum, s) => sum + s.non2xx, 0)
  targets.push({
    id: 'no-errors',
    description: 'Zero errors and zero non-2xx answers in every run of every scenario',
    limit: '0',
    measured: `${errors} errors, ${non2xx} non-2xx`,
    pass: errors === 0 && non2xx === 0
  })
  if (memory === undefined) return targets
  const ofService = new Set(summaries.filter(s => s.target === 'service').map(s => s.id))
  const sampled = Math.max(0, ...allRuns.filter(r => ofService.has(r.scenario)).map(r => r.peakRssMiB))
  const peak = Math.max(sampled, memory.lifetimeMaxRssMiB)
  targets.push({
    id: 'peak-rss',
    description: 'Peak RSS of the service process with npm start\'s flags, at the issue\'s 50 connections ' +
      '(kernel maxrss over its whole life; RSS at ready in brackets)',
    limit: '< 150 MiB',
    measured: `${fixed(peak, 1)} MiB (at ready ${fixed(memory.rssAtReadyMiB, 1)} MiB)`,
    pass: peak < 150
  })
  const ownProcesses = [
    ['peak-rss-large', memory.largeProfileMaxRssMiB, false,
      'the large profiles (l50: 300 viewed cars, 50 connections, in a service process of its own)'],
    ['peak-rss-many', memory.manyClientsMaxRssMiB, false,
      'the 5000 clients (m: more than the token cache holds, in a service process of its own)'],
    ['peak-rss-tls', memory.tlsMaxRssMiB, true, 'the https upstream (t50, in a service process of its own)']
  ] as const
  for (const [id, peakOf, informational, what] of ownProcesses) {
    if (peakOf === undefined) continue
    targets.push({
      id,
      ...(informational ? { informational: true as const } : {}),
      description: `Peak RSS under ${what}, npm start's flags (kernel maxrss over its whole life)`,
      limit: '< 150 MiB',
      measured: `${fixed(peakOf, 1)} MiB`,
      pass: peakOf < 150
    })
  }
  if (memory.at200ConnectionsMaxRssMiB !== undefined) {
    targets.push({
      id: 'peak-rss-200',
      informational: true,
      description: 'Peak RSS at 200 connections ' +
        '(b200, in a service process of its own: four times the profiles in flight)',
      limit: '< 150 MiB',
      measured: `${fixed(memory.at200ConnectionsMaxRssMiB, 1)} MiB`,
      pass: memory.at200ConnectionsMaxRssMiB < 150
    })
  }
  if (memory.otherRoutesMaxRssMiB !== undefined) {
    targets.push({
      id: 'peak-rss-other',
      informational: true,
      description: 'Peak RSS under the trivial route\'s and the console\'s saturating loads ' +
        '(c, d, in a service process of their own)',
      limit: '< 150 MiB',
      measured: `${fixed(memory.otherRoutesMaxRssMiB, 1)} MiB`,
      pass: memory.otherRoutesMaxRssMiB < 150
    })
  }
  return targets
}

/**
 * Each service scenario and the floor's at the same load, with the CPU ratio it must stay within (issue
 * 26: 1.3 × at 3 viewed cars, 1.5 × at 300). The https and 5000-client shapes are shown against the same
 * limit but are not yet targets of their own.
 */
export const FLOOR_PAIRS: ReadonlyArray<{
  service: ScenarioId, floor: ScenarioId, cpu: number, shape: string, informational?: true
}> = [
  { service: 'a', floor: 'fa', cpu: 1.3, shape: '3 viewed cars' },
  { service: 'b50', floor: 'fb50', cpu: 1.3, shape: '3 viewed cars' },
  { service: 'l50', floor: 'fl50', cpu: 1.5, shape: '300 viewed cars' },
  { service: 't50', floor: 'ft50', cpu: 1.3, shape: 'https upstream', informational: true },
  { service: 'm', floor: 'fm', cpu: 1.3, shape: '5000 clients', informational: true }
]

/** The floor a scenario compares with: its pair's, or (an option, a flag set) its base scenario's pair's. */
export function floorOf (id: ScenarioId): ScenarioId | undefined {
  const base = id.split('@')[0]
  return FLOOR_PAIRS.find(p => p.service === base)?.floor
}

const HEADER = [
  'scenario', 'conns', 'delay', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'err/non2xx', 'upstream/req', 'CPU µs/req',
  'GC % of CPU', 'KiB alloc/req', 'peak RSS MiB', 'TLS conns/1k req', 'CPU share svc/sbx/bench'
]

function row (s: ScenarioSummary): string[] {
  const share = s.cpuShare
  return [
    `${s.id}: ${s.title}`,
    String(s.connections),
    `${s.delayMs} ms`,
    withSpread(s.rps),
    withSpread(s.p50),
    withSpread(s.p90),
    withSpread(s.p99),
    `${s.errors}/${s.non2xx}`,
    // An option's count is shown even when it has no expected value (PROFILE_FRESH_S: below 3 by design).
    s.expectedUpstream === null && s.group !== 'option' ? '–' : withSpread(s.upstreamPerRequest, 2),
    s.target === 'sandbox' ? '–' : withSpread(s.cpuUsPerRequest),
    s.target === 'sandbox' ? '–' : withSpread(percent(s.gcShare)),
    s.target === 'sandbox' ? '–' : withSpread(s.allocatedKiBPerRequest, 1),
    withSpread(s.peakRssMiB, 1),
    s.tlsConnectionsPer1000 === null ? '–' : withSpread(s.tlsConnectionsPer1000, 2),
    `${fixed(share.service * 100)}/${fixed(share.sandbox * 100)}/${fixed(share.bench * 100)} %`
  ]
}

/** A fixed-width table for the terminal. */
export function textTable (summaries: ScenarioSummary[]): string {
  return renderText(HEADER, summaries.map(row))
}

export function markdownTable (summaries: ScenarioSummary[]): string {
  return renderMarkdown(HEADER, summaries.map(row))
}

/** The kernel's lifetime peak RSS of each measured process (MiB), by process name. */
export type LifetimeRss = Record<string, number>

const SIDE_HEADER = [
  'run', 'CPU µs/profile', '× floor', 'req/s', 'p50 ms', 'p99 ms', 'peak RSS MiB', 'GC % of CPU',
  'V8 threads µs/profile', 'KiB alloc/profile',
  'upstream/profile', 'TLS conns/1k', 'err/non2xx'
]

function sideRow (name: string, s: ScenarioSummary, floor: ScenarioSummary | undefined, rss: LifetimeRss): string[] {
  return [
    name,
    withSpread(s.cpuUsPerRequest),
    floor === undefined ? '–' : `${(s.cpuUsPerRequest.median / floor.cpuUsPerRequest.median).toFixed(2)} ×`,
    withSpread(s.rps),
    withSpread(s.p50),
    withSpread(s.p99),
    fixed(rss[s.target] ?? s.peakRssMiB.max, 1),
    withSpread(percent(s.gcShare)),
    s.v8ThreadsUsPerRequest === null ? '–' : withSpread(s.v8ThreadsUsPerRequest),
    withSpread(s.allocatedKiBPerRequest, 1),
    withSpread(s.upstreamPerRequest, 2),
    s.tlsConnectionsPer1000 === null ? '–' : withSpread(s.tlsConnectionsPer1000, 2),
    `${s.errors}/${s.non2xx}`
  ]
}

function ratioRow (s: ScenarioSummary, f: ScenarioSummary, rss: LifetimeRss): string[] {
  const r = (x: number, y: number, digits = 2) => y === 0 ? '–' : `${(x / y).toFixed(digits)} ×`
  return [
    'service / floor',
    r(s.cpuUsPerRequest.median, f.cpuUsPerRequest.median),
    '',
    r(s.rps.median, f.rps.median),
    r(s.p50.median, f.p50.median),
    r(s.p99.median, f.p99.median),
    r(rss[s.target] ?? s.peakRssMiB.max, rss[f.target] ?? f.peakRssMiB.max),
    r(s.gcShare.median, f.gcShare.median),
    s.v8ThreadsUsPerRequest === null || f.v8ThreadsUsPerRequest === null
      ? ''
      : r(s.v8ThreadsUsPerRequest.median, f.v8ThreadsUsPerRequest.median),
    r(s.allocatedKiBPerRequest.median, f.allocatedKiBPerRequest.median),
    '',
    '',
    ''
  ]
}

/**
 * Rows side by side: the floor and the service at each load and shape, with their ratio; then each priced
 * option and each V8 flag set of the run against the floor of its base scenario (`a@br` against `fa`).
 */
export function sideBySide (summaries: ScenarioSummary[], rss: LifetimeRss): string[][] {
  const by = new Map(summaries.map(s => [s.id, s]))
  const rows: string[][] = []
  for (const { service, floor, shape } of FLOOR_PAIRS) {
    const s = by.get(service)
    const f = by.get(floor)
    const load = (s ?? f) === undefined ? '' : ` (${(s ?? f)!.connections} conns, ${(s ?? f)!.delayMs} ms, ${shape})`
    if (f !== undefined) rows.push(sideRow(`floor${load}`, f, undefined, rss))
    if (s !== undefined) rows.push(sideRow(`service${load}`, s, f, rss))
    if (s !== undefined && f !== undefined) rows.push(ratioRow(s, f, rss))
  }
  for (const s of summaries) {
    const floor = by.get(floorOf(s.id) ?? '')
    if (s.group === 'option') rows.push(sideRow(`option: ${s.title} (${s.id})`, s, floor, rss))
    if (s.group === 'flags') rows.push(sideRow(`flags: ${s.variant ?? s.title}`, s, floor, rss))
  }
  return rows
}

function renderText (header: string[], body: string[][]): string {
  const rows = [header, ...body]
  const widths = header.map((_, i) => Math.max(...rows.map(r => r[i]!.length)))
  return rows.map(r => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

function renderMarkdown (header: string[], body: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n')
}

export function sideBySideText (summaries: ScenarioSummary[], rss: LifetimeRss): string {
  return renderText(SIDE_HEADER, sideBySide(summaries, rss))
}

export function sideBySideMarkdown (summaries: ScenarioSummary[], rss: LifetimeRss): string {
  return renderMarkdown(SIDE_HEADER, sideBySide(summaries, rss))
}

export function verdict (t: Target): string {
  if (t.informational === true) return t.pass ? 'within (info)' : 'outside (info)'
  return t.pass ? 'pass' : '**miss**'
}

export function targetsTable (targets: Target[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [
    line(['target', 'limit', 'measured (median, min–max)', 'result']),
    line(['---', '---', '---', '---']),
    ...targets.map(t => line([t.description, t.limit, t.measured, verdict(t)]))
  ].join('\n')
}

/** Writes the report of this run, replacing the previous one (earlier runs live in git history). */
export async function writeReport (path: string, report: Report): Promise<void> {
  await writeFile(path, JSON.stringify(report, null, 2) + '\n')
}
