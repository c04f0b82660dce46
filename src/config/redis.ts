// The shared Redis's variables: where it is, the prefix of the rate-limit keys, and how long anything waits for it.
import { isIP } from 'node:net'
import { Type, type Static } from 'typebox'
import { Millis, Secret } from './kinds.ts'

export const RedisConfigSchema = Type.Object({
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    description: 'Redis shared by every instance (redis:// or rediss://) for the rate-limit counters and, with ' +
      'PROFILE_CACHE_KEY, the last-known profiles; unset, each instance counts and keeps copies in memory. With ' +
      'REDIS_SENTINELS it gives only the scheme, credentials and database (its host is ignored).'
  })),
  REDIS_SENTINELS: Type.Optional(Type.String({
    pattern: '^\\s*[^\\s,]+:\\d{1,5}\\s*(,\\s*[^\\s,]+:\\d{1,5}\\s*)*$',
    description: 'Comma list of the Redis Sentinels (host:port, an IPv6 host in brackets) that name the shared ' +
      'Redis\'s primary: each instance follows a failover to the new primary without a restart.'
  })),
  REDIS_SENTINEL_NAME: Type.String({
    pattern: '^[A-Za-z0-9._-]{1,64}$',
    default: 'mymaster',
    description: 'The group the Sentinels of REDIS_SENTINELS monitor (their `sentinel monitor` name).'
  }),
  REDIS_SENTINEL_PASSWORD: Type.Optional(Secret('Password of the Sentinels of REDIS_SENTINELS, when they require ' +
    'one (the primary\'s is REDIS_URL\'s).')),
  REDIS_KEY_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    default: 'dealer-bff:rl:',
    description: 'Prefix of every rate-limit key in Redis (letters, digits, `:_.-`), so several services can share ' +
      'one Redis.'
  }),
  REDIS_TIMEOUT_MS: Type.Integer({
    minimum: 10,
    maximum: 5000,
    default: 100,
    description: 'Longest wait for one Redis command; past it the check counts in the instance\'s own memory and ' +
      'the request goes on.'
  }),
  REDIS_CONNECT_TIMEOUT_MS: Millis(1000, 'Longest wait for a connection to Redis, at start-up too, before retrying ' +
    'in the background (requests never wait for it).')
})

type RedisConfig = Static<typeof RedisConfigSchema>

/** Whether the instances share a Redis: named by REDIS_URL, or by its Sentinels. */
export function sharedRedisConfigured (config: Pick<RedisConfig, 'REDIS_URL' | 'REDIS_SENTINELS'>): boolean {
  return config.REDIS_URL !== undefined || config.REDIS_SENTINELS !== undefined
}

/** REDIS_SENTINELS' addresses; IPv6 hosts without their brackets. */
export function redisSentinels (value: string): Array<{ host: string, port: number }> {
  return value.split(',').map(entry => {
    const address = entry.trim()
    const at = address.lastIndexOf(':')
    return { host: address.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(address.slice(at + 1)) }
  })
}

/** The Sentinels' name and password make sense only with the Sentinels. */
export function sentinelVariableProblems (variables: Record<string, string | undefined>): string[] {
  if (variables.REDIS_SENTINELS !== undefined) return []
  return ['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD'].filter(name => variables[name] !== undefined)
    .map(name => `${name} is set without REDIS_SENTINELS`)
}

/** REDIS_URL must parse (ioredis would throw at start, the URL with its password in the error); each Sentinel address
 * must be one a connection can go to. */
export function sentinelProblems (config: RedisConfig): string[] {
  if (config.REDIS_URL !== undefined && !URL.canParse(config.REDIS_URL)) return ['REDIS_URL has an invalid value']
  if (config.REDIS_SENTINELS === undefined) return []
  const bracketed = config.REDIS_SENTINELS.split(',').map(entry => entry.trim().startsWith('['))
  const sentinels = redisSentinels(config.REDIS_SENTINELS)
  if (sentinels.some(({ host, port }, i) => port < 1 || port > 65535 ||
    (host.includes(':') && (!bracketed[i] || isIP(host) !== 6)))) {
    return ['REDIS_SENTINELS must be a comma list of host:port (ports 1-65535, an IPv6 host in brackets)']
  }
  return []
}
