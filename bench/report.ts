// What the bench makes of its runs: per scenario the median of the rounds and their spread, the ratios to the bare and
// the Fastify floor round by round, issue 42's targets with their verdicts, the cost index (what the flags sweep
// compares), the tables it prints and bench/summary.json (the latest run; older ones in git).
import { writeFile } from 'node:fs/promises'
import type { ClientSetName } from './clients.ts'

/** A load shape of the bench: the service and its two floors are each measured at it. */
export interface Shape {
  id: string
  what: string
  delayMs: number
  clients: ClientSetName
  tls?: true
  /** The processes that serve it: a shape that would set another's peak RSS has its own. */
  service: string
  floor: string
  fastify: string
}

/**
 * service: npm start's code and settings; floor: the bare floor (bench/floor.ts), same flags; fastify: the Fastify
 * floor (bench/fastify-floor.ts), same flags; reference: the bare floor under Node's defaults.
 */
type Role = 'service' | 'floor' | 'fastify' | 'reference' | 'option' | 'ab'

export interface Scenario {
  id: string
  title: string
  shape: Shape
  role: Role
  process: string
  rounds: number
  /** Upstream requests a profile costs (3), or null where fewer are the point (PROFILE_FRESH_S). */
  expectedUpstream: number | null
  encoding?: 'br' | 'gzip'
  /** Each request names its client's current ETag in If-None-Match: 304 is the answer expected. */
  conditional?: true
}

/** One measured run of one scenario. */
export interface Run {
  scenario: string
  round: number
  requests: number
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Upstream requests the sandbox counted (307 hops included) per request the process served. */
  upstream: number
  /** User + system CPU of the process under load per request it served. */
  cpuUs: number
  /** Main-thread GC pauses as a share of that CPU. */
  gcShare: number
  /** V8's worker threads (parallel scavenges, concurrent marking, compiles) per request; null off Linux. */
  v8Us: number | null
  allocatedKiB: number
  /** TLS handshakes the sandbox completed per 1,000 requests (https shapes only). */
  tlsPer1000: number | null
}

interface Spread { median: number, min: number, max: number }

export interface Summary {
  id: string
  title: string
  role: Role
  shape: string
  process: string
  rounds: number
  expectedUpstream: number | null
  cpuUs: Spread
  rps: Spread
  p50: Spread
  p99: Spread
  gcPercent: Spread
  v8Us: Spread | null
  allocatedKiB: Spread
  upstream: Spread
  tlsPer1000: Spread | null
  /** The kernel's lifetime peak (maxrss) of the process, warm-up included. */
  peakRssMiB: number
  /** vCPU at 200 profiles a second plus peak RSS in GiB / 9 (one vCPU costs about nine GiB). */
  costIndex: Spread
  /** Per round against the bare floor of its shape in the same round. */
  cpuRatio: Spread | null
  /** Per round against the Fastify floor of its shape in the same round: the yardstick of the targets. */
  cpuRatioFastify: Spread | null
  rpsRatioFastify: Spread | null
  errors: number
  non2xx: number
}

export interface Target { what: string, limit: string, measured: string, pass: boolean, informational?: true }

/** CPU per profile at most this many times the Fastify floor's, at every shape (issue 42). */
const CPU_LIMIT = 1.25
const RSS_BUDGET_MIB = 384
const PROFILES_PER_SECOND = 200
const GIB_PER_VCPU = 9

const costIndex = (cpuUs: number, peakRssMiB: number) =>
  cpuUs * PROFILES_PER_SECOND / 1e6 + peakRssMiB / 1024 / GIB_PER_VCPU

function median (values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const spread = (values: number[]): Spread =>
  ({ median: median(values), min: Math.min(...values), max: Math.max(...values) })

/** A's measure over b's, round by round (each floor run follows its service run by seconds); null without pairs. */
function perRound (a: Run[], b: Run[], pick: (run: Run) => number): Spread | null {
  const ratios = a.flatMap(run => {
    const pair = b.find(r => r.round === run.round)
    return pair === undefined || pick(pair) === 0 ? [] : [pick(run) / pick(pair)]
  })
  return ratios.length === 0 ? null : spread(ratios)
}

export function summarise (scenarios: Scenario[], runs: Run[], peakRss: Record<string, number>): Summary[] {
  const of = (id: string) => runs.filter(r => r.scenario === id)
  return scenarios.map(s => {
    const own = of(s.id)
    const floor = of(`f${s.shape.id}`)
    const fastify = of(`ff${s.shape.id}`)
    const peak = peakRss[s.process] ?? 0
    const by = (pick: (run: Run) => number) => spread(own.map(pick))
    // The Fastify floor is compared with the bare one; the bare floor's reference row with the bare floor.
    const compared = s.role !== 'floor' && floor.length > 0
    const yardstick = s.role !== 'floor' && s.role !== 'fastify' && s.role !== 'reference' && fastify.length > 0
    return {
      id: s.id,
      title: s.title,
      role: s.role,
      shape: s.shape.id,
      process: s.process,
      rounds: own.length,
      expectedUpstream: s.expectedUpstream,
      cpuUs: by(r => r.cpuUs),
      rps: by(r => r.rps),
      p50: by(r => r.p50),
      p99: by(r => r.p99),
      gcPercent: by(r => r.gcShare * 100),
      v8Us: own.every(r => r.v8Us !== null) ? by(r => r.v8Us!) : null,
      allocatedKiB: by(r => r.allocatedKiB),
      upstream: by(r => r.upstream),
      tlsPer1000: own.every(r => r.tlsPer1000 !== null) ? by(r => r.tlsPer1000!) : null,
      peakRssMiB: peak,
      costIndex: by(r => costIndex(r.cpuUs, peak)),
      cpuRatio: compared ? perRound(own, floor, r => r.cpuUs) : null,
      cpuRatioFastify: yardstick ? perRound(own, fastify, r => r.cpuUs) : null,
      rpsRatioFastify: yardstick ? perRound(own, fastify, r => r.rps) : null,
      errors: own.reduce((sum, r) => sum + r.errors, 0),
      non2xx: own.reduce((sum, r) => sum + r.non2xx, 0)
    }
  })
}

const fixed = (value: number, digits = 0) => value.toFixed(digits)
const withSpread = (s: Spread | null, digits = 0, unit = '') => s === null
  ? '–'
  : s.min === s.max
    ? `${fixed(s.median, digits)}${unit}`
    : `${fixed(s.median, digits)}${unit} (${fixed(s.min, digits)}–${fixed(s.max, digits)})`

/** Issue 42's targets, each the median of the rounds with their spread. */
export function evaluate (shapes: Shape[], summaries: Summary[]): Target[] {
  const targets: Target[] = []
  const by = new Map(summaries.map(s => [s.id, s]))
  for (const shape of shapes) {
    const s = by.get(shape.id)
    if (s === undefined) continue
    if (s.cpuRatioFastify !== null) {
      const bare = s.cpuRatio === null ? '' : `; ${withSpread(s.cpuRatio, 2, ' ×')} the bare floor`
      targets.push({
        what: `CPU per profile against the same-flag Fastify floor, ${shape.id} (${shape.what})`,
        limit: `≤ ${CPU_LIMIT} ×`,
        measured: `${withSpread(s.cpuRatioFastify, 2, ' ×')}${bare}; ${withSpread(s.cpuUs)} µs`,
        pass: s.cpuRatioFastify.median <= CPU_LIMIT
      })
    }
    targets.push({
      what: `Peak RSS of the service process of ${shape.id} (kernel maxrss over its life)`,
      limit: `≤ ${RSS_BUDGET_MIB} MiB`,
      measured: `${fixed(s.peakRssMiB, 1)} MiB`,
      pass: s.peakRssMiB <= RSS_BUDGET_MIB
    })
  }
  const counted = summaries.filter(s => s.expectedUpstream === 3)
  if (counted.length > 0) {
    targets.push({
      what: 'Exactly 3 upstream requests per profile in every run (307 hops included)',
      limit: '= 3',
      measured: counted.map(s => `${s.id} ${withSpread(s.upstream, 3)}`).join(', '),
      pass: counted.every(s => s.upstream.min === 3 && s.upstream.max === 3)
    })
  }
  const tls = summaries.filter(s => s.tlsPer1000 !== null)
  if (tls.length > 0) {
    targets.push({
      what: 'New TLS connections to the upstream per 1,000 profiles (the keep-alive pool reuses them)',
      limit: '≤ 1',
      measured: tls.map(s => `${s.id} ${withSpread(s.tlsPer1000, 2)}`).join(', '),
      pass: tls.every(s => s.tlsPer1000!.median <= 1),
      informational: true
    })
  }
  const errors = summaries.reduce((sum, s) => sum + s.errors, 0)
  const non2xx = summaries.reduce((sum, s) => sum + s.non2xx, 0)
  targets.push({
    what: 'No errors and no non-2xx answers in any run',
    limit: '0',
    measured: `${errors} errors, ${non2xx} non-2xx`,
    pass: errors === 0 && non2xx === 0
  })
  return targets
}

export const verdict = (t: Target) =>
  t.informational === true ? (t.pass ? 'within (info)' : 'outside (info)') : (t.pass ? 'pass' : '**miss**')

const HEADER = ['run', 'CPU µs/profile', '× floor', '× Fastify', 'req/s', '× Fastify', 'p50 ms', 'p99 ms',
  'peak RSS MiB', 'cost index', 'GC %', 'V8 threads µs', 'KiB alloc', 'upstream', 'TLS/1k', 'err/non2xx']

function row (s: Summary): string[] {
  return [
    `${s.id}: ${s.title}`, withSpread(s.cpuUs), withSpread(s.cpuRatio, 2), withSpread(s.cpuRatioFastify, 2),
    withSpread(s.rps), withSpread(s.rpsRatioFastify, 2), withSpread(s.p50), withSpread(s.p99), fixed(s.peakRssMiB, 1),
    withSpread(s.costIndex, 3), withSpread(s.gcPercent), withSpread(s.v8Us), withSpread(s.allocatedKiB, 1),
    withSpread(s.upstream, 2), withSpread(s.tlsPer1000, 2), `${s.errors}/${s.non2xx}`
  ]
}

/** A table as Markdown (for docs/performance.md) or fixed-width text (for the terminal). */
function table (header: string[], body: string[][], markdown: boolean): string {
  if (markdown) {
    const line = (cells: string[]) => `| ${cells.join(' | ')} |`
    return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n')
  }
  const widths = header.map((_, i) => Math.max(...[header, ...body].map(r => r[i]!.length)))
  return [header, ...body].map(r => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n')
}

export const summaryTable = (summaries: Summary[], markdown: boolean) => table(HEADER, summaries.map(row), markdown)

export const targetsTable = (targets: Target[], markdown: boolean) => table(['target', 'limit', 'measured', 'result'],
  targets.map(t => [t.what, t.limit, t.measured, verdict(t).replaceAll('*', markdown ? '*' : '')]), markdown)

/** One flag set of `--flags-sweep`: what it is and its run's summaries. */
export interface SweepResult { name: string, flags: string[], env: Record<string, string>, summaries: Summary[] }

/**
 * The sweep's table: per flag set the cost index of the service and of the Fastify floor at each shape and their sum,
 * the service's worst peak RSS; the lowest sum within the RSS budget is the set to pin (issue 37 item 2). Sweep again
 * on a Node major or a new pod size.
 */
export function sweepTable (results: SweepResult[], shapes: string[], markdown: boolean): string {
  const sum = (r: SweepResult, role: Role) => r.summaries.filter(s => s.role === role && shapes.includes(s.shape))
    .reduce((total, s) => total + s.costIndex.median, 0)
  const fits = (r: SweepResult) => r.summaries.every(s => s.role !== 'service' || s.peakRssMiB <= RSS_BUDGET_MIB)
  const best = (role: Role) => results.filter(r => role === 'fastify' || fits(r))
    .reduce<SweepResult | undefined>((b, r) => b === undefined || sum(r, role) < sum(b, role) ? r : b, undefined)
  const [service, floor] = [best('service'), best('fastify')]
  const body = results.map(r => {
    const cell = (shape: string, role: Role) => {
      const s = r.summaries.find(s => s.shape === shape && s.role === role)
      return s === undefined ? '–' : fixed(s.costIndex.median, 3)
    }
    const mark = (r === service ? ' (lowest, service)' : '') + (r === floor ? ' (lowest, Fastify floor)' : '')
    const peak = Math.max(0, ...r.summaries.filter(s => s.role === 'service').map(s => s.peakRssMiB))
    return [`${r.name}${mark}`, ...shapes.map(shape => `${cell(shape, 'service')} / ${cell(shape, 'fastify')}`),
      `${fixed(sum(r, 'service'), 3)} / ${fixed(sum(r, 'fastify'), 3)}`, fixed(peak, 1)]
  })
  const header = ['flag set', ...shapes.map(shape => `${shape} service / Fastify floor`), 'sum', 'service peak RSS MiB']
  return table(header, body, markdown)
}

/** bench/summary.json: the latest run, one line per scenario and per target; spreads as [median, min, max]. */
export async function writeSummary (path: string, head: Record<string, unknown>, summaries: Summary[],
  targets: Target[]): Promise<void> {
  const line = (value: unknown) => JSON.stringify(value)
  const round = (x: Spread | null, digits: number) => x === null
    ? null
    : [x.median, x.min, x.max].map(n => Number(n.toFixed(digits)))
  const rows = summaries.map(s => line({
    id: s.id,
    rounds: s.rounds,
    cpuUs: round(s.cpuUs, 0),
    xFloor: round(s.cpuRatio, 2),
    xFastify: round(s.cpuRatioFastify, 2),
    rps: round(s.rps, 0),
    rpsXFastify: round(s.rpsRatioFastify, 2),
    peakRssMiB: s.peakRssMiB,
    costIndex: round(s.costIndex, 3),
    upstream: s.upstream.median,
    errors: s.errors + s.non2xx
  }))
  const verdicts = targets.map(t => line({ target: t.what, limit: t.limit, measured: t.measured, result: verdict(t) }))
  const text = ['{', ...Object.entries(head).map(([key, value]) => `  ${line(key)}: ${line(value)},`),
    '  "scenarios": [', rows.map(r => `    ${r}`).join(',\n'), '  ],',
    '  "targets": [', verdicts.map(r => `    ${r}`).join(',\n'), '  ]', '}'].join('\n')
  await writeFile(path, text + '\n')
}
