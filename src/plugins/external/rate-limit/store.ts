// @fastify/rate-limit's own Redis store, wrapped to report each command's outcome, skip Redis while it is down and
// name the keys (docs/performance.md, register). While Redis cannot count (down, slow, bypassed), each check counts
// in this instance's own memory instead, with the package's own in-memory store: a client then gets at most the
// limit from each instance, never an unlimited pass (docs/security.md). Keys: `<REDIS_KEY_PREFIX><route>:<key>`
// (e.g. `dealer-bff:rl:auth-failures:203.0.113.7`), integers that expire. A route's limit is one counter per path in
// every store: the package makes a store per route, so GET and its HEAD route would count apart in memory.
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import type { SharedRedis } from '../../../shared-redis.ts'

interface Counted { current: number, ttl: number }
type Callback = (error: Error | null, result?: Counted) => void

interface Counter {
  incr (key: string, callback: Callback, timeWindow: number, max: number): void
  read (key: string, callback: Callback, timeWindow: number, max: number): void
}

type RedisStoreClass = new (
  continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string
) => Counter
type LocalStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => Counter

// Not in the package's types, but files of the package (no `exports` map) that its `redis` option and its default
// store use.
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass

/** The parameters @fastify/rate-limit gives a store: a route's (routeInfo is the route) or a limiter's. */
interface StoreParams {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
  cache?: number
  routeInfo?: { url?: string }
}

/** The counter a limit draws from: its route's path, or the refused-credential limiter's (no route). */
const counterName = (params: StoreParams): string =>
  params.routeInfo === undefined ? 'global' : params.routeInfo.url ?? 'auth-failures'

/**
 * The package's in-memory store, one per path: the default when there is no shared Redis. The package asks for a
 * store per route, and Fastify adds a HEAD route beside each GET with the same limit; one counter serves both.
 */
export function localStore () {
  const byPath = new Map<string, Counter>()
  const counterOf = (params: StoreParams): Counter => {
    const name = counterName(params)
    let store = byPath.get(name)
    if (store === undefined) {
      store = new LocalStore(params.continueExceeding === true, params.exponentialBackoff === true, params.cache)
      byPath.set(name, store)
    }
    return store
  }
  return class LocalStorePerPath implements Counter {
    readonly #counter: Counter

    constructor (params: StoreParams) {
      this.#counter = counterOf(params)
    }

    incr (key: string, callback: Callback, timeWindow: number, max: number): void {
      this.#counter.incr(key, callback, timeWindow, max)
    }

    read (key: string, callback: Callback, timeWindow: number, max: number): void {
      this.#counter.read(key, callback, timeWindow, max)
    }

    child (params: object): LocalStorePerPath {
      return new LocalStorePerPath(params as StoreParams)
    }
  }
}

const BYPASSED = new Error('Redis is down; bypassed until the next probe')

/**
 * The `store` option of @fastify/rate-limit: counters under `prefix` in the shared Redis, or in this instance's
 * memory while Redis fails; `refusedLocally` hears of each request refused on the local count.
 */
export function sharedStore (redis: SharedRedis, prefix: string, refusedLocally: () => void) {
  // One store per path, so that GET and HEAD share the fallback's count as they share Redis's keys.
  const byPath = new Map<string, SharedStore>()
  class SharedStore {
    readonly #counter: Counter
    readonly #local: Counter

    constructor (params: StoreParams, key = prefix) {
      const continueExceeding = params.continueExceeding === true
      const exponentialBackoff = params.exponentialBackoff === true
      this.#counter = new RedisStore(continueExceeding, exponentialBackoff, redis.client, key)
      this.#local = new LocalStore(continueExceeding, exponentialBackoff, params.cache)
    }

    incr (key: string, callback: Callback, timeWindow: number, max: number): void {
      this.#count('incr', key, callback, timeWindow, max)
    }

    read (key: string, callback: Callback, timeWindow: number, max: number): void {
      this.#count('read', key, callback, timeWindow, max)
    }

    #count (method: keyof Counter, key: string, callback: Callback, timeWindow: number, max: number): void {
      const locally = (error: Error) => {
        redis.failed(error)
        this.#local[method](key, (localError, result) => {
          if (method === 'incr' && result !== undefined && result.current > max) refusedLocally()
          callback(localError, result)
        }, timeWindow, max)
      }
      if (!redis.usable()) {
        locally(BYPASSED)
        return
      }
      this.#counter[method](key, (error, result) => {
        if (error !== null) {
          locally(error)
          return
        }
        redis.succeeded()
        callback(null, result)
      }, timeWindow, max)
    }

    // A route's limit is named by its path; the createRateLimit limiter (no route) counts refused credentials.
    // `params` are the limit's merged parameters with the route as `routeInfo` (not "route options" as typed).
    child (params: object): SharedStore {
      const name = counterName(params as StoreParams)
      let store = byPath.get(name)
      if (store === undefined) {
        store = new SharedStore(params, `${prefix}${name}:`)
        byPath.set(name, store)
      }
      return store
    }
  }
  return SharedStore
}
