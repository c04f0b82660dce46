// The shared Redis (REDIS_URL or REDIS_SENTINELS) as a decorator: connected with the app, closed after its last
// request. What it is and how it fails is src/shared-redis.ts; its users (the rate limits, the last-known store) take
// that shape.
import { once } from 'node:events'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { sharedRedisConfigured, type Config } from '../../config.ts'
import { connectRedis, redisMetrics, type SharedRedis } from '../../shared-redis.ts'
import { metricsOf } from '../../metrics/registry.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Null when neither REDIS_URL nor REDIS_SENTINELS is set: every instance counts in memory. */
    redis: SharedRedis | null
  }
}

/** Resolves once the client is ready, fails to connect, or `ms` have passed: whichever comes first. */
async function firstConnection (client: Redis, ms: number): Promise<void> {
  // once() rejects on an 'error' event or the timeout: either way, Redis is not there yet.
  await once(client, 'ready', { signal: AbortSignal.timeout(ms) }).catch(() => {})
}

export default fp<{ config: Config }>(async function redisPlugin (fastify, { config }) {
  if (!sharedRedisConfigured(config)) {
    fastify.decorate('redis', null)
    return
  }
  // Imported only when configured: unused, ioredis would cost every instance about 2 MiB of heap.
  const { Redis } = await import('ioredis')
  const redis = connectRedis(Redis, config, fastify.log)
  fastify.decorate('redis', redis)
  const metrics = metricsOf(fastify)
  if (metrics !== null) redisMetrics(metrics.prom, metrics.registry, redis)
  // The first requests count too: start-up waits for the first connection, unless it fails or takes
  // longer than a connection attempt may (then Redis is down, and the service starts without it).
  await firstConnection(redis.client, config.REDIS_CONNECT_TIMEOUT_MS)
  // After every request has finished (onClose), so no count is lost on the way out.
  fastify.addHook('onClose', async () => { await redis.close() })
}, { name: 'redis', dependencies: ['metrics'] })
