// Each client's last good profile (docs/operations.md, Last-known profiles): kept per section after every fresh
// answer, read only when fresh data cannot be had (or within PROFILE_FRESH_S), and only ever for the identity the
// verified token names. In the shared Redis when it is configured and PROFILE_CACHE_KEY is set, else in the process.
import type { FastifyBaseLogger } from 'fastify'
import { profileCacheKeys, sharedRedisConfigured, type Config } from '../../config.ts'
import type { Caller } from '../../auth/caller.ts'
import type { SharedRedis } from '../../shared-redis.ts'
import { decodeEntry, encodeEntry, sectionsSince, type LastKnownEntry, type SectionTimes } from './entry.ts'
import { cacheKey, identityName, processKey } from './keys.ts'
import { memoryStore } from './memory-store.ts'
import { NO_OBSERVER, type LastKnownObserver } from './observer.ts'
import { redisStore } from './redis-store.ts'

export type { LastKnownEntry, SectionTimes } from './entry.ts'

type LastKnownConfig = Pick<Config, 'PROFILE_STALE_IF_ERROR_S' | 'PROFILE_FRESH_S' | 'PROFILE_CACHE_MAX_BYTES' |
  'PROFILE_CACHE_KEY' | 'PROFILE_CACHE_REDIS_PREFIX' | 'REDIS_URL' | 'REDIS_SENTINELS'>

export interface LastKnownOptions {
  config: LastKnownConfig
  redis: SharedRedis | null
  log: FastifyBaseLogger
  observer?: LastKnownObserver
  /** Epoch milliseconds; tests pass a clock of their own. */
  now?: () => number
}

export interface LastKnown {
  readonly store: 'memory' | 'redis'
  /** PROFILE_FRESH_S in milliseconds; 0 when off. */
  readonly freshMs: number
  now (): number
  /** The caller's copy as stored, or undefined (a miss, a failure, or `timeoutMs` passed). Never rejects. */
  read (caller: Caller, timeoutMs: number): Promise<LastKnownEntry | undefined>
  /** The sections of a copy that may still be served when fresh data cannot be had. */
  servable (entry: LastKnownEntry): LastKnownEntry
  /** Whether every section is younger than PROFILE_FRESH_S. */
  fresh (entry: LastKnownEntry): boolean
  /**
   * Keeps the answered profile (`body`, its serialized JSON) as the caller's copy of the sections `times`
   * names; best-effort, call it once the answer has gone. `digest`: the body's SHA-256 when the caller has it.
   */
  write (caller: Caller, times: SectionTimes, body: Buffer, digest?: Buffer): void
  /**
   * Deletes the caller's copy (the account is gone, or the passport named someone else): in this instance's memory,
   * or in Redis, retried until Redis confirms it and never served by this instance meanwhile.
   */
  forget (caller: Caller): void
  /** Bytes held in the process. */
  readonly size: number
  /** Lets go of what the process holds (the app closes); copies in Redis stay for the next instance. */
  close (): void
}

/** The store, or null when copies are off (PROFILE_STALE_IF_ERROR_S and PROFILE_FRESH_S both 0). */
export function createLastKnown (options: LastKnownOptions): LastKnown | null {
  const { config, redis, log, observer = NO_OBSERVER, now = Date.now } = options
  const staleMs = config.PROFILE_STALE_IF_ERROR_S * 1000
  const freshMs = config.PROFILE_FRESH_S * 1000
  if (staleMs === 0 && freshMs === 0) return null
  const shared = redis !== null && config.PROFILE_CACHE_KEY !== undefined
  const keys = config.PROFILE_CACHE_KEY === undefined
    ? [processKey()]
    : profileCacheKeys(config.PROFILE_CACHE_KEY).map(cacheKey)
  const prefix = config.PROFILE_CACHE_REDIS_PREFIX
  // In Redis a copy written under a retired key keeps its name: every key's name is asked in one MGET.
  const names: (caller: Caller) => string[] = shared
    ? caller => keys.map(key => prefix + identityName(key, caller))
    : caller => [identityName(keys[0]!, caller)]
  const store = shared
    ? redisStore({
      redis, keys, ttlSeconds: Math.max(config.PROFILE_STALE_IF_ERROR_S, config.PROFILE_FRESH_S), observer, log
    })
    : memoryStore(config.PROFILE_CACHE_MAX_BYTES, observer)
  // The memory store's copies are this instance's alone: its line says so, since a deletion is too.
  const perInstance = 'a client the passport no longer knows is forgotten by the instance that saw it only; ' +
    'with more than one replica set REDIS_URL and PROFILE_CACHE_KEY'
  if (sharedRedisConfigured(config) && !shared) {
    log.warn({ lastKnown: { store: 'memory' } }, 'last-known profiles stay in this process, per instance: a shared ' +
      `Redis is set but PROFILE_CACHE_KEY is not (copies in Redis must be encrypted); ${perInstance}`)
  } else {
    const { PROFILE_STALE_IF_ERROR_S: staleIfErrorS, PROFILE_FRESH_S: freshS } = config
    const settings = { store: store.kind, staleIfErrorS, freshS }
    log.info({ lastKnown: settings },
      shared
        ? 'last-known profiles kept in Redis, encrypted'
        : `last-known profiles kept in this process, per instance: ${perInstance}`)
  }

  return {
    store: store.kind,
    freshMs,
    now,
    async read (caller, timeoutMs) {
      const plain = await store.read(names(caller), timeoutMs)
      if (plain === undefined) return undefined
      const entry = decodeEntry(plain)
      // The name already binds the copy to this identity; the uid inside must agree all the same.
      if (entry === undefined) return undefined
      const uid = entry.passport?.value.uid_client.toUpperCase()
      if (uid !== undefined && uid !== caller.uid_client) return undefined
      return entry
    },
    servable: entry => sectionsSince(entry, now() - staleMs),
    fresh (entry) {
      const since = now() - freshMs
      const { passport, discount, contractor } = entry
      return freshMs > 0 && passport !== undefined && discount !== undefined && contractor !== undefined &&
        passport.at > since && discount.at > since && contractor.at > since
    },
    write (caller, times, body, digest) { store.write(names(caller)[0]!, encodeEntry(times, body), digest) },
    forget (caller) { store.delete(names(caller)) },
    get size () { return store.size },
    close () { store.clear() }
  }
}
