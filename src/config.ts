// Environment -> typed, validated Config. The schema is the only statement of the variables, their
// types and defaults; every bad variable is named at once so an operator fixes them in one go.
import envSchema from 'env-schema'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import { parseEnv } from 'node:util'
import { Type, type Static } from 'typebox'
import { AppVersion } from '../schemas/app-version.ts'
import { languages } from './errors.ts'

const Millis = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: 600_000, default: fallback, description })
const PerMinute = (fallback: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: 1_000_000, default: fallback, description })
const Secret = (description: string) => Type.String({ minLength: 1, description })

export const ConfigSchema = Type.Object({
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Address the front listens on.' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'Port the front listens on.' }),
  UPSTREAM_URL: Type.String({
    pattern: '^https?://[^\\s/?#]+[^\\s?#]*$',
    description: 'Base URL of the upstream operations (https, no query; http only to the loopback or with ' +
      'UPSTREAM_ALLOW_HTTP).'
  }),
  UPSTREAM_ALLOW_HTTP: Type.Boolean({
    default: false,
    description: 'Allows an http:// UPSTREAM_URL to a host other than the loopback, sending the upstream keys in ' +
      'clear text (only for a network that encrypts on its own, such as a service mesh).'
  }),
  PASSPORT_API_KEY: Secret('x-authorization value for /bc_passport/*.'),
  DEALER_API_KEY: Secret('x-authorization value for /bc_api_web_service/*.'),
  AUTH_JWT_SECRET: Type.Optional(Type.String({
    minLength: 32,
    description: 'HS256 secret that verifies callers\' tokens (32 characters or more).'
  })),
  AUTH_JWT_PUBLIC_KEY: Type.Optional(Type.String({
    pattern: '-----BEGIN PUBLIC KEY-----',
    description: 'RS256/ES256 public key in PEM that verifies callers\' tokens.'
  })),
  AUTH_JWKS_URL: Type.Optional(Type.String({
    pattern: '^https?://[^\\s/?#]+[^\\s#]*$',
    description: 'The identity provider\'s JSON Web Key Set URL (https; http only to the loopback): tokens are ' +
      'verified with the published key their `kid` names (RS256/PS256, ES256, EdDSA), refreshed without a restart. ' +
      'Set AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE with it.'
  })),
  AUTH_JWKS_REFRESH_S: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 300,
    description: 'How often the key set of AUTH_JWKS_URL is refreshed in the background (less often when its ' +
      'Cache-Control max-age says so); a token with an unknown `kid` may trigger one early refresh per cooldown ' +
      '(30 s, or this when shorter).'
  }),
  AUTH_JWT_ISSUER: Type.Optional(Type.String({
    minLength: 1,
    description: 'When set, a caller\'s token must carry exactly this `iss` claim (strongly recommended: refuses ' +
      'tokens of other issuers sharing the key).'
  })),
  AUTH_JWT_AUDIENCE: Type.Optional(Type.String({
    minLength: 1,
    description: 'When set, a caller\'s token must carry this `aud` claim (strongly recommended: refuses ID, refresh ' +
      'and other services\' tokens of the same issuer).'
  })),
  AUTH_JWT_MAX_AGE_S: Type.Integer({
    minimum: 60,
    maximum: 30 * 86_400,
    default: 86_400,
    description: 'Longest accepted token lifetime, counted from its `iat`: an older token is refused whatever its ' +
      '`exp`.'
  }),
  CONSOLE_API_KEY: Type.Optional(Type.String({
    minLength: 16,
    description: 'Opens POST /request-console (operator `console` in the audit log); unset with CONSOLE_API_KEYS, ' +
      'the route answers 404.'
  })),
  CONSOLE_API_KEYS: Type.Optional(Type.String({
    pattern: '^\\s*[A-Za-z0-9_.-]{1,64}:[^,\\s]{16,}\\s*(,\\s*[A-Za-z0-9_.-]{1,64}:[^,\\s]{16,}\\s*)*$',
    description: 'Console keys per operator, a comma list of name:key (names of letters, digits, _ . -; keys of 16+ ' +
      'characters without commas or spaces); the audit log names the operator.'
  })),
  UPSTREAM_TIMEOUT_MS: Millis(5000, 'One upstream exchange, redirects included.'),
  PROFILE_TIMEOUT_MS: Millis(8000, 'The whole profile request, all upstream calls included.'),
  UPSTREAM_MAX_BODY_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
    default: 1024 * 1024,
    description: 'Largest upstream answer read; a larger one is a bad response.'
  }),
  UPSTREAM_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 1024,
    default: 128,
    description: 'Keep-alive connections per upstream origin.'
  }),
  UPSTREAM_BREAKER_FAILURE_RATE: Type.Integer({
    minimum: 1,
    maximum: 99,
    default: 50,
    description: 'Percent of one upstream operation\'s calls in the window that must fail (no answer, a ' +
      'full-deadline timeout, 5xx, a bad redirect), more than which its circuit breaker opens; while open, calls ' +
      'fail at once with 503.'
  }),
  UPSTREAM_BREAKER_MIN_CALLS: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 20,
    description: 'Calls of one upstream operation the window must hold before its failure rate can open the breaker; ' +
      'one caller\'s failures count for at most the failure rate of half of them (5 by default).'
  }),
  UPSTREAM_BREAKER_WINDOW_MS: Type.Integer({
    minimum: 1000,
    maximum: 600_000,
    default: 10_000,
    description: 'The sliding window over which an upstream operation\'s failure rate is measured.'
  }),
  UPSTREAM_BREAKER_HALF_OPEN_MS: Millis(10_000, 'How long an open circuit breaker refuses calls before probe calls ' +
    '(one at a time, one per caller a round) may close it.'),
  METRICS_API_KEY: Type.Optional(Type.String({
    minLength: 16,
    description: 'Turns on GET /metrics, scraped with Authorization: Bearer <key>; unset, metrics are off and the ' +
      'route answers 404.'
  })),
  SHUTDOWN_GRACE_MS: Millis(10_000, 'On SIGTERM, how long in-flight requests may take to finish before the process ' +
    'is stopped.'),
  RATE_LIMIT_PROFILE_PER_MINUTE: PerMinute(120, 'Profile requests per client (token sub) per minute.'),
  RATE_LIMIT_CONSOLE_PER_MINUTE: PerMinute(30, 'Console requests per caller address per minute.'),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: PerMinute(30, 'Refused credentials (401) per caller address per minute; past ' +
    'it, refused credentials get 429 (a valid credential is always served).'),
  TRUST_PROXY: Type.Optional(Type.String({
    description: 'Balancers whose X-Forwarded-For is believed: `true` (every peer) or a comma list of addresses, ' +
      'CIDRs or loopback/linklocal/uniquelocal; unset, the peer address is the client.'
  })),
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
  CORS_ORIGINS: Type.Optional(Type.String({
    pattern: '^https?://[^/\\s,]+(\\s*,\\s*https?://[^/\\s,]+)*$',
    description: 'Comma list of exact browser origins (scheme://host[:port]) allowed by CORS; unset, CORS is off.'
  })),
  COMPRESSION: Type.Enum(['on', 'off'], {
    default: 'on',
    description: '`on`: answers of 1 KiB or more are compressed (br, gzip) by the caller\'s Accept-Encoding; `off`: ' +
      'sent as they are, for an ingress that compresses.'
  }),
  SERVER_HEADERS_TIMEOUT_MS: Millis(10_000, 'Time a client has to send the request headers.'),
  SERVER_REQUEST_TIMEOUT_MS: Millis(15_000, 'Time a client has to send the whole request, body included (not the ' +
    'time to answer it).'),
  SERVER_CONNECTION_TIMEOUT_MS: Millis(20_000, 'Socket inactivity allowed, handling time included; raised to exceed ' +
    'PROFILE_TIMEOUT_MS and UPSTREAM_TIMEOUT_MS when shorter.'),
  SERVER_KEEP_ALIVE_TIMEOUT_MS: Millis(72_000, 'Idle keep-alive connection lifetime; above the balancer\'s idle ' +
    'timeout (often 60 s).'),
  SERVER_MAX_REQUESTS_PER_SOCKET: Type.Integer({
    minimum: 0,
    maximum: 1_000_000,
    default: 0,
    description: 'Requests served on one connection before it is closed; 0 is no limit.'
  }),
  SERVER_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024,
    maximum: 1024 * 1024,
    default: 16 * 1024,
    description: 'Largest request body of a route without its own limit (the console has 16 KiB).'
  }),
  UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 1000,
    description: 'Mean event loop delay above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_MAX_HEAP_USED_MB: Type.Integer({
    minimum: 0,
    maximum: 1024 * 1024,
    default: 0,
    description: 'Heap used (MiB) above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_MAX_RSS_MB: Type.Integer({
    minimum: 0,
    maximum: 1024 * 1024,
    default: 0,
    description: 'Resident set size (MiB) above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_SAMPLE_INTERVAL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1000,
    description: 'How often event loop delay and memory are sampled for load shedding.'
  }),
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
    'in the background (requests never wait for it).'),
  PROFILE_STALE_IF_ERROR_S: Type.Integer({
    minimum: 0,
    maximum: 30 * 86_400,
    default: 86_400,
    description: 'How old (seconds) a client\'s last good profile may be and still be answered when fresh data ' +
      'cannot be had (passport failure other than not-found, a dealer section failing); 0 turns last-known profiles ' +
      'off.'
  }),
  PROFILE_FRESH_S: Type.Integer({
    minimum: 0,
    maximum: 86_400,
    default: 0,
    description: 'A last-known profile younger than this (seconds) is answered without calling the upstream (bursts ' +
      'at app start); 0 is off. Each client then sees changes up to this late.'
  }),
  PROFILE_CACHE_MAX_BYTES: Type.Integer({
    minimum: 65_536,
    maximum: 1024 * 1024 * 1024,
    default: 16 * 1024 * 1024,
    description: 'Bound of the in-process store of last-known profiles (compressed bytes; least recently used out ' +
      'first).'
  }),
  PROFILE_CACHE_KEY: Type.Optional(Type.String({
    pattern: '^\\s*[A-Za-z0-9+/=_-]{43,44}\\s*(,\\s*[A-Za-z0-9+/=_-]{43,44}\\s*)*$',
    description: '32 random bytes in base64 (a comma list rotates: the first encrypts and names, all decrypt); with ' +
      'REDIS_URL, last-known profiles live in Redis, AES-256-GCM encrypted, under HMAC key names.'
  })),
  PROFILE_CACHE_REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_.-]{1,64}$',
    default: 'dealer-bff:lk:',
    description: 'Prefix of every last-known profile key in Redis (letters, digits, `:_.-`).'
  }),
  MIN_APP_VERSION: Type.Optional(Type.String({
    ...AppVersion,
    description: 'Oldest app version served (semver, such as 2.14.0): a request whose x-app-version is older gets ' +
      '426 APP_UPDATE_REQUIRED; one without the header is served. Unset, every version is served.'
  })),
  DEFAULT_LANGUAGE: Type.Enum([...languages], {
    default: 'ru',
    description: 'Language of error messages (`ru` or `en`) for a caller whose Accept-Language names neither, ' +
      'or who sends none.'
  }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino log level.'
  })
})

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  readonly problems: string[]
  constructor (problems: string[]) {
    super(`Invalid configuration:\n${problems.map(p => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
    this.problems = problems
  }
}

interface AjvError { instancePath: string, keyword: string, message?: string, params: Record<string, unknown> }

function describe (error: AjvError): string {
  if (error.keyword === 'required') return `${String(error.params.missingProperty)} is required`
  const name = error.instancePath.replace(/^\//, '')
  if (error.keyword === 'pattern' || error.keyword === 'anyOf') return `${name} has an invalid value`
  return `${name} ${error.message ?? 'is invalid'}`
}

// env-schema sets `additionalProperties: false` on the schema it is given; it gets its own copy so the
// exported schema stays as written for everyone else.
const validated = { ...ConfigSchema }

export interface LoadConfigOptions {
  /** Read `.env` from the working directory (true) or the file at `path` first; set variables win. */
  dotenv?: boolean | { path: string }
}

/** The variables of an env file; none when there is no file. */
function readEnvFile (path: string): Record<string, string | undefined> {
  try {
    return parseEnv(readFileSync(resolve(path), 'utf8'))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw err
  }
}

/**
 * Reads and validates the configuration. `env` is process.env for `npm start`; `dotenv` reads `.env`
 * first, when present, and `env` overrides it. An empty variable counts as unset (`PORT=` would
 * otherwise be coerced to 0, a random port). Never prints a value: only variable names.
 */
export function loadConfig (env: Record<string, string | undefined> = process.env,
  { dotenv = false }: LoadConfigOptions = {}): Config {
  const file = dotenv === false ? {} : readEnvFile(dotenv === true ? '.env' : dotenv.path)
  // One merged view, so every check below (the one-of rule too) sees the variables of the file.
  const data = Object.fromEntries(Object.entries({ ...file, ...env })
    .filter(([, value]) => value !== undefined && value !== ''))
  const problems: string[] = []
  let config: Config | undefined
  try {
    config = envSchema<Config>({ schema: validated, data, env: false, dotenv: false })
  } catch (err) {
    const errors = (err as { errors?: AjvError[] }).errors
    if (!errors) throw err
    // anyOf reports once per branch; one line per variable is what an operator needs.
    problems.push(...new Set(errors.filter(e => e.keyword !== 'const').map(describe)))
  }
  problems.push(...verificationKeyProblems(data))
  if (data.TRUST_PROXY !== undefined && trustProxySetting(data.TRUST_PROXY) === undefined) {
    problems.push('TRUST_PROXY must be true, false, or a comma list of addresses, CIDRs or ' +
      'loopback/linklocal/uniquelocal')
  }
  if (config !== undefined) {
    problems.push(...serverTimeoutProblems(config), ...consoleKeyProblems(config), ...upstreamUrlProblems(config),
      ...jwksUrlProblems(config), ...profileCacheKeyProblems(config), ...sentinelProblems(config, data))
  }
  for (const [name, instead] of Object.entries(RETIRED)) {
    if (data[name] !== undefined) problems.push(`${name} is no longer supported; ${instead}`)
  }
  if (problems.length > 0 || config === undefined) throw new ConfigError(problems)
  return config
}

/**
 * Variables whose meaning is gone, with what replaces them. Unknown variables are otherwise ignored, but
 * an operator who set one of these expects it to act: naming it beats silently running without it.
 */
const RETIRED: Record<string, string> = {
  UPSTREAM_BREAKER_THRESHOLD: 'the breaker opens on a failure rate: set UPSTREAM_BREAKER_FAILURE_RATE, ' +
    'UPSTREAM_BREAKER_MIN_CALLS and UPSTREAM_BREAKER_WINDOW_MS'
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/** One TRUST_PROXY entry: an address, an address/prefix, or one of proxy-addr's names. */
function isProxyEntry (entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/**
 * Fastify's `trustProxy` from TRUST_PROXY; undefined when the value is not acceptable. A hop count is
 * not accepted: it would believe X-Forwarded-For from any direct peer (Fastify itself fails it closed).
 */
export function trustProxySetting (value: string | undefined): boolean | string[] | undefined {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  const entries = value.split(',').map(entry => entry.trim())
  return entries.every(isProxyEntry) ? entries : undefined
}

/** The variables that say how callers' tokens are verified; exactly one of them is set. */
const VERIFICATION_KEY_VARIABLES = ['AUTH_JWT_SECRET', 'AUTH_JWT_PUBLIC_KEY', 'AUTH_JWKS_URL'] as const

function verificationKeyProblems (data: Record<string, string | undefined>): string[] {
  const set = VERIFICATION_KEY_VARIABLES.filter(name => data[name] !== undefined)
  if (set.length === 0) return ['one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL is required']
  if (set.length > 1) return [`set only one of ${set.join(' and ')}`]
  return []
}

/** Timeouts that only make sense in relation to each other. */
function serverTimeoutProblems (config: Config): string[] {
  const problems: string[] = []
  // Node refuses a headers timeout beyond the request timeout.
  if (config.SERVER_HEADERS_TIMEOUT_MS > config.SERVER_REQUEST_TIMEOUT_MS) {
    problems.push('SERVER_HEADERS_TIMEOUT_MS must not exceed SERVER_REQUEST_TIMEOUT_MS')
  }
  return problems
}

/**
 * The console keys by operator name: CONSOLE_API_KEYS' `name:key` pairs, and CONSOLE_API_KEY as the
 * operator `console`. Empty when the console is off.
 */
export function consoleOperators (config: Pick<Config, 'CONSOLE_API_KEY' | 'CONSOLE_API_KEYS'>): Map<string, string> {
  const operators = new Map<string, string>()
  if (config.CONSOLE_API_KEY !== undefined) operators.set('console', config.CONSOLE_API_KEY)
  for (const pair of config.CONSOLE_API_KEYS?.split(',') ?? []) {
    const at = pair.indexOf(':')
    operators.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim())
  }
  return operators
}

/** One name per operator and one operator per key, or the audit log could not say who it was. */
function consoleKeyProblems (config: Config): string[] {
  const pairs = config.CONSOLE_API_KEYS?.split(',').map(pair => pair.slice(0, pair.indexOf(':')).trim()) ?? []
  const names = config.CONSOLE_API_KEY === undefined ? pairs : ['console', ...pairs]
  const keys = [...consoleOperators(config).values()]
  const problems: string[] = []
  if (new Set(names).size !== names.length) {
    problems.push('CONSOLE_API_KEYS names an operator twice (CONSOLE_API_KEY is the operator "console")')
  }
  if (new Set(keys).size !== keys.length) problems.push('CONSOLE_API_KEYS gives two operators the same key')
  return problems
}

/** True for the local machine: an http:// upstream there never crosses a network. */
function isLoopback (hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' ||
    (isIP(host) === 4 && host.startsWith('127.'))
}

/** The keys travel in a header of every upstream call: in clear text only on the loopback, or when told. */
function upstreamUrlProblems (config: Config): string[] {
  let url: URL
  try {
    url = new URL(config.UPSTREAM_URL)
  } catch {
    return ['UPSTREAM_URL has an invalid value']
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !config.UPSTREAM_ALLOW_HTTP) {
    return ['UPSTREAM_URL must be https:// (the upstream keys would travel in clear text); http:// is accepted for ' +
      'the loopback, or with UPSTREAM_ALLOW_HTTP=true']
  }
  return []
}

/** Keys fetched in clear text could be swapped on the way: https, or http on the local machine only. */
function jwksUrlProblems (config: Config): string[] {
  if (config.AUTH_JWKS_URL === undefined) return []
  let url: URL
  try {
    url = new URL(config.AUTH_JWKS_URL)
  } catch {
    return ['AUTH_JWKS_URL has an invalid value']
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    return ['AUTH_JWKS_URL must be https:// (keys fetched in clear text could be replaced on the way); http:// is ' +
      'accepted for the loopback only']
  }
  return []
}

/** Each PROFILE_CACHE_KEY entry must be 32 bytes, or AES-256 and the key names cannot use it. */
function profileCacheKeyProblems (config: Config): string[] {
  if (config.PROFILE_CACHE_KEY === undefined) return []
  const keys = profileCacheKeys(config.PROFILE_CACHE_KEY)
  if (keys.some(key => key.length !== 32)) {
    return ['PROFILE_CACHE_KEY must be a comma list of 32-byte keys in base64 (openssl rand -base64 32)']
  }
  if (new Set(keys.map(key => key.toString('hex'))).size !== keys.length) return ['PROFILE_CACHE_KEY lists a key twice']
  return []
}

/** PROFILE_CACHE_KEY's keys as bytes, the encrypting one first. */
export function profileCacheKeys (value: string): Buffer[] {
  return value.split(',').map(entry => Buffer.from(entry.trim(), 'base64'))
}

/** Whether the instances share a Redis: named by REDIS_URL, or by its Sentinels. */
export function sharedRedisConfigured (config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS'>): boolean {
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

/** Sentinel variables make sense only together, each address must be one a connection can go to. */
function sentinelProblems (config: Config, data: Record<string, string | undefined>): string[] {
  if (config.REDIS_SENTINELS === undefined) {
    return ['REDIS_SENTINEL_NAME', 'REDIS_SENTINEL_PASSWORD'].filter(name => data[name] !== undefined)
      .map(name => `${name} is set without REDIS_SENTINELS`)
  }
  if (config.REDIS_URL !== undefined && !URL.canParse(config.REDIS_URL)) return ['REDIS_URL has an invalid value']
  const bracketed = config.REDIS_SENTINELS.split(',').map(entry => entry.trim().startsWith('['))
  const sentinels = redisSentinels(config.REDIS_SENTINELS)
  if (sentinels.some(({ host, port }, i) => port < 1 || port > 65535 ||
    (host.includes(':') && (!bracketed[i] || isIP(host) !== 6)))) {
    return ['REDIS_SENTINELS must be a comma list of host:port (ports 1-65535, an IPv6 host in brackets)']
  }
  return []
}
