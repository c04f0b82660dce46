// The x-app-version statistics behind bff_app_version_requests_total, with a bounded set of label values: the
// TOP_APP_VERSIONS most frequent versions by name, every other version as `other`, no header as `none`.
// Only authenticated requests are counted (the plugin's job), and a version can take a name only once
// CALLERS_TO_NAME distinct callers have sent it, so neither strangers nor one account can fill the free names.
// Counters only grow: a version counts under its own name while it is among the top ones (from the request that
// took it there) and under `other` the rest of the time, so entering the top never takes requests out of `other`.
// A version pushed out of the top stops being exported until it returns. Frequency is recent frequency: every
// HALF_LIFE_REQUESTS versioned requests each version's weight halves, so a new release can enter the top.
import { hash } from 'node:crypto'
import type { Registry } from 'prom-client'

const TOP_APP_VERSIONS = 20
/** Distinct versions whose counts are kept; past it the less frequent half of those outside the top is forgotten. */
const MAX_TRACKED_APP_VERSIONS = 1000
/** Versioned requests after which every version's weight halves. */
const HALF_LIFE_REQUESTS = 10_000
/** Distinct callers a version needs before it can take a name of its own. */
const CALLERS_TO_NAME = 3
/** Base64url characters of a caller's SHA-256 kept to tell callers apart: 72 bits, no subject itself. */
const CALLER_DIGEST_CHARS = 12
const OTHER_VERSION = 'other'
const NO_VERSION = 'none'

export interface AppVersionCounts {
  /**
   * Counts one authenticated request by its well-formed version (undefined: no header) and its caller's subject
   * (kept only as a short digest, and only until the version has been seen from enough callers); returns the label
   * it counted under.
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
  /** Requests of this version since it was first tracked, halved every halfLife requests: what ranks it. */
  weight: number
  /** The part of them counted under its own name. */
  own: number
  /** Digests of the distinct callers seen with it, up to CALLERS_TO_NAME: only then can it take a name. */
  callers: string[]
}

export interface AppVersionCountsOptions { top?: number, tracked?: number, halfLife?: number, callers?: number }

export function createAppVersionCounts ({
  top = TOP_APP_VERSIONS, tracked = MAX_TRACKED_APP_VERSIONS, halfLife = HALF_LIFE_REQUESTS, callers = CALLERS_TO_NAME
}: AppVersionCountsOptions = {}): AppVersionCounts {
  const entries = new Map<string, Entry>()
  const named = new Set<string>()
  let other = 0
  let none = 0
  let sinceHalving = 0

  /** Gives a version outside the top a name when there is room, or when it has overtaken the least frequent one. */
  function promote (version: string, entry: Entry): void {
    if (named.size < top) {
      named.add(version)
      return
    }
    let weakest: string | undefined
    let least = Infinity
    for (const name of named) {
      const weight = entries.get(name)?.weight ?? 0
      if (weight < least) [weakest, least] = [name, weight]
    }
    if (weakest !== undefined && entry.weight > least) {
      named.delete(weakest)
      named.add(version)
    }
  }

  /** Forgets the less frequent half of the versions outside the top: a flood of one-off versions locks nobody out. */
  function prune (): void {
    const outside = [...entries].filter(([version]) => !named.has(version)).sort((a, b) => a[1].weight - b[1].weight)
    for (const [version] of outside.slice(0, Math.ceil(outside.length / 2))) entries.delete(version)
  }

  /** Notes a caller of a version until it has enough; false while it has too few to take a name. */
  function enoughCallers (entry: Entry, subject: string): boolean {
    if (entry.callers.length >= callers) return true
    const caller = hash('sha256', subject, 'base64url').slice(0, CALLER_DIGEST_CHARS)
    if (!entry.callers.includes(caller)) entry.callers.push(caller)
    return entry.callers.length >= callers
  }

  return {
    record (version, subject) {
      if (version === undefined) {
        none++
        return NO_VERSION
      }
      if (++sinceHalving >= halfLife) {
        sinceHalving = 0
        for (const aging of entries.values()) aging.weight /= 2
      }
      let entry = entries.get(version)
      if (entry === undefined) {
        if (entries.size >= tracked) prune()
        entry = { weight: 0, own: 0, callers: [] }
        entries.set(version, entry)
      }
      entry.weight++
      if (!named.has(version) && enoughCallers(entry, subject)) promote(version, entry)
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
    help: 'Authenticated requests of the routes that read x-app-version, by app_version: the ' +
      `${TOP_APP_VERSIONS} most frequent versions sent by at least ${CALLERS_TO_NAME} callers by name, the rest as ` +
      'other, none without the header; only requests whose token was verified count (never a 400, 401 or 426).',
    labelNames: ['app_version'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [label, count] of counts.samples()) this.inc({ app_version: label }, count)
    }
  })
}
