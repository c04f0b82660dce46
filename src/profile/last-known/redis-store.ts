// Copies in the shared Redis, readable by every instance and by nobody else: each value sealed with
// AES-256-GCM under PROFILE_CACHE_KEY, each key name an HMAC, with a TTL of the longest a copy may serve.
// Best-effort like the rate limits: a read is bounded and a failure is a miss, writes are never awaited.
// A delete is not best-effort (docs/operations.md, Last-known profiles): until Redis confirms it, the name is
// pending here, retried with backoff, and this instance serves no copy under it.
import type { FastifyBaseLogger } from 'fastify'
import type { SharedRedis } from '../../shared-redis.ts'
import { open, seal, type CacheKey } from './keys.ts'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

/** Names whose delete waits for Redis; past it, no copy is served from Redis until the overflow's copies expire. */
export const MAX_PENDING_DELETES = 10_000
const FIRST_RETRY_MS = 100
const MAX_RETRY_MS = 2000
const NAMES_PER_DEL = 500

export interface RedisStoreOptions {
  redis: SharedRedis
  /** PROFILE_CACHE_KEY's keys, the encrypting one first. */
  keys: readonly CacheKey[]
  ttlSeconds: number
  observer: LastKnownObserver
  log: FastifyBaseLogger
  /** Epoch milliseconds, for the pending deletes' time bound (Redis's TTLs run on real time). */
  now?: () => number
}

/** A delete not yet confirmed; `until` is when the copy it deletes has expired in Redis anyway. */
interface Pending { until: number }

export function redisStore ({ redis, keys, ttlSeconds, observer, log, now = Date.now }: RedisStoreOptions): CopyStore {
  const client = redis.client
  const ttlMs = ttlSeconds * 1000
  // In order of `until` (each new one is the latest): the expired ones are at the front.
  const pending = new Map<string, Pending>()
  // Past MAX_PENDING_DELETES, every read is a miss until then: a name not kept could be a deleted client's.
  let refuseUntil = 0
  let flushing = false
  let closed = false
  let retryMs = FIRST_RETRY_MS
  let timer: NodeJS.Timeout | undefined

  function failed (operation: 'read' | 'write' | 'delete', error: unknown): void {
    observer.storeFailed(operation)
    // The message only: a name is an HMAC, but nothing else of the command belongs in a log.
    log.debug({ redis: { operation, error: (error as Error).message } }, 'last-known store: Redis command failed')
  }

  function dropExpired (): void {
    const at = now()
    for (const [name, { until }] of pending) {
      if (until > at) break
      pending.delete(name)
    }
  }

  /** Sends the pending deletes, a batch at a time; on failure, again after a backoff, or at once on reconnection. */
  function flush (): void {
    clearTimeout(timer)
    timer = undefined
    dropExpired()
    if (closed || flushing || pending.size === 0) return
    flushing = true
    const batch: Array<[string, Pending]> = []
    for (const entry of pending) {
      batch.push(entry)
      if (batch.length === NAMES_PER_DEL) break
    }
    client.del(...batch.map(([name]) => name)).then(() => {
      // A name written or forgotten again since has an entry of its own, left as it is.
      for (const [name, entry] of batch) if (pending.get(name) === entry) pending.delete(name)
      retryMs = FIRST_RETRY_MS
      flushing = false
      flush()
    }, (error: unknown) => {
      failed('delete', error)
      flushing = false
      if (closed) return
      timer = setTimeout(flush, retryMs)
      timer.unref()
      retryMs = Math.min(retryMs * 2, MAX_RETRY_MS)
    })
  }

  function reconnected (): void {
    retryMs = FIRST_RETRY_MS
    flush()
  }
  client.on('ready', reconnected)

  async function read (names: readonly string[], timeoutMs: number): Promise<Buffer | undefined> {
    if (now() < refuseUntil) return undefined
    dropExpired()
    // A name whose delete is pending is a miss: its copy may still be in Redis.
    const asked = names.filter(name => !pending.has(name))
    // Down: one probe a second, as for the rate limits; out of budget: no time to ask.
    if (asked.length === 0 || timeoutMs < 1 || !redis.usable()) return undefined
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>(resolve => { timer = setTimeout(resolve, timeoutMs, undefined) })
    const values = client.mgetBuffer(...asked).catch((error: unknown) => { failed('read', error); return undefined })
    const found = await Promise.race([values, late])
    clearTimeout(timer)
    if (found === undefined) return undefined
    for (let i = 0; i < asked.length; i++) {
      const sealed = found[i]
      if (sealed === null || sealed === undefined) continue
      const plain = open(keys, asked[i]!, sealed)
      if (plain !== undefined) return plain
      observer.decryptFailed()
      log.warn({ lastKnown: { store: 'redis' } },
        'last-known copy not opened by any PROFILE_CACHE_KEY: treated as a miss')
    }
    return undefined
  }

  return {
    kind: 'redis',
    read,
    write (name, chunks) {
      if (!redis.usable()) return
      const superseded = pending.get(name)
      client.set(name, seal(keys[0]!, name, chunks), 'EX', ttlSeconds).then(() => {
        // The client is found again: its new copy replaced the one a pending delete was for.
        if (superseded !== undefined && pending.get(name) === superseded) pending.delete(name)
        observer.written()
      }, (error: unknown) => { failed('write', error) })
    },
    delete (names) {
      dropExpired()
      const until = now() + ttlMs
      for (const name of names) {
        pending.delete(name)
        if (pending.size < MAX_PENDING_DELETES) {
          pending.set(name, { until })
          continue
        }
        if (refuseUntil <= now()) {
          log.warn({ lastKnown: { store: 'redis', pendingDeletes: pending.size } },
            'last-known deletes wait for Redis beyond their bound: no copy is served from Redis until they expire')
        }
        refuseUntil = until
        // One attempt: if it fails, the copy expires by its TTL, and none is served from Redis until then.
        client.del(name).catch((error: unknown) => { failed('delete', error) })
      }
      flush()
    },
    size: 0,
    // The shared Redis is closed by its plugin; the copies in it serve the next instance. Deletes still
    // pending are let go: their copies expire by their TTL.
    clear () {
      closed = true
      clearTimeout(timer)
      timer = undefined
      client.off('ready', reconnected)
    }
  }
}
