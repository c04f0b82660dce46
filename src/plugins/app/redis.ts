// The Redis every instance shares (REDIS_URL) for its rate-limit counters and, with PROFILE_CACHE_KEY, the last-known
// profiles; only best-effort: it must never become a new way for a request to fail or wait. Commands fail fast instead
// of queueing while disconnected, each one is bounded by REDIS_TIMEOUT_MS, the client keeps reconnecting in the
// background (the service starts without Redis and uses it once it answers), and a Redis that hangs is bypassed after
// its first timeout, probed once a second. The limits fail open on every failure (the store passes errors to
// @fastify/rate-limit with skipOnError); state changes are logged once, failures counted.
import { once } from 'node:events'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import type { Config } from '../../config.ts'

/** `connecting` until the first connection, `up` while it answers, `down` while unreachable or slow. */
export const REDIS_STATES = ['connecting', 'up', 'down'] as const
export type RedisState = typeof REDIS_STATES[number]

export interface SharedRedis {
  readonly client: Redis
  readonly state: RedisState
  /** Rate-limit checks that failed open since start (Redis failed, timed out, or was bypassed). */
  readonly failures: number
  /**
   * Whether to send a command now: yes while up (or connecting: ioredis answers at once then); while down,
   * only one probe a second, so a hung Redis costs a request at most one timeout.
   */
  usable (): boolean
  /** The store reports each command's outcome. */
  failed (error: Error): void
  succeeded (): void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when REDIS_URL is unset: every instance counts in memory. */
    redis: SharedRedis | null
  }
}

const PROBE_INTERVAL_MS = 1000
const MAX_RECONNECT_DELAY_MS = 2000

/** Reconnect soon at first, then every two seconds, forever: Redis may come back at any time. */
export function reconnectDelay (attempt: number): number {
  return Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS)
}

type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_TIMEOUT_MS' | 'REDIS_CONNECT_TIMEOUT_MS'>

interface StateLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

/** The client and its state; `url` is never logged (it may carry a password). */
export function connectRedis (RedisClient: typeof Redis, url: string, config: RedisConfig, log: StateLog): SharedRedis {
  const client = new RedisClient(url, {
    connectTimeout: config.REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: config.REDIS_TIMEOUT_MS,
    // While disconnected a command fails at once rather than waiting in a queue for a reconnection.
    enableOfflineQueue: false,
    // A command cut off by a lost connection fails rather than being sent again (an INCR counted twice).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: reconnectDelay
  })
  let state: RedisState = 'connecting'
  let failures = 0
  let nextProbe = 0

  function goDown (error: Error): void {
    if (state === 'down') return
    state = 'down'
    nextProbe = Date.now() + PROBE_INTERVAL_MS
    // The message and code only: enough to act on, and no chance of the URL's password.
    log.warn({ redis: { error: error.message, code: (error as NodeJS.ErrnoException).code } },
      'Redis unreachable: rate limits fail open until it answers again')
  }
  function goUp (): void {
    if (state === 'up') return
    log.info({}, state === 'connecting' ? 'Redis connected: rate limits are shared' : 'Redis answers again: rate limits are shared')
    state = 'up'
  }

  // Without an 'error' listener ioredis prints every failed reconnection to the console.
  client.on('error', goDown)
  client.on('close', () => { if (state === 'up') goDown(new Error('connection closed')) })
  client.on('ready', goUp)

  return {
    client,
    get state () { return state },
    get failures () { return failures },
    usable () {
      if (state !== 'down') return true
      const now = Date.now()
      if (now < nextProbe) return false
      nextProbe = now + PROBE_INTERVAL_MS
      return true
    },
    failed (error) {
      failures++
      // Before the first connection commands fail at once by design; the connection's own events say
      // whether Redis is reachable.
      if (state !== 'connecting') goDown(error)
    },
    succeeded () {
      if (state !== 'up') goUp()
    }
  }
}

/** Resolves once the client is ready, fails to connect, or `ms` have passed: whichever comes first. */
async function firstConnection (client: Redis, ms: number): Promise<void> {
  // once() rejects on an 'error' event or the timeout: either way, Redis is not there yet.
  await once(client, 'ready', { signal: AbortSignal.timeout(ms) }).catch(() => {})
}

export default fp<{ config: Config }>(async function redisPlugin (fastify, { config }) {
  if (config.REDIS_URL === undefined) {
    fastify.decorate('redis', null)
    return
  }
  // Imported only when configured: unused, ioredis would cost every instance about 2 MiB of heap.
  const { Redis } = await import('ioredis')
  const redis = connectRedis(Redis, config.REDIS_URL, config, fastify.log)
  fastify.decorate('redis', redis)
  // The first requests count too: start-up waits for the first connection, unless it fails or takes
  // longer than a connection attempt may (then Redis is down, and the service starts without it).
  await firstConnection(redis.client, config.REDIS_CONNECT_TIMEOUT_MS)
  // After every request has finished (onClose), so no count is lost on the way out.
  fastify.addHook('onClose', async () => {
    if (redis.client.status === 'ready') {
      await redis.client.quit().catch(() => { redis.client.disconnect() })
    } else {
      redis.client.disconnect()
    }
  })
}, { name: 'redis' })
