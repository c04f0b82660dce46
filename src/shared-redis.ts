// The Redis every instance shares (REDIS_URL, or the primary its Sentinels name, REDIS_SENTINELS): the rate limits
// count in it, and the last-known profiles are kept in it when PROFILE_CACHE_KEY is set. Only best-effort: it must
// never become a new way for a request to fail or wait. Commands fail fast instead of queueing while disconnected,
// each one is bounded by REDIS_TIMEOUT_MS, the client keeps reconnecting in the background (the service starts
// without Redis and uses it once it answers; with Sentinels, to whichever primary they name), and a Redis that hangs
// is bypassed after its first timeout, probed once a second. State changes and primary changes are logged once,
// failures counted. A shared leaf: the plugin (plugins/app/redis.ts) owns its life, its users only this shape.
import type { Registry } from 'prom-client'
import type { Redis } from 'ioredis'
import { redisSentinels, type Config } from './config.ts'

/** `connecting` until the first connection, `up` while it answers, `down` while unreachable or slow. */
export const REDIS_STATES = ['connecting', 'up', 'down'] as const
type RedisState = typeof REDIS_STATES[number]

export interface SharedRedis {
  readonly client: Redis
  readonly state: RedisState
  /** Rate-limit checks Redis failed since start (unreachable, timed out, or bypassed): each counted locally. */
  readonly failures: number
  /** Times the instance found itself on another primary than the one before (a Sentinel failover). */
  readonly primaryChanges: number
  /**
   * Whether to send a command now: yes while up (or connecting: ioredis answers at once then); while down,
   * only one probe a second, so a hung Redis costs a request at most one timeout.
   */
  usable (): boolean
  /** The store reports each command's outcome. */
  failed (error: Error): void
  succeeded (): void
  /** Quits (or drops a connection not ready) and reconnects no more. */
  close (): Promise<void>
}

const PROBE_INTERVAL_MS = 1000
const MAX_RECONNECT_DELAY_MS = 2000

/** Reconnect soon at first, then every two seconds, forever: Redis may come back at any time. */
function reconnectDelay (attempt: number): number {
  return Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS)
}

type RedisConfig = Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_NAME' | 'REDIS_SENTINEL_PASSWORD' |
  'REDIS_TIMEOUT_MS' | 'REDIS_CONNECT_TIMEOUT_MS'>

interface StateLog {
  info (fields: object, message: string): void
  warn (fields: object, message: string): void
}

/** With Sentinels: ask them for the primary, and drop a connection as soon as they announce another one. */
function sentinelOptions (config: RedisConfig, sentinels: string) {
  return {
    sentinels: redisSentinels(sentinels),
    name: config.REDIS_SENTINEL_NAME,
    ...(config.REDIS_SENTINEL_PASSWORD === undefined ? {} : { sentinelPassword: config.REDIS_SENTINEL_PASSWORD }),
    // A primary that hangs rather than dies keeps its connection open: the Sentinels' +switch-master closes it.
    failoverDetector: true,
    sentinelRetryStrategy: reconnectDelay,
    sentinelCommandTimeout: config.REDIS_CONNECT_TIMEOUT_MS,
    // rediss:// in REDIS_URL: TLS to the primary, as without Sentinels.
    enableTLSForSentinelMode: config.REDIS_URL?.startsWith('rediss:') === true
  }
}

/**
 * The client and its state. REDIS_URL gives the address, credentials, database and TLS; with REDIS_SENTINELS, the
 * Sentinels give the address and REDIS_URL (when set) the rest. No URL or password is ever logged.
 */
export function connectRedis (RedisClient: typeof Redis, config: RedisConfig, log: StateLog): SharedRedis {
  const options = {
    connectTimeout: config.REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: config.REDIS_TIMEOUT_MS,
    // While disconnected a command fails at once rather than waiting in a queue for a reconnection.
    enableOfflineQueue: false,
    // A command cut off by a lost connection fails rather than being sent again (an INCR counted twice).
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: reconnectDelay,
    ...(config.REDIS_SENTINELS === undefined ? {} : sentinelOptions(config, config.REDIS_SENTINELS))
  }
  const client = config.REDIS_URL === undefined
    ? new RedisClient(options)
    : new RedisClient(config.REDIS_URL, options)
  let state: RedisState = 'connecting'
  let failures = 0
  let nextProbe = 0
  let primary: string | undefined
  let primaryChanges = 0

  function goDown (error: Error): void {
    if (state === 'down') return
    state = 'down'
    nextProbe = Date.now() + PROBE_INTERVAL_MS
    // The message and code only: enough to act on, and no chance of the URL's password.
    log.warn({ redis: { error: error.message, code: (error as NodeJS.ErrnoException).code } },
      'Redis unreachable: each instance limits on its own until it answers again')
  }
  function goUp (): void {
    if (state === 'up') return
    log.info({}, state === 'connecting'
      ? 'Redis connected: rate limits are shared'
      : 'Redis answers again: rate limits are shared')
    state = 'up'
  }
  /** Each connection made: the address it reached, a new one after a failover (host:port only, no credential). */
  function connected (): void {
    const { remoteAddress, remotePort } = client.stream as { remoteAddress?: string, remotePort?: number }
    const address = `${remoteAddress ?? '?'}:${remotePort ?? '?'}`
    if (primary !== undefined && primary !== address) {
      primaryChanges++
      log.warn({ redis: { primary: address, previous: primary } }, 'Redis primary changed: now counting there')
    }
    primary = address
    restarts = 0
    goUp()
  }

  // ioredis gives up for good (status `end`) when the Sentinels' +switch-master closes a connection still being
  // made: start again, as its own reconnections would, until closed.
  let closing = false
  let restart: NodeJS.Timeout | undefined
  // Restarts since the last connection: the same backoff as ioredis's own reconnections, not a fixed 100 ms.
  let restarts = 0
  client.on('end', () => {
    if (closing) return
    clearTimeout(restart)
    restart = setTimeout(() => { if (!closing) client.connect().catch(() => {}) }, reconnectDelay(++restarts))
    restart.unref()
  })
  // Without an 'error' listener ioredis prints every failed reconnection to the console.
  client.on('error', goDown)
  client.on('close', () => { if (state === 'up') goDown(new Error('connection closed')) })
  client.on('ready', connected)

  return {
    client,
    get state () { return state },
    get failures () { return failures },
    get primaryChanges () { return primaryChanges },
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
    },
    async close () {
      closing = true
      clearTimeout(restart)
      if (client.status === 'ready') await client.quit().catch(() => { client.disconnect() })
      else client.disconnect()
    }
  }
}

/** Redis's metrics, read when scraped: whether it answers, the checks it failed, and the primary changes seen. */
export function redisMetrics ({ Counter, Gauge }: Pick<typeof import('prom-client'), 'Counter' | 'Gauge'>,
  registry: Registry, redis: SharedRedis): void {
  const registers = [registry]
  /* eslint-disable no-new -- prom-client metrics live in the registry they are given */
  new Gauge({
    name: 'bff_redis_up',
    help: 'Whether the shared Redis of the rate limits answers (1) or not (0: each instance limits on its own).',
    registers,
    collect () { this.set(redis.state === 'up' ? 1 : 0) }
  })
  new Counter({
    name: 'bff_rate_limit_store_failures_total',
    help: 'Rate-limit checks Redis failed (unreachable, slow, or bypassed while down), each counted in this ' +
      'instance\'s memory instead.',
    registers,
    collect () {
      this.reset()
      this.inc(redis.failures)
    }
  })
  new Counter({
    name: 'bff_redis_primary_changes_total',
    help: 'Times this instance reconnected to another Redis primary than before (a failover).',
    registers,
    collect () {
      this.reset()
      this.inc(redis.primaryChanges)
    }
  })
  /* eslint-enable no-new */
}
