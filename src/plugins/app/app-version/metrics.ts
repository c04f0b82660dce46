// The x-app-version statistics behind bff_app_version_requests_total, with a bounded set of label values: the
// TOP_APP_VERSIONS versions with the most distinct callers by name, every other version as `other`, no header as
// `none`. Only accepted requests of verified tokens are counted (the plugin's job: never a 4xx), and versions are
// ranked by distinct callers, not requests: a version takes a name only once CALLERS_TO_NAME distinct callers have
// sent it, and keeps it until a version with more callers needs its place. So a handful of accounts, however many
// requests they send, can neither name a version nor push a real one into `other`.
// Counters only grow: a version counts under its own name while it is among the top ones (from the request that
// took it there) and under `other` the rest of the time, so entering the top never takes requests out of `other`.
// A version pushed out of the top stops being exported until it returns. Callers are counted per day
// (GENERATION_MS): a version ranks by its distinct callers of this day or the day before, so a new release can
// overtake an old one.
import { hash } from 'node:crypto'
import type { Registry } from 'prom-client'

/** Whether an answer was refused (any 4xx: 400, 401, 426, 429...): such a request is counted on no dashboard. */
export const refused = (statusCode: number): boolean => statusCode >= 400 && statusCode < 500

const TOP_APP_VERSIONS = 20
/** Distinct versions whose callers are kept; past it the half of those outside the top with fewest is forgotten. */
const MAX_TRACKED_APP_VERSIONS = 200
/**
 * Distinct callers a version needs before it can take a name: far above the handful of accounts one person holds
 * (three rewrote the dashboard when it was 3), and reached within a day on each instance by a release in real use.
 */
const CALLERS_TO_NAME = 50
/** Distinct callers counted per version and day: enough to rank releases; bounds the memory (digests). */
const MAX_CALLERS_COUNTED = 500
/** How long distinct callers are gathered before a new count starts (the last one still ranks). */
const GENERATION_MS = 24 * 60 * 60 * 1000
/** Base64url characters of a caller's SHA-256 kept to tell callers apart: 72 bits, no subject itself. */
const CALLER_DIGEST_CHARS = 12
const OTHER_VERSION = 'other'
const NO_VERSION = 'none'

export interface AppVersionCounts {
  /**
   * Counts one accepted request of a verified token by its well-formed version (undefined: no header) and its
   * caller's subject (kept only as a short digest); returns the label it counted under.
   */
  record (version: string | undefined, subject: string): string
  /** The label a version counts under now, without counting it. */
  label (version: string | null | undefined): string
  /** Whether a label is exported now: a top version, `other` or `none`. */
  exported (label: string): boolean
  /** Each exported label with the requests counted under it. */
  samples (): Array<[label: string, count: number]>
}

interface Entry {
  /** Digests of this generation's distinct callers, up to MAX_CALLERS_COUNTED. */
  callers: Set<string>
  /** How many distinct callers the last generation had. */
  previous: number
  /** The requests counted under its own name. */
  own: number
}

export interface AppVersionCountsOptions {
  top?: number
  tracked?: number
  callers?: number
  counted?: number
  generationMs?: number
  /** The clock, epoch milliseconds (tests start a new generation without waiting). */
  now?: () => number
}

export function createAppVersionCounts ({
  top = TOP_APP_VERSIONS, tracked = MAX_TRACKED_APP_VERSIONS, callers = CALLERS_TO_NAME,
  counted = MAX_CALLERS_COUNTED, generationMs = GENERATION_MS, now = Date.now
}: AppVersionCountsOptions = {}): AppVersionCounts {
  const entries = new Map<string, Entry>()
  const named = new Set<string>()
  let other = 0
  let none = 0
  let generationStart = now()

  /** What ranks a version: its distinct callers of this generation or the last, whichever is more. */
  const rank = (entry: Entry | undefined): number =>
    entry === undefined ? 0 : Math.max(entry.callers.size, entry.previous)

  /** Starts a new generation of callers; a version seen by no one in the last one is forgotten unless named. */
  function nextGeneration (): void {
    generationStart = now()
    for (const [version, entry] of entries) {
      entry.previous = entry.callers.size
      entry.callers = new Set()
      if (entry.previous === 0 && !named.has(version)) entries.delete(version)
    }
  }

  /** Gives a version outside the top a name when there is room, or when it has more callers than the weakest. */
  function promote (version: string, entry: Entry): void {
    if (named.size < top) {
      named.add(version)
      return
    }
    let weakest: string | undefined
    let least = Infinity
    for (const name of named) {
      const callersOf = rank(entries.get(name))
      if (callersOf < least) [weakest, least] = [name, callersOf]
    }
    if (weakest !== undefined && rank(entry) > least) {
      named.delete(weakest)
      named.add(version)
    }
  }

  /** Forgets the half of the versions outside the top with fewest callers: one-off versions lock nobody out. */
  function prune (): void {
    const outside = [...entries].filter(([version]) => !named.has(version)).sort((a, b) => rank(a[1]) - rank(b[1]))
    for (const [version] of outside.slice(0, Math.ceil(outside.length / 2))) entries.delete(version)
  }

  return {
    record (version, subject) {
      if (version === undefined) {
        none++
        return NO_VERSION
      }
      if (now() - generationStart >= generationMs) nextGeneration()
      let entry = entries.get(version)
      if (entry === undefined) {
        if (entries.size >= tracked) prune()
        entry = { callers: new Set(), previous: 0, own: 0 }
        entries.set(version, entry)
      }
      if (entry.callers.size < counted) {
        entry.callers.add(hash('sha256', subject, 'base64url').slice(0, CALLER_DIGEST_CHARS))
      }
      if (!named.has(version) && rank(entry) >= callers) promote(version, entry)
      if (named.has(version)) {
        entry.own++
        return version
      }
      other++
      return OTHER_VERSION
    },
    label (version) {
      if (version === undefined || version === null) return NO_VERSION
      return named.has(version) ? version : OTHER_VERSION
    },
    exported (label) {
      return label === OTHER_VERSION || label === NO_VERSION || named.has(label)
    },
    samples () {
      const samples: Array<[string, number]> = [[NO_VERSION, none], [OTHER_VERSION, other]]
      for (const version of named) samples.push([version, entries.get(version)?.own ?? 0])
      return samples
    }
  }
}

/** bff_app_version_requests_total in the app's registry, read from the counts when scraped. */
export function appVersionMetrics (
  { Counter }: Pick<typeof import('prom-client'), 'Counter'>, registry: Registry, counts: AppVersionCounts
): void {
  // eslint-disable-next-line no-new -- prom-client metrics live in the registry they are given
  new Counter({
    name: 'bff_app_version_requests_total',
    help: 'Accepted authenticated requests of the routes that read x-app-version, by app_version: the ' +
      `${TOP_APP_VERSIONS} versions with the most distinct callers, each sent by at least ${CALLERS_TO_NAME}, by ` +
      'name, the rest as other, none without the header; only requests whose token was verified and that were ' +
      'not refused count (never a 4xx: 400, 401, 426, 429).',
    labelNames: ['app_version'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [label, count] of counts.samples()) this.inc({ app_version: label }, count)
    }
  })
}
