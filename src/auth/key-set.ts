// The identity provider's published key set (AUTH_JWKS_URL), kept current without a restart: fetched in
// the background every AUTH_JWKS_REFRESH_S (less often when its Cache-Control max-age asks so), and early
// when a token names an unknown `kid`, at most once per cooldown so invented kids cost the provider a
// handful of requests. A failed refresh keeps the last good set; a malformed member is skipped alone.
import { EventEmitter } from 'node:events'
import { Agent, request } from 'undici'
import { IgnoredKey, publicKeyOfSet, type KeyAlgorithm, type PublicKeyOfSet } from './jwk.ts'

/** A provider answers in well under this; a hung one must not hold a refresh (or a waiting request). */
const FETCH_TIMEOUT_MS = 5000
/** Key sets are a few KiB; anything this large is not one. */
const MAX_KEY_SET_BYTES = 256 * 1024
/** Members beyond this many are not read. */
const MAX_KEYS = 100
/** Longest wait between two early refreshes (half the refresh period when that is shorter). */
const EARLY_REFRESH_COOLDOWN_MS = 30_000
/** Before the first set has loaded, retries back off up to this (or the refresh period when shorter). */
const FIRST_LOAD_MAX_BACKOFF_MS = 30_000
const MAX_DELAY_MS = 86_400_000

/** One usable key: verifies a token whose header names it. */
export interface SetKey {
  kid: string
  algorithms: KeyAlgorithm[]
  thumbprint: string
  verify (token: string): unknown
}

export interface KeySetLog {
  warn (fields: object, message: string): void
  info (fields: object, message: string): void
  debug (fields: object, message: string): void
}

export interface KeySetOptions {
  url: string
  refreshSeconds: number
  log: KeySetLog
  /** Builds the verifier of one key: the claims rules belong to the auth plugin. */
  verifierFor (pem: string, algorithms: KeyAlgorithm[]): (token: string) => unknown
}

/**
 * A kid's key; or that a refresh begun after the request lacks it (`unpublished`); or how long until a refresh may
 * run, and whether a refresh begun since the kid was first seen has lacked it already (`lacked`).
 */
export type KeyLookup = { key: SetKey } | { unpublished: true } | { retryAfterMs: number, lacked: boolean }

/** Kids waiting for a refresh to say whether they are published; more are forgotten oldest first. */
const MAX_PENDING_KIDS = 1000

/** Why a refresh failed, in words safe to log (never the provider's answer). */
class RefreshFailure extends Error {}

/** The `max-age` of a Cache-Control header, in seconds, when it has one. */
export function maxAgeSeconds (header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header.join(',') : header
  const match = value === undefined ? null : /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/i.exec(value)
  return match === null ? undefined : Number(match[1])
}

export interface KeySetEvents {
  /** After every refresh attempt, whatever its outcome. */
  refresh: [{ ok: boolean, keys: number }]
}

export class RemoteKeySet extends EventEmitter<KeySetEvents> {
  readonly #url: string
  readonly #periodMs: number
  readonly #cooldownMs: number
  readonly #log: KeySetLog
  readonly #verifierFor: KeySetOptions['verifierFor']
  readonly #agent = new Agent({ connections: 2, connect: { timeout: FETCH_TIMEOUT_MS } })
  #keys = new Map<string, SetKey>()
  #loaded = false
  #timer: NodeJS.Timeout | undefined
  #inFlight: Promise<void> | undefined
  #lastAttempt = -Infinity
  /** When the refresh that loaded the current set started. */
  #lastLoadStart = -Infinity
  /** Unknown kids by when they were first seen (performance.now()). */
  readonly #unknownSince = new Map<string, number>()
  #failedInARow = 0
  #stopped = false
  /** Failed refreshes since start, for the metrics. */
  failures = 0
  /** Refreshes that loaded a set, for the metrics. */
  loads = 0
  /** Milliseconds since the epoch of the last loaded set; 0 before the first. */
  loadedAt = 0

  constructor ({ url, refreshSeconds, log, verifierFor }: KeySetOptions) {
    super()
    this.#url = url
    this.#periodMs = refreshSeconds * 1000
    // Half the period: with a cooldown as long as the period, the background refresh would take almost every
    // chance of an early one, and a kid looked for within the cooldown is only ever pending (keyAfterRefresh).
    this.#cooldownMs = Math.min(EARLY_REFRESH_COOLDOWN_MS, this.#periodMs / 2)
    this.#log = log
    this.#verifierFor = verifierFor
  }

  /** True once a first set has loaded: readiness waits for it. */
  get loaded (): boolean { return this.#loaded }

  /** How many usable keys the current set holds. */
  get size (): number { return this.#keys.size }

  /** The key a token names, from the current set; no fetch. */
  key (kid: string): SetKey | undefined { return this.#keys.get(kid) }

  /**
   * The key a token names after an early refresh, unless one ran within the cooldown. Requests arriving
   * during a refresh wait for that one instead of starting their own. A kid is `unpublished` only when a refresh
   * begun after this call lacks it: a refresh begun earlier, even after the kid was first seen (a stranger may send a
   * provider's next kid before it is published), says nothing of a key published since. Otherwise the caller is
   * told when the next refresh may run (`retryAfterMs`).
   */
  async keyAfterRefresh (kid: string): Promise<KeyLookup> {
    const asked = performance.now()
    let since = this.#unknownSince.get(kid)
    if (since === undefined) {
      since = asked
      // Bounded: an attacker's invented kids evict each other; an evicted kid only waits for a refresh again.
      const oldest = this.#unknownSince.keys().next().value
      if (this.#unknownSince.size >= MAX_PENDING_KIDS && oldest !== undefined) this.#unknownSince.delete(oldest)
      this.#unknownSince.set(kid, since)
    }
    const coolingDown = asked - this.#lastAttempt < this.#cooldownMs
    if (this.#inFlight !== undefined || !coolingDown) await this.refresh()
    const key = this.#keys.get(kid)
    if (key !== undefined) {
      this.#unknownSince.delete(kid)
      return { key }
    }
    if (this.#lastLoadStart >= asked) return { unpublished: true }
    return {
      retryAfterMs: Math.max(0, this.#lastAttempt + this.#cooldownMs - performance.now()),
      lacked: this.#lastLoadStart >= since
    }
  }

  /** Starts loading and the background refreshes. */
  start (): void {
    this.#stopped = false
    this.refresh().catch(() => {})
  }

  /** Stops the refreshes and closes the connections; a refresh under way ends first. */
  async stop (): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#inFlight
    await this.#agent.close()
  }

  /** One refresh now (the one under way when there is one); never throws: a failure is logged and counted. */
  refresh (): Promise<void> {
    if (this.#inFlight !== undefined) return this.#inFlight
    clearTimeout(this.#timer)
    this.#lastAttempt = performance.now()
    const attempt = this.#load(this.#lastAttempt).finally(() => { this.#inFlight = undefined })
    this.#inFlight = attempt
    return attempt
  }

  async #load (started: number): Promise<void> {
    let next: number
    try {
      const { members, maxAge } = await this.#fetch()
      this.#keys = await this.#importAll(members)
      this.#lastLoadStart = started
      this.#loaded = true
      this.#failedInARow = 0
      this.loads++
      this.loadedAt = Date.now()
      // Cache-Control is honoured where it asks for less often, never more often than the period.
      next = Math.max(this.#periodMs, (maxAge ?? 0) * 1000)
      this.#log.debug({ keys: this.#keys.size }, 'key set loaded')
      this.emit('refresh', { ok: true, keys: this.#keys.size })
    } catch (error) {
      this.failures++
      this.#failedInARow++
      const reason = error instanceof RefreshFailure ? error.message : 'the key set could not be read'
      // The last good set keeps serving; the provider's answer is never logged, only what was wrong with it.
      this.#log.warn({ reason, failures: this.#failedInARow, keys: this.#keys.size },
        'key set refresh failed; the last good set keeps serving')
      const cap = this.#loaded ? this.#periodMs : Math.min(this.#periodMs, FIRST_LOAD_MAX_BACKOFF_MS)
      next = Math.min(cap, 1000 * 2 ** Math.min(this.#failedInARow - 1, 20))
      this.emit('refresh', { ok: false, keys: this.#keys.size })
    }
    if (this.#stopped) return
    this.#timer = setTimeout(() => { this.refresh().catch(() => {}) }, Math.min(next, MAX_DELAY_MS)).unref()
  }

  async #fetch (): Promise<{ members: unknown[], maxAge: number | undefined }> {
    const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS)
    let response
    try {
      response = await request(this.#url, {
        method: 'GET',
        headers: { accept: 'application/jwk-set+json, application/json' },
        dispatcher: this.#agent,
        signal
      })
    } catch {
      throw new RefreshFailure(signal.aborted
        ? 'the provider did not answer in time'
        : 'the provider could not be reached')
    }
    const { statusCode, headers, body } = response
    // Abandoning the body below ends it with an abort error; handled here, it is no crash.
    body.on('error', () => {})
    if (statusCode !== 200) {
      body.destroy()
      throw new RefreshFailure(`the provider answered HTTP ${statusCode}`)
    }
    const text = await readCapped(body, signal)
    let set: unknown
    try {
      set = JSON.parse(text)
    } catch {
      throw new RefreshFailure('the answer is not JSON')
    }
    const keys = (set as { keys?: unknown } | null)?.keys
    if (!Array.isArray(keys)) throw new RefreshFailure('the answer has no keys array')
    if (keys.length > MAX_KEYS) {
      this.#log.warn({ members: keys.length, read: MAX_KEYS }, 'the key set has more members than are read')
    }
    return { members: keys.slice(0, MAX_KEYS), maxAge: maxAgeSeconds(headers['cache-control']) }
  }

  /** The usable keys by kid; a member that fails is skipped alone. Unchanged keys keep their verifier and cache. */
  async #importAll (members: unknown[]): Promise<Map<string, SetKey>> {
    const results = await Promise.allSettled(members.map(publicKeyOfSet))
    const keys = new Map<string, SetKey>()
    for (const result of results) {
      if (result.status === 'rejected') {
        const error = result.reason as Error
        if (error instanceof IgnoredKey) this.#log.debug({ reason: error.message }, 'key set member not used')
        else this.#log.warn({ reason: error.message }, 'key set member skipped')
        continue
      }
      const key = result.value
      if (keys.has(key.kid)) {
        this.#log.warn({ kid: key.kid }, 'key set member skipped: its kid is taken by an earlier member')
        continue
      }
      keys.set(key.kid, this.#reuseOrBuild(key))
    }
    if (keys.size === 0) throw new RefreshFailure('the set holds no usable signing key')
    return keys
  }

  #reuseOrBuild (key: PublicKeyOfSet): SetKey {
    const known = this.#keys.get(key.kid)
    if (known !== undefined && known.thumbprint === key.thumbprint &&
      known.algorithms.join() === key.algorithms.join()) return known
    const verify = this.#verifierFor(key.pem, key.algorithms)
    return { kid: key.kid, algorithms: key.algorithms, thumbprint: key.thumbprint, verify }
  }
}

/** The body as text, refused past MAX_KEY_SET_BYTES and when the deadline passes. */
async function readCapped (
  body: AsyncIterable<Buffer> & { destroy (): unknown }, signal: AbortSignal
): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      size += chunk.length
      if (size > MAX_KEY_SET_BYTES) {
        body.destroy()
        throw new RefreshFailure(`the answer is larger than ${MAX_KEY_SET_BYTES} bytes`)
      }
      chunks.push(chunk)
    }
  } catch (error) {
    if (error instanceof RefreshFailure) throw error
    throw new RefreshFailure(signal.aborted ? 'the provider did not answer in time' : 'the answer was cut short')
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** prom-client's metric classes, as the metrics plugin passes them. */
interface KeySetMetricClasses {
  Counter: typeof import('prom-client').Counter
  Gauge: typeof import('prom-client').Gauge
}

/** The key set's samples, read at scrape time: refresh failures, usable keys, the age of the set. */
export function keySetMetrics (
  { Counter, Gauge }: KeySetMetricClasses, registry: import('prom-client').Registry, keySet: RemoteKeySet
): void {
  const registers = [registry]
  /* eslint-disable no-new -- prom-client metrics live in the registry they are given */
  new Counter({
    name: 'bff_auth_jwks_refresh_failures_total',
    help: 'Refreshes of the AUTH_JWKS_URL key set that failed (unreachable, slow, not a key set, no usable key); the ' +
      'last good set kept serving.',
    registers,
    collect () {
      this.reset()
      this.inc(keySet.failures)
    }
  })
  new Gauge({
    name: 'bff_auth_jwks_keys',
    help: 'Usable signing keys in the current AUTH_JWKS_URL key set; 0 before the first load (readiness is 503 until ' +
      'then).',
    registers,
    collect () { this.set(keySet.size) }
  })
  new Gauge({
    name: 'bff_auth_jwks_last_load_timestamp_seconds',
    help: 'When the AUTH_JWKS_URL key set last loaded, in seconds since the epoch; 0 before the first load.',
    registers,
    collect () { this.set(keySet.loadedAt / 1000) }
  })
  /* eslint-enable no-new */
}
