// The shared Redis's connection settings (src/shared-redis.ts) as ioredis takes them: REDIS_URL alone as today;
// with REDIS_SENTINELS, the Sentinels name the primary and REDIS_URL gives only its scheme, credentials and database.
// Nothing listens on the ports used: each client is disconnected before it could reach anything.
import t from 'tap'
import { Redis } from 'ioredis'
import { connectRedis } from '../src/shared-redis.ts'
import { freePort } from './helpers/real-servers.ts'

const quiet = { info () {}, warn () {} }
const timeouts = { REDIS_TIMEOUT_MS: 100, REDIS_CONNECT_TIMEOUT_MS: 1000, REDIS_SENTINEL_NAME: 'mymaster' }

/** ioredis's options of a client made from `config`, closed at once. */
async function optionsOf (config: Parameters<typeof connectRedis>[1]) {
  const redis = connectRedis(Redis, config, quiet)
  await redis.close()
  return redis.client.options
}

t.test('REDIS_URL alone: its host, port, password and database, no Sentinel', async t => {
  const port = await freePort()
  const options = await optionsOf({ ...timeouts, REDIS_URL: `redis://:secret@127.0.0.1:${port}/3` })
  t.match(options,
    { host: '127.0.0.1', port, password: 'secret', db: 3, commandTimeout: 100, enableOfflineQueue: false })
  t.notOk(options.sentinels, 'no Sentinels')
})

t.test('REDIS_SENTINELS: the Sentinels, the group and their password; REDIS_URL\'s scheme, credentials and ' +
  'database for the primary', async t => {
  const [one, two] = [await freePort(), await freePort()]
  const options = await optionsOf({
    ...timeouts,
    REDIS_SENTINELS: `127.0.0.1:${one}, [::1]:${two}`,
    REDIS_SENTINEL_NAME: 'dealer',
    REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
    REDIS_URL: 'rediss://app:primary-secret@ignored.example:6380/2'
  })
  t.match(options, {
    sentinels: [{ host: '127.0.0.1', port: one }, { host: '::1', port: two }],
    name: 'dealer',
    sentinelPassword: 'sentinel-secret',
    username: 'app',
    password: 'primary-secret',
    db: 2,
    enableTLSForSentinelMode: true,
    failoverDetector: true,
    commandTimeout: 100
  })
  t.ok(options.tls, 'rediss://: TLS to the primary')

  const bare = await optionsOf({ ...timeouts, REDIS_SENTINELS: `127.0.0.1:${one}` })
  t.match(bare, { sentinels: [{ host: '127.0.0.1', port: one }], name: 'mymaster', enableTLSForSentinelMode: false })
  t.notOk(bare.password, 'no REDIS_URL: no password')
  t.notOk(bare.sentinelPassword)
})
