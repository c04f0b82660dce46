// Configuration: defaults, one error naming every bad variable (and never a value), the JWT key
// one-of rule, and `.env` (docs/configuration.md).
import t from 'tap'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { ConfigError, ConfigSchema, loadConfig, redisSentinels, sharedRedisConfigured } from '../src/config.ts'

const SECRET = 'hs256-secret-for-tests-0123456789abcdef'
const PUBLIC_KEY = '-----BEGIN PUBLIC KEY-----\n' +
  'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE0000000000000000000000000000\n-----END PUBLIC KEY-----\n'

const required = {
  UPSTREAM_URL: 'https://dealer-upstream.example.ru',
  PASSPORT_API_KEY: '6B0D7E1A-3F2C-4C2F-9A8E-5F3B2D1C0A9E',
  DEALER_API_KEY: 'E4C9A2F7-8B6D-4B1D-8E6A-3C5F7A9B1D2E',
  AUTH_JWT_SECRET: SECRET
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0]

/** The ConfigError a load throws; fails the test when it does not throw one. */
function configError (t: Test, load: () => unknown): ConfigError {
  try {
    load()
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  t.fail('expected a ConfigError')
  throw new Error('no ConfigError')
}

t.test('defaults fill what is left out, numbers are numbers', async t => {
  const config = loadConfig({ ...required, PORT: '8080', PATH: '/usr/bin', HOME: '/root' })

  t.strictSame(config, {
    ...required,
    HOST: '0.0.0.0',
    PORT: 8080,
    UPSTREAM_TIMEOUT_MS: 5000,
    PROFILE_TIMEOUT_MS: 8000,
    PROFILE_STALE_IF_ERROR_S: 86_400,
    PROFILE_FRESH_S: 0,
    PROFILE_CACHE_MAX_BYTES: 16 * 1024 * 1024,
    PROFILE_CACHE_REDIS_PREFIX: 'dealer-bff:lk:',
    UPSTREAM_MAX_BODY_BYTES: 1024 * 1024,
    UPSTREAM_CONNECTIONS: 128,
    UPSTREAM_BREAKER_FAILURE_RATE: 50,
    UPSTREAM_BREAKER_MIN_CALLS: 20,
    UPSTREAM_BREAKER_WINDOW_MS: 10_000,
    UPSTREAM_BREAKER_HALF_OPEN_MS: 10_000,
    SHUTDOWN_GRACE_MS: 10_000,
    AUTH_JWT_MAX_AGE_S: 86_400,
    AUTH_JWKS_REFRESH_S: 300,
    UPSTREAM_ALLOW_HTTP: false,
    RATE_LIMIT_PROFILE_PER_MINUTE: 120,
    RATE_LIMIT_CONSOLE_PER_MINUTE: 30,
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: 30,
    SERVER_HEADERS_TIMEOUT_MS: 10_000,
    SERVER_REQUEST_TIMEOUT_MS: 15_000,
    SERVER_CONNECTION_TIMEOUT_MS: 20_000,
    SERVER_KEEP_ALIVE_TIMEOUT_MS: 72_000,
    SERVER_MAX_REQUESTS_PER_SOCKET: 0,
    SERVER_BODY_LIMIT_BYTES: 16 * 1024,
    UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: 1000,
    UNDER_PRESSURE_MAX_HEAP_USED_MB: 0,
    UNDER_PRESSURE_MAX_RSS_MB: 0,
    UNDER_PRESSURE_SAMPLE_INTERVAL_MS: 1000,
    REDIS_KEY_PREFIX: 'dealer-bff:rl:',
    REDIS_SENTINEL_NAME: 'mymaster',
    REDIS_TIMEOUT_MS: 100,
    REDIS_CONNECT_TIMEOUT_MS: 1000,
    COMPRESSION: 'on',
    DOCS: 'ui',
    DEFAULT_LANGUAGE: 'ru',
    LOG_LEVEL: 'info'
  }, 'unrelated variables such as PATH are not part of the config')
  t.notOk('CONSOLE_API_KEY' in config, 'the console stays closed unless its key is set')
  t.notOk('METRICS_API_KEY' in config, 'metrics stay off unless their key is set')
})

t.test('every variable set is read', async t => {
  const config = loadConfig({
    ...required,
    HOST: '127.0.0.1',
    CONSOLE_API_KEY: 'console-key-0123456789',
    UPSTREAM_TIMEOUT_MS: '3000',
    PROFILE_TIMEOUT_MS: '7000',
    RATE_LIMIT_PROFILE_PER_MINUTE: '60',
    RATE_LIMIT_CONSOLE_PER_MINUTE: '10',
    LOG_LEVEL: 'warn'
  })
  t.equal(config.HOST, '127.0.0.1')
  t.equal(config.CONSOLE_API_KEY, 'console-key-0123456789')
  t.equal(config.UPSTREAM_TIMEOUT_MS, 3000)
  t.equal(config.PROFILE_TIMEOUT_MS, 7000)
  t.equal(config.RATE_LIMIT_PROFILE_PER_MINUTE, 60)
  t.equal(config.RATE_LIMIT_CONSOLE_PER_MINUTE, 10)
  t.equal(config.LOG_LEVEL, 'warn')
})

// Each bad value is unique, so the test can prove none of them is ever printed.
const bad = {
  PORT: 'port-value-x1',
  UPSTREAM_URL: 'ftp://upstream-value-x2.example',
  LOG_LEVEL: 'loglevel-value-x3',
  UPSTREAM_TIMEOUT_MS: '-4',
  PROFILE_TIMEOUT_MS: '9999999',
  RATE_LIMIT_PROFILE_PER_MINUTE: '1.5',
  RATE_LIMIT_CONSOLE_PER_MINUTE: 'ratelimit-value-x7',
  CONSOLE_API_KEY: 'short-key-x8',
  AUTH_JWT_SECRET: 'short-secret-x9'
}

t.test('one error names every bad variable, once each', async t => {
  const error = configError(t, () => loadConfig(bad))

  const names = [...Object.keys(bad), 'PASSPORT_API_KEY', 'DEALER_API_KEY']
  t.equal(error.problems.length, names.length, 'one line per variable')
  for (const name of names) {
    t.equal(error.problems.filter(problem => problem.startsWith(`${name} `)).length, 1, name)
    t.match(error.message, name)
  }
  t.ok(error.problems.includes('PASSPORT_API_KEY is required'))
})

t.test('no value is ever printed, good or bad', async t => {
  const env = { ...required, ...bad, AUTH_JWT_SECRET: SECRET, AUTH_JWT_PUBLIC_KEY: PUBLIC_KEY }
  const error = configError(t, () => loadConfig(env))

  const texts = [error.message, JSON.stringify(error), inspect(error), ...error.problems]
  for (const value of Object.values(env)) {
    t.notOk(texts.some(text => text.includes(value)), `${value.slice(0, 24)}... is not printed`)
  }
})

t.test('exactly one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL', async t => {
  const { AUTH_JWT_SECRET: _secret, ...withoutKey } = required
  const JWKS_URL = 'https://idp.example.com/realms/dealers/protocol/openid-connect/certs'

  const neither = configError(t, () => loadConfig(withoutKey))
  t.strictSame(neither.problems, ['one of AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL is required'])

  const both = configError(t, () => loadConfig({ ...required, AUTH_JWT_PUBLIC_KEY: PUBLIC_KEY }))
  t.strictSame(both.problems, ['set only one of AUTH_JWT_SECRET and AUTH_JWT_PUBLIC_KEY'])
  t.strictSame(configError(t, () => loadConfig({ ...required, AUTH_JWKS_URL: JWKS_URL })).problems,
    ['set only one of AUTH_JWT_SECRET and AUTH_JWKS_URL'])
  const keyAndSet = { AUTH_JWT_PUBLIC_KEY: PUBLIC_KEY, AUTH_JWKS_URL: JWKS_URL }
  t.strictSame(configError(t, () => loadConfig({ ...withoutKey, ...keyAndSet })).problems,
    ['set only one of AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL'])
  t.strictSame(configError(t, () => loadConfig({ ...required, ...keyAndSet })).problems,
    ['set only one of AUTH_JWT_SECRET and AUTH_JWT_PUBLIC_KEY and AUTH_JWKS_URL'])

  const withKeySet = loadConfig({ ...withoutKey, AUTH_JWKS_URL: JWKS_URL })
  t.equal(withKeySet.AUTH_JWKS_URL, JWKS_URL)
  t.equal(withKeySet.AUTH_JWKS_REFRESH_S, 300, 'refreshed every five minutes by default')

  t.equal(loadConfig(required).AUTH_JWT_SECRET, SECRET)
  const withPublicKey = loadConfig({ ...withoutKey, AUTH_JWT_PUBLIC_KEY: PUBLIC_KEY })
  t.equal(withPublicKey.AUTH_JWT_PUBLIC_KEY, PUBLIC_KEY)
  t.notOk('AUTH_JWT_SECRET' in withPublicKey)

  const notPem = configError(t, () => loadConfig({ ...withoutKey, AUTH_JWT_PUBLIC_KEY: 'not a pem' }))
  t.strictSame(notPem.problems, ['AUTH_JWT_PUBLIC_KEY has an invalid value'])
})

t.test('AUTH_JWKS_URL: https, or http to the loopback only; AUTH_JWKS_REFRESH_S from 1 s to a day', async t => {
  const { AUTH_JWT_SECRET: _secret, ...withoutKey } = required
  const load = (env: Record<string, string>) => loadConfig({ ...withoutKey, ...env })
  for (const url of ['https://idp.example.com/realms/r/protocol/openid-connect/certs', 'https://login.example.com/keys?appid=abc', 'http://127.0.0.1:8080/certs', 'http://localhost/certs']) {
    t.equal(load({ AUTH_JWKS_URL: url }).AUTH_JWKS_URL, url)
  }
  for (const url of ['http://idp.example.com/certs', 'http://10.0.0.5/certs']) {
    t.match(configError(t, () => load({ AUTH_JWKS_URL: url })).problems, [/^AUTH_JWKS_URL must be https:\/\//], url)
    t.match(configError(t, () => load({ AUTH_JWKS_URL: url, UPSTREAM_ALLOW_HTTP: 'true' })).problems, [/^AUTH_JWKS_URL must be https:\/\//], 'no opt-in for keys')
  }
  for (const url of ['idp.example.com/certs', 'ftp://idp.example.com/certs', 'https://idp.example.com/certs#x', 'https://']) {
    t.strictSame(configError(t, () => load({ AUTH_JWKS_URL: url })).problems, ['AUTH_JWKS_URL has an invalid value'],
      url)
  }
  const url = 'https://idp.example.com/certs'
  t.equal(load({ AUTH_JWKS_URL: url, AUTH_JWKS_REFRESH_S: '1' }).AUTH_JWKS_REFRESH_S, 1)
  t.equal(load({ AUTH_JWKS_URL: url, AUTH_JWKS_REFRESH_S: '86400' }).AUTH_JWKS_REFRESH_S, 86_400)
  for (const value of ['0', '86401', '1.5', 'often']) {
    t.match(configError(t, () => load({ AUTH_JWKS_URL: url, AUTH_JWKS_REFRESH_S: value })).problems, [/^AUTH_JWKS_REFRESH_S /], value)
  }
})

t.test('UPSTREAM_URL is an http(s) base URL without a query', async t => {
  for (const url of ['http://127.0.0.1:8080', 'https://api.dealer.example.ru/base/']) {
    t.equal(loadConfig({ ...required, UPSTREAM_URL: url }).UPSTREAM_URL, url)
  }
  for (const url of ['dealer.example.ru', 'ftp://dealer.example.ru', 'https://dealer.example.ru/?x=1', 'https://']) {
    t.strictSame(configError(t, () => loadConfig({ ...required, UPSTREAM_URL: url })).problems,
      ['UPSTREAM_URL has an invalid value'], url)
  }
})

t.test('Redis Sentinels: a comma list of host:port, REDIS_URL optional beside them, the other Sentinel variables ' +
  'only with them', async t => {
  const sentinels = 'sentinel-0.redis:26379, sentinel-1.redis:26379,[fd00::7]:26379'
  const config = loadConfig({ ...required, REDIS_SENTINELS: sentinels, REDIS_SENTINEL_PASSWORD: 'sentinel-secret' })
  t.equal(config.REDIS_SENTINELS, sentinels)
  t.equal(config.REDIS_SENTINEL_NAME, 'mymaster', 'the group defaults to mymaster')
  t.notOk('REDIS_URL' in config, 'REDIS_URL may be left out: the Sentinels name the primary')
  t.strictSame(redisSentinels(sentinels), [
    { host: 'sentinel-0.redis', port: 26379 }, { host: 'sentinel-1.redis', port: 26379 },
    { host: 'fd00::7', port: 26379 }
  ], 'IPv6 hosts lose their brackets')
  t.ok(sharedRedisConfigured(config), 'a shared Redis without REDIS_URL')
  t.notOk(sharedRedisConfigured(loadConfig(required)))
  t.equal(loadConfig({ ...required, REDIS_SENTINELS: sentinels, REDIS_URL: 'rediss://:pw@ignored/2' }).REDIS_URL,
    'rediss://:pw@ignored/2', 'REDIS_URL still gives the scheme, password and database')

  const problems = (env: Record<string, string>) => configError(t, () => loadConfig({ ...required, ...env })).problems
  for (const value of ['sentinel-0.redis', 'sentinel-0.redis:26379,', 'a:1 b:2', 'host:99999', 'fd00::7:26379']) {
    t.strictSame(problems({ REDIS_SENTINELS: value }).filter(line => line.startsWith('REDIS_SENTINELS ')).length, 1,
      `${value}: one line names REDIS_SENTINELS`)
  }
  t.strictSame(problems({ REDIS_SENTINEL_NAME: 'group' }), ['REDIS_SENTINEL_NAME is set without REDIS_SENTINELS'])
  t.strictSame(problems({ REDIS_SENTINEL_PASSWORD: 'secret' }),
    ['REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS'])
  t.strictSame(problems({ REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: 'my master' }),
    ['REDIS_SENTINEL_NAME has an invalid value'])
  t.strictSame(problems({ REDIS_SENTINELS: sentinels, REDIS_URL: 'redis://[oops/0' }),
    ['REDIS_URL has an invalid value'])
  // Without Sentinels too: ioredis would throw at start-up, the URL (its password) in the error.
  t.strictSame(problems({ REDIS_URL: 'redis://:secret@[oops/0' }), ['REDIS_URL has an invalid value'])
})

t.test('an http:// UPSTREAM_URL beyond the loopback is refused unless UPSTREAM_ALLOW_HTTP=true: ' +
  'keys in clear text', async t => {
  for (const url of ['http://127.0.0.1:8080', 'http://127.3.4.5', 'http://localhost:9000/base', 'http://[::1]:8080']) {
    t.equal(loadConfig({ ...required, UPSTREAM_URL: url }).UPSTREAM_URL, url,
      `${url}: the loopback never crosses a network`)
  }
  for (const url of ['http://dealer.example.ru', 'http://10.0.0.5:8080', 'http://[2001:db8::1]', 'http://127.0.0.1.example.ru', 'http://localhost.example.ru']) {
    t.match(configError(t, () => loadConfig({ ...required, UPSTREAM_URL: url })).problems, [/^UPSTREAM_URL must be https:\/\//], url)
    t.equal(loadConfig({ ...required, UPSTREAM_URL: url, UPSTREAM_ALLOW_HTTP: 'true' }).UPSTREAM_URL, url,
      `${url} with the opt-in`)
  }
  const notBoolean = { ...required, UPSTREAM_URL: 'http://dealer.example.ru', UPSTREAM_ALLOW_HTTP: 'yes' }
  t.match(configError(t, () => loadConfig(notBoolean)).problems, [/^UPSTREAM_ALLOW_HTTP /])
})

t.test('an empty variable counts as unset', async t => {
  const config = loadConfig({ ...required, PORT: '', CONSOLE_API_KEY: '', AUTH_JWT_PUBLIC_KEY: '' })
  t.equal(config.PORT, 3000, 'not coerced to port 0')
  t.notOk('CONSOLE_API_KEY' in config)
  t.notOk('AUTH_JWT_PUBLIC_KEY' in config)

  const error = configError(t, () => loadConfig({ ...required, DEALER_API_KEY: '' }))
  t.strictSame(error.problems, ['DEALER_API_KEY is required'])
})

t.test('.env is read when asked, and the environment wins over it', async t => {
  const dir = t.testdir({
    '.env': [
      '# written by the operator',
      `UPSTREAM_URL=${required.UPSTREAM_URL}`,
      `PASSPORT_API_KEY=${required.PASSPORT_API_KEY}`,
      `DEALER_API_KEY=${required.DEALER_API_KEY}`,
      `AUTH_JWT_SECRET="${SECRET}"`,
      'PORT=4000',
      'LOG_LEVEL=debug'
    ].join('\n')
  })
  const path = join(dir, '.env')

  const config = loadConfig({ LOG_LEVEL: 'error' }, { dotenv: { path } })
  t.equal(config.PASSPORT_API_KEY, required.PASSPORT_API_KEY)
  t.equal(config.AUTH_JWT_SECRET, SECRET)
  t.equal(config.PORT, 4000)
  t.equal(config.LOG_LEVEL, 'error', 'a set variable overrides the file')

  t.throws(() => loadConfig({}), ConfigError, 'not read unless asked')

  const cwd = process.cwd()
  process.chdir(dir)
  t.teardown(() => process.chdir(cwd))
  t.equal(loadConfig({}, { dotenv: true }).PORT, 4000, 'dotenv: true reads ./.env')

  // The one-of rule sees the file too: a bad PORT is the only problem.
  const error = configError(t, () => loadConfig({ PORT: 'not-a-port' }, { dotenv: true }))
  t.strictSame(error.problems, ['PORT must be integer'])
})

t.test('the breaker variables: a rate in percent, a minimum volume, a window; the ' +
  'retired threshold is named', async t => {
  const config = loadConfig({
    ...required,
    UPSTREAM_BREAKER_FAILURE_RATE: '25',
    UPSTREAM_BREAKER_MIN_CALLS: '40',
    UPSTREAM_BREAKER_WINDOW_MS: '30000'
  })
  t.match(config, {
    UPSTREAM_BREAKER_FAILURE_RATE: 25, UPSTREAM_BREAKER_MIN_CALLS: 40, UPSTREAM_BREAKER_WINDOW_MS: 30_000
  })

  const outOfRange = configError(t,
    () => loadConfig({
      ...required,
      UPSTREAM_BREAKER_FAILURE_RATE: '100',
      UPSTREAM_BREAKER_MIN_CALLS: '0',
      UPSTREAM_BREAKER_WINDOW_MS: '999'
    }))
  t.strictSame(outOfRange.problems.map(problem => problem.split(' ')[0]).sort(),
    ['UPSTREAM_BREAKER_FAILURE_RATE', 'UPSTREAM_BREAKER_MIN_CALLS', 'UPSTREAM_BREAKER_WINDOW_MS'])

  // An operator who still sets it expects it to act; it must not be silently ignored.
  const retired = configError(t, () => loadConfig({ ...required, UPSTREAM_BREAKER_THRESHOLD: '5' }))
  t.equal(retired.problems.length, 1)
  t.match(retired.problems[0], /^UPSTREAM_BREAKER_THRESHOLD is no longer supported; .*UPSTREAM_BREAKER_FAILURE_RATE/)
  const fromFile = t.testdir({ '.env': 'UPSTREAM_BREAKER_THRESHOLD=5\n' })
  t.match(configError(t, () => loadConfig(required, { dotenv: { path: join(fromFile, '.env') } })).problems, [/^UPSTREAM_BREAKER_THRESHOLD is no longer supported/], 'in .env too')
})

t.test('a missing .env is no error', async t => {
  const dir = t.testdir({})
  t.equal(loadConfig(required, { dotenv: { path: join(dir, '.env') } }).PORT, 3000)
})

t.test('loading leaves the exported schema as written', async t => {
  loadConfig(required)
  t.notOk('additionalProperties' in ConfigSchema)
})

t.test('the bad-variable message is what an operator reads', async t => {
  const error = configError(t, () => loadConfig({ ...required, PORT: '70000' }))
  t.equal(error.name, 'ConfigError')
  t.equal(error.message, 'Invalid configuration:\n  - PORT must be <= 65535')
})

t.test('DEFAULT_LANGUAGE is ru or en, ru by default', async t => {
  t.equal(loadConfig(required).DEFAULT_LANGUAGE, 'ru')
  t.equal(loadConfig({ ...required, DEFAULT_LANGUAGE: 'en' }).DEFAULT_LANGUAGE, 'en')
  t.match(configError(t, () => loadConfig({ ...required, DEFAULT_LANGUAGE: 'de' })).problems, [/^DEFAULT_LANGUAGE /])
})

t.test('COMPRESSION is on or off, nothing else', async t => {
  t.equal(loadConfig({ ...required, COMPRESSION: 'off' }).COMPRESSION, 'off')
  t.match(configError(t, () => loadConfig({ ...required, COMPRESSION: 'gzip' })).problems, [/^COMPRESSION /])
})
