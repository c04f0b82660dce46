// `npm run token -- --sub UUID --login DIGITS --vendor CODE [--ttl 1h] [--jwk FILE]`: mints a caller token
// signed with AUTH_JWT_SECRET (from the environment, else from ./.env), or with a private JWK under its kid
// for a service verifying with AUTH_JWKS_URL (an operator's smoke test), against a real upstream; with neither, the
// key of the `npm run dev` running on this machine (sandbox/dev-secret.ts). Prints the token and nothing else, so
// `$(npm run -s token ...)` captures it; problems go to stderr (exit 1), never the secret.
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs, parseEnv } from 'node:util'
import { devSigningFile, readDevSigning } from '../sandbox/dev-secret.ts'
import { jwkSigner, MIN_SECRET_LENGTH, parseTtl, signToken, subjectProblems, type PrivateJwk } from '../sandbox/sign.ts'
import { ConfigSchema } from '../src/config.ts'

export const USAGE = `Usage: npm run token -- --sub UUID --login DIGITS --vendor CODE [--ttl 1h] [--jwk FILE]

  --sub     the client's uid_client (a UUID)
  --login   the client's login (digits only)
  --vendor  the vendor code the client is registered under (e.g. kia)
  --ttl     lifetime: 90s, 15m, 1h (default) or 7d, at most 30d
  --jwk     a file holding a private JWK with a kid (RSA, EC P-256 or Ed25519) whose public half the
            AUTH_JWKS_URL key set publishes: signs RS256/PS256, ES256 or EdDSA under that kid

Signs with AUTH_JWT_SECRET from the environment, or from .env in the current directory, unless --jwk
is given, and adds the iss and aud claims when AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE are set there.
With neither, signs for the \`npm run dev\` running on this machine, as its printed tokens are.
--ttl may not exceed AUTH_JWT_MAX_AGE_S (default 1d): the service would refuse the token once that old.`

export interface TokenCliResult { code: number, stdout: string, stderr: string }

export interface TokenCliOptions {
  /** The variables the process was given (process.env). */
  env?: Record<string, string | undefined>
  /** Where .env is looked for; the environment wins over it, as for `npm start`. */
  cwd?: string
}

const SIGNING_VARIABLES = ['AUTH_JWT_SECRET', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE', 'AUTH_JWT_MAX_AGE_S'] as const
type SigningVariables = Partial<Record<typeof SIGNING_VARIABLES[number], string>>

/** The signing variables from .env, overridden by the environment (as for `npm start`); empty is unset. */
function readSigningVariables (env: Record<string, string | undefined>, cwd: string): SigningVariables {
  const file = resolve(cwd, '.env')
  const fromFile = existsSync(file) ? parseEnv(readFileSync(file, 'utf8')) : {}
  const out: SigningVariables = {}
  for (const name of SIGNING_VARIABLES) {
    const value = env[name] ?? fromFile[name]
    if (value !== undefined && value !== '') out[name] = value
  }
  return out
}

const DEFAULT_MAX_AGE_S = (ConfigSchema.properties.AUTH_JWT_MAX_AGE_S as { default?: number }).default ?? 86_400

/** The private JWK of a --jwk file, checked now; a problem says what is wrong, never any part of the key. */
function readJwk (path: string, problems: string[]): PrivateJwk | undefined {
  let jwk: PrivateJwk
  try {
    jwk = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    problems.push(missing ? `--jwk: no file ${path}` : '--jwk: the file is not a JSON Web Key (JSON)')
    return undefined
  }
  try {
    jwkSigner(jwk)
  } catch (error) {
    problems.push(`--jwk: ${(error as Error).message}`)
    return undefined
  }
  return jwk
}

/** What keeps AUTH_JWT_SECRET from signing a token the service accepts. */
function secretProblems (secret: string | undefined, env: Record<string, string | undefined>): string[] {
  if (secret === undefined || secret === '') {
    return ['AUTH_JWT_SECRET is not set (in the environment or in .env)' +
      (env.AUTH_JWT_PUBLIC_KEY === undefined
        ? ''
        : '; a service verifying with AUTH_JWT_PUBLIC_KEY needs tokens from its own issuer') +
      (env.AUTH_JWKS_URL === undefined
        ? ''
        : '; for a service verifying with AUTH_JWKS_URL, sign with a private key of its set: --jwk FILE') +
      '; no `npm run dev` is running either (its tokens are minted with its own key while it runs)']
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    return [`AUTH_JWT_SECRET is shorter than ${MIN_SECRET_LENGTH} characters, so the service refuses it`]
  }
  return []
}

const fail = (problems: string[]): TokenCliResult => ({
  code: 1,
  stdout: '',
  stderr: `npm run token: cannot mint a token:\n${problems.map(p => `  - ${p}`).join('\n')}\n\n${USAGE}\n`
})

/** The whole command as a function of its arguments and environment, so tests need no process. */
export function runTokenCli (
  args: string[], { env = process.env, cwd = process.cwd() }: TokenCliOptions = {}
): TokenCliResult {
  let values
  try {
    values = parseArgs({
      args,
      options: {
        sub: { type: 'string' },
        login: { type: 'string' },
        vendor: { type: 'string' },
        ttl: { type: 'string', default: '1h' },
        jwk: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      },
      strict: true,
      allowPositionals: false
    }).values
  } catch (error) {
    return fail([(error as Error).message])
  }
  if (values.help === true) return { code: 0, stdout: `${USAGE}\n`, stderr: '' }

  const problems: string[] = []
  const subject = { sub: values.sub, login: values.login, vendor: values.vendor }
  for (const { claim, message } of subjectProblems(subject)) {
    problems.push(subject[claim] === undefined ? `--${claim} is required` : `--${claim} ${message}`)
  }
  let ttlSeconds = 0
  try {
    ttlSeconds = parseTtl(values.ttl)
  } catch (error) {
    problems.push(`--ttl ${(error as Error).message}`)
  }
  let signing = readSigningVariables(env, cwd)
  // No secret and no key file: the live dev run's key, with the claims rules it verifies by.
  const dev = values.jwk === undefined && signing.AUTH_JWT_SECRET === undefined &&
    env.AUTH_JWKS_URL === undefined && env.AUTH_JWT_PUBLIC_KEY === undefined
    ? readDevSigning(devSigningFile(env))
    : null
  if (dev !== null) {
    signing = {
      AUTH_JWT_SECRET: dev.secret,
      AUTH_JWT_ISSUER: dev.issuer,
      AUTH_JWT_AUDIENCE: dev.audience,
      AUTH_JWT_MAX_AGE_S: String(dev.maxAgeS)
    }
  }
  const jwk = values.jwk === undefined ? undefined : readJwk(resolve(cwd, values.jwk), problems)
  const secret = signing.AUTH_JWT_SECRET
  const maxAge = signing.AUTH_JWT_MAX_AGE_S === undefined ? DEFAULT_MAX_AGE_S : Number(signing.AUTH_JWT_MAX_AGE_S)
  if (!Number.isSafeInteger(maxAge) || maxAge < 1) problems.push('AUTH_JWT_MAX_AGE_S is not a whole number of seconds')
  else if (ttlSeconds > maxAge) {
    problems.push(`--ttl is longer than AUTH_JWT_MAX_AGE_S (${maxAge}s): ` +
      'the service would refuse the token before it expires')
  }
  // With --jwk the key file decides; AUTH_JWT_SECRET, set or not, plays no part.
  if (values.jwk === undefined && dev?.jwk === undefined) problems.push(...secretProblems(secret, env))
  const key = values.jwk === undefined ? dev?.jwk ?? secret : jwk
  if (problems.length > 0 || key === undefined) return fail(problems)

  const token = signToken(subject as { sub: string, login: string, vendor: string }, key, {
    ttlSeconds,
    ...(signing.AUTH_JWT_ISSUER === undefined ? {} : { issuer: signing.AUTH_JWT_ISSUER }),
    ...(signing.AUTH_JWT_AUDIENCE === undefined ? {} : { audience: signing.AUTH_JWT_AUDIENCE })
  })
  return { code: 0, stdout: `${token}\n`, stderr: '' }
}

if (import.meta.main) {
  const result = runTokenCli(process.argv.slice(2))
  process.stdout.write(result.stdout)
  process.stderr.write(result.stderr)
  process.exitCode = result.code
}
