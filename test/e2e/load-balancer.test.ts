// Two `node src/server.ts` instances on one real Redis behind a real nginx running the site of docs/operations.md
// (deploy/nginx/dealer-bff.conf, round-robin): the per-client limit holds across them, the per-address
// limits key on the caller's address as nginx forwarded it (TRUST_PROXY names nginx; a forged
// X-Forwarded-For from anyone else is ignored), and SIGTERM to one instance while profiles stream
// through nginx loses none of them.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { signToken } from '../../sandbox/sign.ts'
import { startSandboxUpstream } from '../../sandbox/upstream.ts'
import { ivanov } from '../../sandbox/seed.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { hs256 } from '../helpers/tokens.ts'
import {
  get, requireBinaries, startNginx, startRedis, startServerProcess, type Answer,
  type ServerProcess
} from '../helpers/real-servers.ts'

const PROFILE = '/api/users/profile'
const AUTH_LIMIT = 3
const IVANOV = {
  authorization: `Bearer ${signToken({
    sub: ivanov.identity.uid_client, login: ivanov.identity.login, vendor: ivanov.identity.vendor
  }, JWT_SECRET)}`
}
// Signed with another secret: refused by the service with 401, whatever happens past the limit.
const BAD = { authorization: `Bearer ${hs256(undefined, 'not-the-secret-of-the-service-at-all-0000')}` }
// Callers on distinct loopback addresses (all of 127/8 is this machine): what nginx sees as $remote_addr.
const CALLER_A = '127.0.0.2'
const CALLER_B = '127.0.0.3'

interface Cluster { nginx: string, instances: ServerProcess[] }

async function cluster (t: Test, binaries: { 'redis-server': string, nginx: string },
  profileLimit: number): Promise<Cluster> {
  const redis = await startRedis(t, binaries['redis-server'])
  const sandbox = await startSandboxUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY } })
  t.teardown(() => sandbox.close())
  const env = {
    UPSTREAM_URL: sandbox.url,
    PASSPORT_API_KEY: PASSPORT_KEY,
    DEALER_API_KEY: DEALER_KEY,
    AUTH_JWT_SECRET: JWT_SECRET,
    REDIS_URL: redis.url,
    // nginx connects from 127.0.0.1: only that hop's X-Forwarded-For is believed.
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_PROFILE_PER_MINUTE: String(profileLimit),
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(AUTH_LIMIT),
    // Short: nginx's idle keep-alive connections can hold a draining instance open until the grace ends.
    SHUTDOWN_GRACE_MS: '1000',
    LOG_LEVEL: 'info'
  }
  // One instance is ended with SIGTERM mid-stream, and its coverage (the shared limits' 429s) is written then.
  const instances = await Promise.all([0, 1].map(async () => await startServerProcess(t, env, { covered: true })))
  for (const instance of instances) {
    const ready = JSON.parse((await get(`${instance.url}/health/ready`)).body) as { redis?: string }
    t.equal(ready.redis, 'up', 'connected to Redis before it listens: the first requests count')
  }
  const { url } = await startNginx(t, binaries.nginx, instances.map(instance => new URL(instance.url).host))
  return { nginx: url, instances }
}

/** The client addresses an instance logged for its answered requests to `url`. */
// The access line is written once the answer is sent, so it may reach the test just after the answer.
const servedTo = (instance: ServerProcess, url: string) => instance.logs
  .filter(line => line.msg === 'request completed' && (line.req as { url: string }).url === url)
  .map(line => (line.req as { remoteAddress: string }).remoteAddress)

/** Whether `check` holds once the instances' last log lines are in (a bounded wait, not a timing). */
async function eventually (check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !check(); i++) await sleep(20)
  return check()
}

const binaries = requireBinaries(t, ['redis-server', 'nginx'])

if (binaries !== undefined) {
  t.test('behind nginx round-robin: the per-client and per-address limits hold across instances', async t => {
    const limit = 6
    const { nginx, instances } = await cluster(t, binaries, limit)

    const answers: Answer[] = []
    for (let i = 0; i <= limit; i++) answers.push(await get(`${nginx}${PROFILE}`, IVANOV, CALLER_A))
    t.same(answers.map(a => a.status), [...Array(limit).fill(200), 429], `${limit} profiles of one client, then 429`)
    t.same(answers.slice(0, limit).map(a => a.headers['x-ratelimit-remaining']), ['5', '4', '3', '2', '1', '0'])
    for (const [i, instance] of instances.entries()) {
      t.ok(await eventually(() => servedTo(instance, PROFILE).length >= 2), `instance ${i + 1} served its share`)
    }

    // Refused credentials count per caller address as nginx forwarded it, across both instances.
    const failures: Answer[] = []
    for (let i = 0; i <= AUTH_LIMIT; i++) failures.push(await get(`${nginx}${PROFILE}`, BAD, CALLER_A))
    t.same(failures.map(a => a.status), [...Array(AUTH_LIMIT).fill(401), 429],
      `${AUTH_LIMIT} refused tokens from ${CALLER_A}, then 429`)
    const forged = await get(`${nginx}${PROFILE}`, { ...BAD, 'x-forwarded-for': '198.51.100.77' }, CALLER_A)
    t.equal(forged.status, 429, 'a forged X-Forwarded-For from the caller does not buy a fresh budget')
    const other = await get(`${nginx}${PROFILE}`, BAD, CALLER_B)
    t.equal(other.status, 401, `${CALLER_B} has its own budget`)
    t.ok(await eventually(() => instances.some(instance => servedTo(instance, PROFILE).includes(CALLER_B))),
      'the instances saw the caller\'s address, not nginx\'s')

    // Straight to an instance from an address that is not the trusted hop: its X-Forwarded-For is ignored.
    const direct = await get(`${instances[0]!.url}${PROFILE}`, { ...BAD, 'x-forwarded-for': CALLER_B }, CALLER_A)
    t.equal(direct.status, 429, `counted as ${CALLER_A}, not the ${CALLER_B} it claims to forward for`)
  })

  t.test('SIGTERM to one instance while profiles stream through nginx: no request lost', async t => {
    const { nginx, instances } = await cluster(t, binaries, 100_000)
    const [leaving] = instances as [ServerProcess, ServerProcess]
    const answers: Answer[] = []
    const stream = { stopped: false }
    // Four callers, one request after another each: a steady stream, some in flight at any moment.
    const callers = Array.from({ length: 4 }, async () => {
      while (!stream.stopped) answers.push(await get(`${nginx}${PROFILE}`, IVANOV))
    })
    const until = async (count: number) => {
      while (answers.length < count && !stream.stopped) await new Promise(resolve => setTimeout(resolve, 10))
    }

    await until(40)
    leaving.child.kill('SIGTERM')
    await leaving.exited
    const atExit = answers.length
    await until(atExit + 40)
    stream.stopped = true
    await Promise.all(callers)

    t.ok(leaving.logs.some(line => line.msg === 'shutting down'), 'the instance shut down on SIGTERM')
    t.ok(await eventually(() => servedTo(leaving, PROFILE).length > 0), 'it had served part of the stream')
    const failed = answers.filter(a => a.status !== 200).map(a => `${a.status} ${a.body}`)
    t.same(failed, [],
      `all ${answers.length} profiles answered 200, ${answers.length - atExit} of them after the instance exited`)
  })
}
