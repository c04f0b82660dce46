// `npm run token`: its argument checks as a function, one real process for stdout/exit code/.env, and
// proof that what it mints is a token the service accepts for exactly the client it names.
import { execFile } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { PETROVA } from '../../schemas/fixtures.ts'
import { buildApp } from '../../src/app.ts'
import { MAX_TTL_SECONDS, signToken } from '../../sandbox/sign.ts'
import { loadConfig } from '../../src/config.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { publicMember, startSandboxKeySet } from '../../sandbox/jwks.ts'
import { runTokenCli } from '../../scripts/token.ts'
import { devSigningFile, removeDevSigning, writeDevSigning } from '../../sandbox/dev-secret.ts'

const SCRIPT = fileURLToPath(new URL('../../scripts/token.ts', import.meta.url))
const SECRET = 'a-token-script-secret-of-at-least-32-chars'
const PETROVA_SUBJECT = { sub: PETROVA.uid_client, login: PETROVA.login, vendor: PETROVA.vendor }
const GOOD = ['--sub', PETROVA.uid_client, '--login', PETROVA.login, '--vendor', PETROVA.vendor]
const run = promisify(execFile)

/** The claims of a JWT, decoded here without the code under test. */
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())

/** A directory with no .env unless the test writes one, so the checkout's own .env never leaks in. */
async function emptyDir (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'token-test-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('mints a token the service accepts for the client it names', async t => {
  const cwd = await emptyDir(t)
  const result = runTokenCli([...GOOD, '--ttl', '15m'], { env: { AUTH_JWT_SECRET: SECRET }, cwd })
  t.equal(result.code, 0, result.stderr)
  t.equal(result.stderr, '')
  t.match(result.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/, 'only the token, on one line')
  const token = result.stdout.trim()
  const claims = claimsOf(token)
  t.match(claims, { sub: PETROVA.uid_client, login: PETROVA.login, vendor: PETROVA.vendor })
  t.equal(claims.exp - claims.iat, 900, '--ttl 15m')

  // The real service over the sandbox upstream: the token opens PETROVA's profile and nobody else's.
  const keys = { passport: 'passport-key-for-the-token-test', dealer: 'dealer-key-for-the-token-test' }
  const sandbox = await startSandboxUpstream({ keys })
  t.teardown(() => sandbox.close())
  const config = loadConfig({
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    AUTH_JWT_SECRET: SECRET,
    LOG_LEVEL: 'silent'
  })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } })
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.json().client.login, PETROVA.login)

  const forged = signToken(PETROVA_SUBJECT, 'another-secret-that-is-32-characters-long')
  const refused = await app.inject({ url: '/api/users/profile', headers: { authorization: `Bearer ${forged}` } })
  t.equal(refused.statusCode, 401, 'a token signed with another secret is refused')
})

t.test('signs iss and aud when AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE are set, and the service ' +
  'configured so accepts it', async t => {
  const cwd = await emptyDir(t)
  const claimsEnv = { AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'dealer-app' }
  const result = runTokenCli(GOOD, { env: { AUTH_JWT_SECRET: SECRET, ...claimsEnv }, cwd })
  t.equal(result.code, 0, result.stderr)
  const token = result.stdout.trim()
  t.match(claimsOf(token), { iss: 'https://id.example', aud: 'dealer-app' })
  t.notOk('iss' in claimsOf(runTokenCli(GOOD, { env: { AUTH_JWT_SECRET: SECRET }, cwd }).stdout.trim()),
    'no iss when unset')

  const config = loadConfig({
    UPSTREAM_URL: 'http://127.0.0.1:9',
    PASSPORT_API_KEY: 'p',
    DEALER_API_KEY: 'd',
    AUTH_JWT_SECRET: SECRET,
    LOG_LEVEL: 'silent',
    ...claimsEnv
  })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  app.get('/test/caller', { onRequest: app.authenticate }, async (request) => request.caller)
  t.equal((await app.inject({ url: '/test/caller', headers: { authorization: `Bearer ${token}` } })).statusCode, 200)
})

t.test('refuses a --ttl longer than AUTH_JWT_MAX_AGE_S (one day by default)', async t => {
  const cwd = await emptyDir(t)
  const tooLong = runTokenCli([...GOOD, '--ttl', '2d'], { env: { AUTH_JWT_SECRET: SECRET }, cwd })
  t.equal(tooLong.code, 1)
  t.match(tooLong.stderr, /--ttl is longer than AUTH_JWT_MAX_AGE_S \(86400s\)/)
  t.equal(runTokenCli([...GOOD, '--ttl', '2d'],
    { env: { AUTH_JWT_SECRET: SECRET, AUTH_JWT_MAX_AGE_S: '172800' }, cwd }).code, 0)
  t.equal(runTokenCli([...GOOD, '--ttl', '2h'],
    { env: { AUTH_JWT_SECRET: SECRET, AUTH_JWT_MAX_AGE_S: '3600' }, cwd }).code, 1)
})

t.test('defaults to a one-hour token', async t => {
  const result = runTokenCli(GOOD, { env: { AUTH_JWT_SECRET: SECRET }, cwd: await emptyDir(t) })
  const claims = claimsOf(result.stdout.trim())
  t.equal(claims.exp - claims.iat, 3600)
})

t.test('names every bad argument at once, exits 1 and prints no token', async t => {
  const cwd = await emptyDir(t)
  const result = runTokenCli(['--sub', 'not-a-uuid', '--login', '+7 916 123', '--ttl', '2y'],
    { env: { AUTH_JWT_SECRET: SECRET }, cwd })
  t.equal(result.code, 1)
  t.equal(result.stdout, '')
  t.match(result.stderr, '--sub must be a UUID')
  t.match(result.stderr, '--login must be digits only')
  t.match(result.stderr, '--vendor is required')
  t.match(result.stderr, '--ttl must be a duration')
  t.match(result.stderr, 'Usage: npm run token -- --sub UUID --login DIGITS --vendor CODE [--ttl 1h]')
})

t.test('refuses a lifetime of zero, a fraction or beyond the cap', async t => {
  const cwd = await emptyDir(t)
  for (const ttl of ['0', '1.5h', `${MAX_TTL_SECONDS + 1}`, '31d', 'soon']) {
    const result = runTokenCli([...GOOD, '--ttl', ttl], { env: { AUTH_JWT_SECRET: SECRET }, cwd })
    t.equal(result.code, 1, `--ttl ${ttl}`)
    t.match(result.stderr, '--ttl must be a duration', `--ttl ${ttl}`)
  }
  t.equal(runTokenCli([...GOOD, '--ttl', '90'], { env: { AUTH_JWT_SECRET: SECRET }, cwd }).code, 0,
    'plain seconds are accepted')
})

t.test('refuses unknown options and options without a value', async t => {
  const cwd = await emptyDir(t)
  const unknown = runTokenCli([...GOOD, '--secret', 'x'], { env: { AUTH_JWT_SECRET: SECRET }, cwd })
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, "Unknown option '--secret'")
  const empty = runTokenCli(['--sub'], { env: { AUTH_JWT_SECRET: SECRET }, cwd })
  t.equal(empty.code, 1)
  t.match(empty.stderr, '--sub')
})

t.test('a missing or too short secret is named, and never printed', async t => {
  const cwd = await emptyDir(t)
  // Its own runtime directory: a developer's live `npm run dev` must not lend its key here.
  const missing = runTokenCli(GOOD, { env: { XDG_RUNTIME_DIR: cwd }, cwd })
  t.equal(missing.code, 1)
  t.match(missing.stderr, 'AUTH_JWT_SECRET is not set')
  t.match(missing.stderr, 'no `npm run dev` is running either')

  const publicKeyOnly = runTokenCli(GOOD, {
    env: { AUTH_JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----', XDG_RUNTIME_DIR: cwd }, cwd
  })
  t.match(publicKeyOnly.stderr, 'AUTH_JWT_PUBLIC_KEY needs tokens from its own issuer')

  const short = 'short-secret-XYZ'
  const tooShort = runTokenCli(GOOD, { env: { AUTH_JWT_SECRET: short }, cwd })
  t.equal(tooShort.code, 1)
  t.match(tooShort.stderr, 'AUTH_JWT_SECRET is shorter than 32 characters')
  t.notMatch(tooShort.stderr, short)
})

t.test('--jwk signs with a private JWK under its kid; the service verifying with that key set accepts it', async t => {
  const cwd = await emptyDir(t)
  const keySet = await startSandboxKeySet()
  t.teardown(() => keySet.close())
  for (const kind of ['rsa', 'ec'] as const) {
    await writeFile(join(cwd, `${kind}.json`), JSON.stringify(keySet.signing[kind]))
  }
  const keys = { passport: 'passport-key-for-the-token-test', dealer: 'dealer-key-for-the-token-test' }
  const sandbox = await startSandboxUpstream({ keys })
  t.teardown(() => sandbox.close())
  const config = loadConfig({
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: keys.passport,
    DEALER_API_KEY: keys.dealer,
    AUTH_JWKS_URL: keySet.url,
    AUTH_JWT_ISSUER: 'https://idp.example.com/realms/dealers',
    AUTH_JWT_AUDIENCE: 'dealer-app',
    LOG_LEVEL: 'silent'
  })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  await app.ready()
  await app.keySet!.refresh()

  // AUTH_JWT_SECRET plays no part with --jwk; the claims variables still do.
  const env = {
    AUTH_JWT_SECRET: SECRET, AUTH_JWT_ISSUER: config.AUTH_JWT_ISSUER, AUTH_JWT_AUDIENCE: config.AUTH_JWT_AUDIENCE
  }
  for (const [file, alg, kid] of [['rsa.json', 'RS256', keySet.signing.rsa.kid],
    ['ec.json', 'ES256', keySet.signing.ec.kid]]) {
    const result = runTokenCli([...GOOD, '--jwk', file!], { env, cwd })
    t.equal(result.code, 0, result.stderr)
    const token = result.stdout.trim()
    t.strictSame(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()), { alg, typ: 'JWT', kid },
      `${file}: ${alg} under its kid`)
    t.match(claimsOf(token), { iss: config.AUTH_JWT_ISSUER, aud: config.AUTH_JWT_AUDIENCE })
    const res = await app.inject({ url: '/api/users/profile', headers: { authorization: `Bearer ${token}` } })
    t.equal(res.statusCode, 200, `${file}: the service accepts it`)
    t.equal(res.json().client.login, PETROVA.login)
  }
})

t.test('--jwk names what is wrong with the key file, never any part of the key', async t => {
  const cwd = await emptyDir(t)
  const keySet = await startSandboxKeySet()
  t.teardown(() => keySet.close())
  const { kid: _kid, ...withoutKid } = keySet.signing.rsa
  const files: Record<string, unknown> = {
    'public.json': publicMember(keySet.signing.rsa),
    'no-kid.json': withoutKid,
    'secret.json': { kty: 'oct', kid: 'k', k: 'c2VjcmV0', d: 'x' },
    'wrong-alg.json': { ...keySet.signing.ec, alg: 'RS256' },
    'broken.json': { ...keySet.signing.rsa, n: 'AQAB' }
  }
  for (const [name, jwk] of Object.entries(files)) await writeFile(join(cwd, name), JSON.stringify(jwk))
  await writeFile(join(cwd, 'not-json.json'), 'd=secret-material')
  const cases: Array<[string, RegExp]> = [
    ['missing.json', /--jwk: no file .*missing\.json/],
    ['not-json.json', /--jwk: the file is not a JSON Web Key/],
    ['public.json', /--jwk: the JWK is a public key/],
    ['no-kid.json', /--jwk: the JWK needs a kid/],
    ['secret.json', /--jwk: the JWK is not a readable private key/],
    ['wrong-alg.json', /--jwk: the JWK's alg must be one of ES256/],
    ['broken.json', /--jwk: the JWK is not a readable private key|--jwk: the JWK must be an RSA key of 2048 bits/]
  ]
  for (const [file, problem] of cases) {
    const result = runTokenCli([...GOOD, '--jwk', file], { env: {}, cwd })
    t.equal(result.code, 1, file)
    t.equal(result.stdout, '')
    t.match(result.stderr, problem, file)
    t.notMatch(result.stderr, 'AUTH_JWT_SECRET is not set', 'no secret is asked for')
    for (const part of [keySet.signing.rsa.d!, keySet.signing.ec.d!, 'secret-material']) t.notMatch(result.stderr, part)
  }
  t.match(runTokenCli(GOOD, { env: { AUTH_JWKS_URL: 'https://idp.example.com/certs', XDG_RUNTIME_DIR: cwd }, cwd }).stderr,
    'AUTH_JWKS_URL, sign with a private key of its set: --jwk FILE')
})

t.test('as a process: reads the secret from .env, prints only the token, exit codes 0 and 1', async t => {
  const cwd = await emptyDir(t)
  await writeFile(join(cwd, '.env'), `# operator settings\nAUTH_JWT_SECRET="${SECRET}"\n`)
  const env = { PATH: process.env.PATH }
  const { stdout, stderr } = await run(process.execPath, [SCRIPT, ...GOOD], { cwd, env })
  t.equal(stderr, '')
  const token = stdout.trim()
  t.equal(stdout, `${token}\n`)
  t.equal(token, signToken(PETROVA_SUBJECT, SECRET, { now: claimsOf(token).iat * 1000 }), 'signed with the .env secret')

  const failed = await run(process.execPath, [SCRIPT, '--sub', 'nope'], { cwd, env }).then(() => null,
    (error: { code: number, stdout: string, stderr: string }) => error)
  t.ok(failed, 'a bad argument fails the process')
  t.equal(failed?.code, 1)
  t.equal(failed?.stdout, '')
  t.match(failed?.stderr, '--sub must be a UUID')
  t.notMatch(failed?.stderr, SECRET)
})

t.test('while npm run dev runs, its key signs for any client; a dead run\'s or a readable file is ignored', async t => {
  const runtime = await emptyDir(t)
  const cwd = await emptyDir(t)
  const env = { XDG_RUNTIME_DIR: runtime }
  const file = devSigningFile(env)
  t.equal(file, join(runtime, 'dealer-profile-bff', 'dev-signing.json'))
  const signing = { pid: process.pid, url: 'http://127.0.0.1:3000', secret: SECRET, issuer: 'dev-issuer', maxAgeS: 3600 }
  await writeDevSigning(file, signing)
  t.equal((await stat(file)).mode & 0o777, 0o600, 'only the user reads the file')
  t.equal((await stat(join(file, '..'))).mode & 0o777, 0o700, 'nor enters its directory')

  const minted = runTokenCli(GOOD, { env, cwd })
  t.equal(minted.code, 0, minted.stderr)
  const token = minted.stdout.trim()
  t.match(claimsOf(token), { ...PETROVA_SUBJECT, iss: 'dev-issuer' }, 'the dev run\'s claims rules')
  t.equal(token, signToken(PETROVA_SUBJECT, SECRET, { now: claimsOf(token).iat * 1000, issuer: 'dev-issuer' }),
    'signed with the dev run\'s secret')
  t.match(runTokenCli([...GOOD, '--ttl', '2h'], { env, cwd }).stderr, 'longer than AUTH_JWT_MAX_AGE_S (3600s)',
    'the dev run\'s maximum age')
  const operator = { ...env, AUTH_JWT_SECRET: 'an-operator-secret-of-32-characters-or-more' }
  const own = runTokenCli(GOOD, { env: operator, cwd })
  t.not(own.stdout.trim().split('.')[2], token.split('.')[2], 'AUTH_JWT_SECRET, when set, wins')

  await chmod(file, 0o644)
  t.equal(runTokenCli(GOOD, { env, cwd }).code, 1, 'a file others can read is not trusted')
  await chmod(file, 0o600)

  const gone = spawnSync(process.execPath, ['-e', '']).pid
  await writeDevSigning(file, { ...signing, pid: gone })
  t.match(runTokenCli(GOOD, { env, cwd }).stderr, 'no `npm run dev` is running', 'a run that died lends nothing')
  await removeDevSigning(file)
  t.equal((await stat(file)).isFile(), true, 'another run\'s file is left alone')
  await writeDevSigning(file, signing)
  await removeDevSigning(file)
  await t.rejects(stat(file), { code: 'ENOENT' }, 'the run removes its own file')
})
