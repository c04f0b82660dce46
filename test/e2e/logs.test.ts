// Every log line of a full profile and console run, at level trace, holds no key, secret or token.
import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp } from '../../src/app.ts'
import { signToken } from '../../sandbox/sign.ts'
import { loggerOptions } from '../../src/logger.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { ivanov, unknownClient } from '../../sandbox/seed.ts'
import { CONSOLE_KEY, DEALER_KEY, JWT_SECRET, PASSPORT_KEY, testConfig } from '../helpers/build-app.ts'

t.test('no key, secret or token reaches the log at level trace', async t => {
  const upstream = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  let upstreamOpen = true
  t.teardown(async () => { if (upstreamOpen) await upstream.close() })
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  const config = testConfig({ UPSTREAM_URL: upstream.url, LOG_LEVEL: 'trace' })
  const app = await buildApp(config, { logger: { ...loggerOptions(config), stream } })
  t.teardown(() => app.close())
  const base = await app.listen({ host: '127.0.0.1', port: 0 })

  const token = signToken(
    { sub: ivanov.identity.uid_client, login: ivanov.identity.login, vendor: ivanov.identity.vendor }, JWT_SECRET
  )
  const unknownToken = signToken(
    { sub: unknownClient.uid_client, login: unknownClient.login, vendor: unknownClient.vendor }, JWT_SECRET
  )
  const signature = token.split('.')[2]!
  const asCaller = (auth: string) =>
    fetch(`${base}/api/users/profile`, { headers: { authorization: auth, cookie: 'session=s3cr3t-cookie' } })
  t.equal((await asCaller(`Bearer ${token}`)).status, 200)
  t.equal((await asCaller(`Bearer ${unknownToken}`)).status, 404)
  t.equal((await asCaller(`Bearer ${token.slice(0, -4)}AAAA`)).status, 401)
  t.equal((await asCaller(`Basic ${Buffer.from(`user:${JWT_SECRET}`).toString('base64')}`)).status, 401)
  const console = (key: string, operation: string, params: object) => fetch(`${base}/request-console`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-console-key': key },
    body: JSON.stringify({ operation, params })
  })
  t.equal((await console(CONSOLE_KEY, 'passport.get_client', ivanov.identity)).status, 200)
  t.equal((await console(CONSOLE_KEY, 'dealer.discount', { uid_client: ivanov.identity.uid_client })).status, 200)
  t.equal((await console(CONSOLE_KEY, 'dealer.client', { uid_client: ivanov.identity.uid_client })).status, 200)
  t.equal((await console(`${CONSOLE_KEY}x`, 'dealer.client', { uid_client: ivanov.identity.uid_client })).status, 401)
  // An upstream that is gone: the failure is logged with its cause, still without a key.
  await upstream.close()
  upstreamOpen = false
  t.equal((await console(CONSOLE_KEY, 'dealer.client', { uid_client: ivanov.identity.uid_client })).status, 503)
  await app.close()

  const log = lines.join('')
  t.ok(lines.length > 20, `the run was logged (${lines.length} lines)`)
  t.match(log, /"level":50/, 'the upstream failure was logged as an error')
  t.match(log, /"req":\{/, 'requests are logged')
  const secrets = {
    PASSPORT_KEY,
    DEALER_KEY,
    JWT_SECRET,
    CONSOLE_KEY,
    token,
    unknownToken,
    signature,
    cookie: 's3cr3t-cookie'
  }
  for (const [name, secret] of Object.entries(secrets)) {
    t.notOk(log.includes(secret), `${name} is not in the log`)
  }
})
