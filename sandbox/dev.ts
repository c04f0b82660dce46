// `npm run dev`: the service wired to an embedded sandbox upstream, for people without the real one.
// Everything secret is generated for this run (upstream keys, JWT secret, console key), so it works on a
// fresh clone with no .env and nothing it prints opens anything real. Only PORT, HOST, LOG_LEVEL, the token claims,
// MIN_APP_VERSION and RATE_LIMIT_PROFILE_PER_MINUTE are read from the environment: an operator's upstream settings
// never leak into the sandbox run. Besides the seeded clients it prints test identities, one for each state of the
// profile an app must handle (outcomes.ts). Its signing key is shared with `npm run token` through a private file
// while it runs (dev-secret.ts).
// `npm run dev -- --jwks` verifies as with AUTH_JWKS_URL instead: the sandbox also serves a key set (an
// RSA and an EC key) and the printed tokens are signed with those keys under their kid.
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import type { AddressInfo } from 'node:net'
import closeWithGrace from 'close-with-grace'
import { prettyFactory } from 'pino-pretty'
import { buildApp, type App } from '../src/app.ts'
import { signToken, type PrivateJwk } from './sign.ts'
import { startSandboxKeySet, type SandboxKeySet } from './jwks.ts'
import { devSigningFile, removeDevSigning, writeDevSigning, type DevSigning } from './dev-secret.ts'
import { ConfigError, loadConfig, type Config } from '../src/config.ts'
import { loggerOptions } from '../src/logger.ts'
import { DOCS_PREFIX } from '../src/plugins/external/docs/prefix.ts'
import { startSandboxUpstream, type SandboxUpstream } from './upstream.ts'
import { seededClients, unknownClient, type SeededClient } from './seed.ts'
import { OUTCOME_CLIENTS, type OutcomeState } from './outcomes.ts'
import { describeOutcomes, statesWithoutIdentity } from './dev-document.ts'

/** Dev tokens outlive any working day; the secret that signs them dies with the process anyway. */
export const DEV_TOKEN_TTL_SECONDS = 24 * 3600
export const PROFILE_PATH = '/api/users/profile'
export const CONSOLE_PATH = '/request-console'

export interface DevOptions {
  /**
   * Read for PORT (default 3000), HOST (default 127.0.0.1), LOG_LEVEL, the token claims AUTH_JWT_ISSUER,
   * AUTH_JWT_AUDIENCE and AUTH_JWT_MAX_AGE_S, MIN_APP_VERSION, RATE_LIMIT_PROFILE_PER_MINUTE, and with `jwks`
   * AUTH_JWKS_REFRESH_S, only.
   */
  env?: Record<string, string | undefined>
  /** Overrides env PORT; 0 picks a free port. */
  port?: number
  /** Overrides env LOG_LEVEL; validated like the variable. */
  logLevel?: string
  /** Where the human-readable log lines go (default stdout). */
  log?: { write (text: string): unknown }
  /** Verify with a key set the sandbox serves (AUTH_JWKS_URL) instead of a generated HS256 secret. */
  jwks?: boolean
}

export interface DevClient {
  label: string
  /** What trying this client shows, for the printed list. */
  about: string
  uid_client: string
  login: string
  vendor: string
  token: string
  /** The key the token is signed with: `HS256`, or the algorithm and kid of a key of the sandbox's set. */
  signedWith: string
}

export interface DevRun {
  app: App
  sandbox: SandboxUpstream
  /** The sandbox's identity provider, with `jwks`. */
  keySet: SandboxKeySet | null
  /** The service's base URL, e.g. http://127.0.0.1:3000 */
  url: string
  docsUrl: string
  clients: DevClient[]
  /** The test identities of outcomes.ts, one for each state of the profile, with their tokens. */
  outcomes: Array<DevClient & { state: OutcomeState }>
  consoleKey: string
  /** What signs the printed tokens, for `npm run token` (written to a private file by `npm run dev`). */
  signing: DevSigning
  /** Shell lines that work when pasted: the first client's profile, and a console call. */
  curl: { profile: string, console: string }
  /** Everything above as the text `npm run dev` prints. */
  banner: string
  /** Stops the service, then the sandbox. */
  close (): Promise<void>
}

const secret = (bytes: number) => randomBytes(bytes).toString('base64url')

/** One POSIX shell word: single-quoted, so tokens and JSON paste safely into bash and zsh. */
export const shellQuote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

function describe (client: SeededClient): string {
  const { catalog_cars_view: views, catalog_cars_favourites: favourites } = client.passport
  return `${views.length} viewed and ${favourites.length} favourite cars, ` +
    `${client.discount.success ? 'bonuses' : 'no bonuses'}, ` +
      `${client.contractor.success ? 'a contractor' : 'no contractor'}`
}

/** A log destination that prints each pino JSON line for people, synchronously (nothing lost at exit). */
function prettyStream (log: { write (text: string): unknown }, colorize: boolean) {
  const prettify = prettyFactory({
    colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true
  })
  return { write: (line: string) => { log.write(prettify(line)) } }
}

/** Where people should point a browser: an unspecified bind address is reached over the loopback. */
function baseUrl (address: AddressInfo): string {
  const host = address.address === '0.0.0.0' || address.address === '::'
    ? '127.0.0.1'
    : address.family === 'IPv6' ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}`
}

/** A block of clients: label and identity, what trying it shows, its token. */
function clientLines (clients: DevClient[], keySet: SandboxKeySet | null): string[] {
  const width = Math.max(...clients.map(c => c.label.length))
  return clients.flatMap(c => [
    `  ${c.label.padEnd(width)}  login ${c.login}, vendor ${c.vendor}, uid_client ${c.uid_client}` +
      (keySet === null ? '' : `, signed ${c.signedWith}`),
    `  ${' '.repeat(width)}  ${c.about}`,
    `  ${' '.repeat(width)}  ${c.token}`
  ])
}

function bannerText (run: Omit<DevRun, 'app' | 'banner' | 'close' | 'signing'>,
  config: Pick<Config, 'MIN_APP_VERSION' | 'RATE_LIMIT_PROFILE_PER_MINUTE'>): string {
  const minAppVersion = config.MIN_APP_VERSION
  return [
    '',
    'Dealer profile BFF on the sandbox upstream. Keys, secret and tokens are generated for this run only.',
    '',
    `  Swagger UI  ${run.docsUrl}  (Authorize: a token below as bearerAuth, the console key as consoleKey)`,
    `  Service     ${run.url}`,
    `  Sandbox     ${run.sandbox.url}  (stand-in passport and dealer upstreams)`,
    ...(run.keySet === null ? [] : [`  Key set     ${run.keySet.url}  (AUTH_JWKS_URL: an RSA and an EC key)`]),
    '',
    `Dev tokens (Authorization: Bearer <token>, valid ${DEV_TOKEN_TTL_SECONDS / 3600}h):`,
    ...clientLines(run.clients, run.keySet),
    '',
    'Test identities, one for each state of the profile an app must handle (docs/mobile.md, Every state on the ' +
      'sandbox):',
    ...clientLines(run.outcomes, run.keySet),
    'No identity causes these:',
    ...statesWithoutIdentity(config.RATE_LIMIT_PROFILE_PER_MINUTE, minAppVersion).map(line => `  ${line}`),
    '',
    'Console key (x-console-key):',
    `  ${run.consoleKey}`,
    '',
    'More tokens, for any test client, while this runs (in another terminal):',
    '  npm run -s token -- --sub <uid_client> --login <digits> --vendor <code>',
    ...(minAppVersion === undefined
      ? []
      : ['', `Minimum app version ${minAppVersion}: an older x-app-version gets 426 APP_UPDATE_REQUIRED.`]),
    '',
    'Try it:',
    `  ${run.curl.profile}`,
    `  ${run.curl.console}`,
    '',
    'Ctrl-C stops the service and the sandbox.',
    ''
  ].join('\n')
}

/** Starts the sandbox and the service wired to it; the caller prints `banner` and closes the run. */
export async function startDev (
  { env = {}, port, logLevel, log = process.stdout, jwks = false }: DevOptions = {}
): Promise<DevRun> {
  const keys = { passport: secret(24), dealer: secret(24) }
  const jwtSecret = secret(32)
  // Checked now like the upstream URL; the sandbox's real key set URL replaces it once it listens.
  const verification = jwks
    ? { AUTH_JWKS_URL: 'http://127.0.0.1/certs', AUTH_JWKS_REFRESH_S: env.AUTH_JWKS_REFRESH_S }
    : { AUTH_JWT_SECRET: jwtSecret }
  const consoleKey = secret(24)
  // Validated like any configuration, so a bad PORT or LOG_LEVEL is named before anything starts.
  const config = loadConfig({
    HOST: env.HOST ?? '127.0.0.1',
    PORT: port === undefined ? env.PORT : String(port),
    LOG_LEVEL: logLevel ?? env.LOG_LEVEL,
    // So the claims rules can be tried locally; the tokens below are signed to match.
    AUTH_JWT_ISSUER: env.AUTH_JWT_ISSUER,
    AUTH_JWT_AUDIENCE: env.AUTH_JWT_AUDIENCE,
    AUTH_JWT_MAX_AGE_S: env.AUTH_JWT_MAX_AGE_S,
    // So an app team can try its update screen (426 APP_UPDATE_REQUIRED) on the sandbox.
    MIN_APP_VERSION: env.MIN_APP_VERSION,
    // So the 429 and its Retry-After can be met by hand: a lower limit is reached in a few taps.
    RATE_LIMIT_PROFILE_PER_MINUTE: env.RATE_LIMIT_PROFILE_PER_MINUTE,
    // Checked now; replaced below by the sandbox's real address once it listens.
    UPSTREAM_URL: 'http://127.0.0.1',
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    ...verification,
    CONSOLE_API_KEY: consoleKey
  })

  const sandbox = await startSandboxUpstream({ keys, outcomes: true })
  let keySet: SandboxKeySet | null = null
  let app: App
  try {
    if (jwks) keySet = await startSandboxKeySet()
    const colorize = (log as { isTTY?: boolean }).isTTY === true
    const upstream = { UPSTREAM_URL: sandbox.url, ...(keySet === null ? {} : { AUTH_JWKS_URL: keySet.url }) }
    app = await buildApp({ ...config, ...upstream }, {
      logger: { ...loggerOptions(config), stream: prettyStream(log, colorize) },
      describeDocument: describeOutcomes(config.RATE_LIMIT_PROFILE_PER_MINUTE, config.MIN_APP_VERSION)
    })
    await app.listen({ host: config.HOST, port: config.PORT })
    // The printed tokens work the moment they are printed: the first set is on the loopback, so this is quick.
    if (app.keySet !== null) await app.keySet.refresh()
  } catch (error) {
    await keySet?.close()
    await sandbox.close()
    throw error
  }

  const url = baseUrl(app.server.address() as AddressInfo)
  const seeded = [
    ...seededClients.map(c => ({ label: c.label, about: describe(c), ...c.identity })),
    { label: 'UNKNOWN', about: 'unknown to the passport: the profile answers 404 CLIENT_NOT_FOUND', ...unknownClient }
  ]
  const outcomes = OUTCOME_CLIENTS.map(c => ({
    label: c.name, about: c.about, uid_client: c.uid_client, login: c.login, vendor: c.vendor, state: c.state
  }))
  const withToken = <C extends Omit<DevClient, 'token' | 'signedWith'>>(c: C, i: number): C & DevClient => {
    // With a key set, the clients take turns on its RSA and EC keys, so both are exercised.
    const signer: string | PrivateJwk = keySet === null
      ? jwtSecret
      : i % 2 === 0 ? keySet.signing.rsa : keySet.signing.ec
    return {
      ...c,
      signedWith: typeof signer === 'string'
        ? 'HS256'
        : `${signer.kty === 'RSA' ? 'RS256' : 'ES256'} (kid ${signer.kid})`,
      // Never past the service's maximum age, or the printed tokens would die before their exp.
      token: signToken({ sub: c.uid_client, login: c.login, vendor: c.vendor }, signer, {
        ttlSeconds: Math.min(DEV_TOKEN_TTL_SECONDS, config.AUTH_JWT_MAX_AGE_S),
        ...(config.AUTH_JWT_ISSUER === undefined ? {} : { issuer: config.AUTH_JWT_ISSUER }),
        ...(config.AUTH_JWT_AUDIENCE === undefined ? {} : { audience: config.AUTH_JWT_AUDIENCE })
      })
    }
  }
  const clients: DevClient[] = seeded.map(withToken)
  const outcomeClients = outcomes.map((c, i) => withToken(c, seeded.length + i))

  const first = clients[0]!
  const consoleBody = JSON.stringify({
    operation: 'passport.get_client',
    params: { vendor: first.vendor, login: first.login, uid_client: first.uid_client }
  })
  const curl = {
    profile: `curl -sS -H ${shellQuote(`Authorization: Bearer ${first.token}`)} ${url}${PROFILE_PATH}`,
    console: `curl -sS -X POST -H 'content-type: application/json' -H ${shellQuote(`x-console-key: ${consoleKey}`)} ` +
      `-d ${shellQuote(consoleBody)} ${url}${CONSOLE_PATH}`
  }
  const info = {
    sandbox, keySet, url, docsUrl: `${url}${DOCS_PREFIX}`, clients, outcomes: outcomeClients, consoleKey, curl
  }
  const signing: DevSigning = {
    pid: process.pid,
    url,
    ...(keySet === null ? { secret: jwtSecret } : { jwk: keySet.signing.rsa }),
    ...(config.AUTH_JWT_ISSUER === undefined ? {} : { issuer: config.AUTH_JWT_ISSUER }),
    ...(config.AUTH_JWT_AUDIENCE === undefined ? {} : { audience: config.AUTH_JWT_AUDIENCE }),
    maxAgeS: config.AUTH_JWT_MAX_AGE_S
  }
  return {
    app,
    ...info,
    signing,
    banner: bannerText(info, config),
    async close () {
      try {
        await app.close()
      } finally {
        await keySet?.close()
        await sandbox.close()
      }
    }
  }
}

async function main (): Promise<void> {
  let run: DevRun
  try {
    const { values } = parseArgs({ options: { jwks: { type: 'boolean', default: false } }, strict: true })
    run = await startDev({ env: process.env, jwks: values.jwks })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (error instanceof ConfigError) process.stderr.write(`npm run dev: ${error.message}\n`)
    else if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`npm run dev: ${(error as Error).message}; the only option is --jwks\n`)
    } else if (code === 'EADDRINUSE') {
      process.stderr.write(`npm run dev: port ${process.env.PORT ?? 3000} is in use; ` +
        'choose another, e.g. PORT=3001 npm run dev\n')
    } else throw error
    process.exit(1)
  }
  // `npm run token` signs with this run's key while it runs; the file goes with the run.
  const signingFile = devSigningFile(process.env)
  try {
    await writeDevSigning(signingFile, run.signing)
  } catch (error) {
    run.app.log.warn({ err: error }, 'npm run token cannot reach this run: its signing file could not be written')
  }
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) run.app.log.error({ err }, 'stopping after an error')
    else run.app.log.info({ signal }, 'stopping the service and the sandbox')
    try {
      await run.close()
    } finally {
      await removeDevSigning(signingFile)
    }
  })
  process.stdout.write(run.banner)
}

if (import.meta.main) await main()
