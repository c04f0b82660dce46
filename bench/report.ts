// What the bench makes of its runs: per scenario the median and spread of every measure, the issue's
// targets with measured value and verdict, the tables it prints, and bench/report.json with a history
// of earlier runs (the before/after record of each optimisation).
import { readFile, writeFile } from 'node:fs/promises'

export type ScenarioId = 'a' | 'b5' | 'b50' | 'b200' | 'c' | 'd' | 'u5'

export interface ScenarioInfo {
  id: ScenarioId
  title: string
  method: 'GET' | 'POST'
  path: string
  connections: number
  delayMs: number
  /** Upstream exchanges one request should cost (3 for a profile), null for the trivial route. */
  expectedUpstream: number | null
  /** Where the load goes: the service (default) or, to calibrate, the sandbox upstream itself. */
  target?: 'sandbox'
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
  /** Service process CPU (user + system) per request served. */
  cpuUsPerRequest: number
  /** Share of one core each process used during the run: contention shows here. */
  cpuShare: { service: number, sandbox: number, bench: number }
  peakRssMiB: number
  /** The V8 heap and external memory in the sample with the highest RSS. */
  memoryAtPeak: { heapTotalMiB: number, heapUsedMiB: number, externalMiB: number }
}

export interface Memory {
  /** RSS of the service once listening, before any request. */
  rssAtReadyMiB: number
  heapUsedAtReadyMiB: number
  /** getrusage maxrss at the end: the highest RSS the process ever had. */
  lifetimeMaxRssMiB: number
}

export interface Spread { median: number, min: number, max: number }

export interface ScenarioSummary extends ScenarioInfo {
  runs: number
  rps: Spread
  p50: Spread
  p90: Spread
  p99: Spread
  cpuUsPerRequest: Spread
  upstreamPerRequest: Spread
  redirectsPerRequest: Spread
  peakRssMiB: Spread
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
  memory: Memory
  scenarios: ScenarioSummary[]
  targets: Target[]
  /** Warn-level (or worse) log lines the service wrote during the measured rounds. */
  serviceWarnings: { count: number, first: string[] }
  runs: Run[]
  history: HistoryEntry[]
}

/** What an earlier report keeps of itself: enough to compare before and after. */
export interface HistoryEntry {
  generatedAt: string
  commit: string
  label: string
  scenarios: Record<string, { rps: number, p50: number, p99: number, cpuUsPerRequest: number, upstreamPerRequest: number, peakRssMiB: number }>
  targets: Record<string, { measured: string, pass: boolean }>
}

export function median (values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function spread (values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
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
      upstreamPerRequest: of(r => r.upstreamPerRequest),
      redirectsPerRequest: of(r => r.redirectsPerRequest),
      peakRssMiB: of(r => r.peakRssMiB),
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
const withSpread = (s: Spread, digits = 0) =>
  s.min === s.max ? fixed(s.median, digits) : `${fixed(s.median, digits)} (${fixed(s.min, digits)}–${fixed(s.max, digits)})`

/** The targets, each with its limit, the measured median and the verdict. */
export function evaluateTargets (summaries: ScenarioSummary[], allRuns: Run[], memory: Memory): Target[] {
  const by = new Map(summaries.map(s => [s.id, s]))
  const targets: Target[] = []
  for (const id of ['b50', 'b200', 'b5'] as const) {
    const s = by.get(id)
    if (s === undefined) continue
    const p50Limit = 2 * s.delayMs + 3
    const p99Limit = 2 * s.delayMs + 15
    // A closed loop's mean latency is connections / throughput (Little's law): once the CPU is saturated
    // the latency is queueing, and this figure says so.
    const queue = `closed loop: ${s.connections} connections / ${fixed(s.rps.median)} req/s = ${fixed(s.connections / s.rps.median * 1000)} ms mean`
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
      description: `Exactly 3 upstream requests per profile after warm-up (${profiles.map(s => s.id).join(', ')}; 307 hops included; every run)`,
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
      description: 'CPU per profile (a) at most 4 × the CPU per request of the trivial route (c), service process',
      limit: `≤ 4 × ${fixed(c.cpuUsPerRequest.median)} µs = ${fixed(4 * c.cpuUsPerRequest.median)} µs`,
      measured: `${fixed(a.cpuUsPerRequest.median)} µs (${ratio.toFixed(2)} ×)`,
      pass: ratio <= 4
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
  const sampled = Math.max(...allRuns.map(r => r.peakRssMiB))
  const peak = Math.max(sampled, memory.lifetimeMaxRssMiB)
  targets.push({
    id: 'peak-rss',
    description: 'Peak RSS of the service process (kernel maxrss over its whole life; RSS at ready in brackets)',
    limit: '< 150 MiB',
    measured: `${fixed(peak, 1)} MiB (at ready ${fixed(memory.rssAtReadyMiB, 1)} MiB)`,
    pass: peak < 150
  })
  return targets
}

const HEADER = ['scenario', 'conns', 'delay', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'err/non2xx', 'upstream/req', 'CPU µs/req', 'peak RSS MiB', 'CPU share svc/sbx/bench']

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
    s.expectedUpstream === null ? '–' : withSpread(s.upstreamPerRequest, 2),
    s.target === 'sandbox' ? '–' : withSpread(s.cpuUsPerRequest),
    withSpread(s.peakRssMiB, 1),
    `${fixed(share.service * 100)}/${fixed(share.sandbox * 100)}/${fixed(share.bench * 100)} %`
  ]
}

/** A fixed-width table for the terminal. */
export function textTable (summaries: ScenarioSummary[]): string {
  const rows = [HEADER, ...summaries.map(row)]
  const widths = HEADER.map((_, i) => Math.max(...rows.map(r => r[i]!.length)))
  return rows.map(r => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

export function markdownTable (summaries: ScenarioSummary[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(HEADER), line(HEADER.map(() => '---')), ...summaries.map(s => line(row(s)))].join('\n')
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

export function historyEntry (report: Omit<Report, 'history'>): HistoryEntry {
  return {
    generatedAt: report.generatedAt,
    commit: report.commit,
    label: report.label,
    scenarios: Object.fromEntries(report.scenarios.map(s => [s.id, {
      rps: Math.round(s.rps.median),
      p50: s.p50.median,
      p99: s.p99.median,
      cpuUsPerRequest: Math.round(s.cpuUsPerRequest.median),
      upstreamPerRequest: s.upstreamPerRequest.median,
      peakRssMiB: Math.round(s.peakRssMiB.median * 10) / 10
    }])),
    targets: Object.fromEntries(report.targets.map(t => [t.id, { measured: t.measured, pass: t.pass }]))
  }
}

/** The history of the report at `path` (none when there is no report yet). */
export async function readHistory (path: string): Promise<HistoryEntry[]> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const history = (JSON.parse(text) as { history?: unknown }).history
  return Array.isArray(history) ? history as HistoryEntry[] : []
}

/** Writes the report with this run appended to the history of the one it replaces. */
export async function writeReport (path: string, report: Omit<Report, 'history'>): Promise<Report> {
  const history = [...await readHistory(path), historyEntry(report)]
  const full: Report = { ...report, history }
  await writeFile(path, JSON.stringify(full, null, 2) + '\n')
  return full
}
