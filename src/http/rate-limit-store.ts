// @fastify/rate-limit's own Redis store, wrapped to report each command's outcome, skip Redis while it is down and
// name the keys; its errors go back to skipOnError, so the limits fail open (docs/performance.md, register).
// Keys: `<REDIS_KEY_PREFIX><route>:<key>` (e.g. `dealer-bff:rl:auth-failures:203.0.113.7`), integers that expire.
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'
import type { SharedRedis } from '../shared-redis.ts'

interface Counted { current: number, ttl: number }
type Callback = (error: Error | null, result?: Counted) => void

interface Counter {
  incr (key: string, callback: Callback, timeWindow: number, max: number): void
  read (key: string, callback: Callback, timeWindow: number, max: number): void
}

type RedisStoreClass = new (
  continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key: string
) => Counter

// Not in the package's types, but a file of the package (no `exports` map) that its `redis` option uses.
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass

/** The parameters @fastify/rate-limit gives a store: a route's (routeInfo is the route) or a limiter's. */
interface StoreParams {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
  routeInfo?: { url?: string }
}

const BYPASSED = new Error('Redis is down; bypassed until the next probe')

/** The `store` option of @fastify/rate-limit: counters under `prefix` in the shared Redis. */
export function sharedStore (redis: SharedRedis, prefix: string) {
  function outcome (callback: Callback): Callback {
    return (error, result) => {
      if (error === null) redis.succeeded()
      else redis.failed(error)
      callback(error, result)
    }
  }

  return class SharedStore {
    readonly #counter: Counter

    constructor (params: StoreParams, key = prefix) {
      this.#counter = new RedisStore(
        params.continueExceeding === true, params.exponentialBackoff === true, redis.client, key
      )
    }

    incr (key: string, callback: Callback, timeWindow: number, max: number): void {
      if (redis.usable()) this.#counter.incr(key, outcome(callback), timeWindow, max)
      else outcome(callback)(BYPASSED)
    }

    read (key: string, callback: Callback, timeWindow: number, max: number): void {
      if (redis.usable()) this.#counter.read(key, outcome(callback), timeWindow, max)
      else outcome(callback)(BYPASSED)
    }

    // A route's limit is named by its path; the createRateLimit limiter (no route) counts refused credentials.
    // `params` are the limit's merged parameters with the route as `routeInfo` (not "route options" as typed).
    child (params: object): SharedStore {
      const { routeInfo } = params as StoreParams
      return new SharedStore(params, `${prefix}${routeInfo?.url ?? 'auth-failures'}:`)
    }
  }
}
