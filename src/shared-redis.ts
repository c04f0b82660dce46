// The Redis every instance shares (REDIS_URL): the rate limits count in it, and the last-known profiles are kept
// in it when PROFILE_CACHE_KEY is set. Only best-effort: it must never become a new way for a request to fail or
// wait. Commands fail fast instead of queueing while disconnected, each one is bounded by REDIS_TIMEOUT_MS, the
// client keeps reconnecting in the background (the service starts without Redis and uses it once it answers), and
// a Redis that hangs is bypassed after its first timeout, probed once a second. State changes are logged once,
// failures counted. A shared leaf: the plugin (plugins/app/redis.ts) owns its life, its users only this shape.
import type { Registry } from 'prom-client'
import type { Redis } from 'ioredis'
import type { Config } from './config.ts'

/** `connecting` until the first connection, `up` while it answers, `down` while unreachable or slow. */
export const REDIS_STATES = ['connecting', 'up', 'down'] as const
type RedisState = typeof REDIS_STATES[number]

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

const PROBE_INTERVAL_MS = 1000
const MAX_RECONNECT_DELAY_MS = 2000

/** Reconnect soon at first, then every two seconds, forever: Redis may come back at any time. */
function reconnectDelay (attempt: number): number {
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
    log.info({}, state === 'connecting'
      ? 'Redis connected: rate limits are shared'
      : 'Redis answers again: rate limits are shared')
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

/** Redis's metrics, read when scraped: whether it answers, and the rate-limit checks that failed open. */
export function redisMetrics ({ Counter, Gauge }: Pick<typeof import('prom-client'), 'Counter' | 'Gauge'>,
  registry: Registry, redis: SharedRedis): void {
  const registers = [registry]
  /* eslint-disable no-new -- prom-client metrics live in the registry they are given */
  new Gauge({
    name: 'bff_redis_up',
    help: 'Whether the shared Redis of the rate limits answers (1) or not (0: limits fail open).',
    registers,
    collect () { this.set(redis.state === 'up' ? 1 : 0) }
  })
  new Counter({
    name: 'bff_rate_limit_store_failures_total',
    help: 'Rate-limit checks that failed open because Redis was unreachable, slow or bypassed while down.',
    registers,
    collect () {
      this.reset()
      this.inc(redis.failures)
    }
  })
  /* eslint-enable no-new */
}
