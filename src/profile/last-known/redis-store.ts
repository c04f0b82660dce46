// Copies in the shared Redis, readable by every instance and by nobody else: each value sealed with
// AES-256-GCM under PROFILE_CACHE_KEY, each key name an HMAC, with a TTL of the longest a copy may serve.
// Best-effort like the rate limits: a read is bounded and a failure is a miss, writes are never awaited.
import type { FastifyBaseLogger } from 'fastify'
import type { SharedRedis } from '../../shared-redis.ts'
import { open, seal, type CacheKey } from './keys.ts'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

export interface RedisStoreOptions {
  redis: SharedRedis
  /** PROFILE_CACHE_KEY's keys, the encrypting one first. */
  keys: readonly CacheKey[]
  ttlSeconds: number
  observer: LastKnownObserver
  log: FastifyBaseLogger
}

export function redisStore ({ redis, keys, ttlSeconds, observer, log }: RedisStoreOptions): CopyStore {
  const client = redis.client

  function failed (operation: 'read' | 'write' | 'delete', error: unknown): void {
    observer.storeFailed(operation)
    // The message only: a name is an HMAC, but nothing else of the command belongs in a log.
    log.debug({ redis: { operation, error: (error as Error).message } }, 'last-known store: Redis command failed')
  }

  async function read (names: readonly string[], timeoutMs: number): Promise<Buffer | undefined> {
    // Down: one probe a second, as for the rate limits; out of budget: no time to ask.
    if (timeoutMs < 1 || !redis.usable()) return undefined
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>(resolve => { timer = setTimeout(resolve, timeoutMs, undefined) })
    const values = client.mgetBuffer(...names).catch((error: unknown) => { failed('read', error); return undefined })
    const found = await Promise.race([values, late])
    clearTimeout(timer)
    if (found === undefined) return undefined
    for (let i = 0; i < names.length; i++) {
      const sealed = found[i]
      if (sealed === null || sealed === undefined) continue
      const plain = open(keys, names[i]!, sealed)
      if (plain !== undefined) return plain
      observer.decryptFailed()
      log.warn({ lastKnown: { store: 'redis' } }, 'last-known copy not opened by any PROFILE_CACHE_KEY: treated as a miss')
    }
    return undefined
  }

  return {
    kind: 'redis',
    read,
    write (name, chunks) {
      if (!redis.usable()) return
      client.set(name, seal(keys[0]!, name, chunks), 'EX', ttlSeconds)
        .then(() => { observer.written() }, (error: unknown) => { failed('write', error) })
    },
    delete (names) {
      client.del(...names).catch((error: unknown) => { failed('delete', error) })
    },
    size: 0,
    // The shared Redis is closed by its plugin; the copies in it serve the next instance.
    clear () {}
  }
}
