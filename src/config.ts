// Environment -> typed, validated Config. The areas' schemas (src/config/) are the only statement of the variables,
// their types and defaults; every bad variable is named at once so an operator fixes them in one go.
import envSchema from 'env-schema'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseEnv } from 'node:util'
import { Type, type Static } from 'typebox'
import { AuthConfigSchema, jwksUrlProblems, verificationKeyProblems } from './config/auth.ts'
import { ClientsConfigSchema } from './config/clients.ts'
import { consoleKeyProblems, ConsoleConfigSchema } from './config/console.ts'
import { LimitsConfigSchema } from './config/limits.ts'
import { ObservabilityConfigSchema } from './config/observability.ts'
import { profileCacheKeyProblems, ProfileConfigSchema } from './config/profile.ts'
import { RedisConfigSchema, sentinelProblems, sentinelVariableProblems } from './config/redis.ts'
import { serverTimeoutProblems, ServerConfigSchema, trustProxyProblems } from './config/server.ts'
import { RETIRED_UPSTREAM_VARIABLES, upstreamUrlProblems, UpstreamConfigSchema } from './config/upstream.ts'

// What callers derive from the values, kept importable from here.
export { consoleOperators } from './config/console.ts'
export { profileCacheKeys } from './config/profile.ts'
export { redisSentinels, sharedRedisConfigured } from './config/redis.ts'
export { trustProxySetting } from './config/server.ts'

export const ConfigSchema = Type.Object({
  ...ServerConfigSchema.properties,
  ...UpstreamConfigSchema.properties,
  ...AuthConfigSchema.properties,
  ...ConsoleConfigSchema.properties,
  ...ProfileConfigSchema.properties,
  ...RedisConfigSchema.properties,
  ...LimitsConfigSchema.properties,
  ...ClientsConfigSchema.properties,
  ...ObservabilityConfigSchema.properties
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

/** The rules a schema cannot say, on the variables as set: named even when another variable fails the schema. */
const VARIABLE_CHECKS: Array<(variables: Record<string, string | undefined>) => string[]> = [
  verificationKeyProblems,
  trustProxyProblems,
  sentinelVariableProblems
]

/** The rules between valid values, checked once every variable holds. */
const VALUE_CHECKS: Array<(config: Config) => string[]> = [
  serverTimeoutProblems,
  consoleKeyProblems,
  upstreamUrlProblems,
  jwksUrlProblems,
  profileCacheKeyProblems,
  sentinelProblems
]

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
  for (const check of VARIABLE_CHECKS) problems.push(...check(data))
  if (config !== undefined) for (const check of VALUE_CHECKS) problems.push(...check(config))
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
const RETIRED: Record<string, string> = { ...RETIRED_UPSTREAM_VARIABLES }
