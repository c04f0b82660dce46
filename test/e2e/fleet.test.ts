// The fleet as production runs it: three `node src/server.ts` instances behind a real nginx running the site of
// docs/operations.md (deploy/nginx/dealer-bff.conf, the clients on HTTPS), on a real Redis primary and replica under
// three real Sentinels (REDIS_SENTINELS), in front of the fault upstream. Under a steady load of returning clients,
// one disruption at a time: the Redis primary killed (a failover), an instance killed (SIGKILL) and started again,
// then another restarted gracefully (SIGTERM). Every client is answered 200 throughout; afterwards the limits are
// shared again on the new primary (one client's burst over the three instances is limited once), a copy written after
// the failover is served by every instance while the passport is down, and a deletion queued during the failover was
// applied on the new primary. Behind nginx the per-address limits key on the caller's address as nginx forwarded
// it (TRUST_PROXY names nginx; a forged X-Forwarded-For from anyone else is ignored). The figures of
// docs/operations.md (Running a fleet) are this test's comments.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { Redis } from 'ioredis'
import { operations } from '../../schemas/operations.ts'
import { signToken } from '../../sandbox/sign.ts'
import { ivanov, unknownResponses, type SeededClient } from '../../sandbox/seed.ts'
import { startFaultUpstream } from '../../sandbox/faults.ts'
import { profileCacheKeys } from '../../src/config.ts'
import { cacheKey, identityName } from '../../src/profile/last-known/keys.ts'
import { DEALER_KEY, JWT_SECRET, PASSPORT_KEY } from '../helpers/build-app.ts'
import { hs256 } from '../helpers/tokens.ts'
import {
  eventually, get, requireBinaries, startNginx, startSentinelGroup, startServerProcess, type HttpResult,
  type ServerProcess
} from '../helpers/real-servers.ts'

// Setup (a replicated Redis, three Sentinels, three instances) and about half a minute of load on a busy machine.
t.setTimeout(150_000)

const PROFILE = '/api/users/profile'
const LIMIT = 60
const AUTH_LIMIT = 3
// Signed with another secret: refused by the service with 401, whatever happens past the limit.
const BAD = { authorization: `Bearer ${hs256(undefined, 'not-the-secret-of-the-service-at-all-0000')}` }
// Callers on distinct loopback addresses (all of 127/8 is this machine): what nginx sees as $remote_addr.
const CALLER_A = '127.0.0.2'
const CALLER_B = '127.0.0.3'
const LOAD_CLIENTS = 12
// Each load client asks about once every 1.2 s: fewer than LIMIT a minute, even counted on one instance alone.
const PAUSE_MS = 1200
const METRICS_KEY = 'metrics-key-for-the-fleet-test'
const CACHE_KEY = Buffer.alloc(32, 7).toString('base64')

/** A client the passport knows: Ivanov's record under identity `n` (the other-client rule checks uid_client). */
function fleetClient (n: number): SeededClient {
  const uid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  const identity = { ...ivanov.identity, uid_client: uid, login: `7916000${String(n).padStart(4, '0')}` }
  return {
    ...ivanov,
    label: `FLEET-${n}`,
    identity,
    passport: { ...ivanov.passport, uid_client: uid, client: { ...ivanov.passport.client, ...identity } }
  }
}
const clients = Array.from({ length: LOAD_CLIENTS + 3 }, (_, n) => fleetClient(n))
const [BURST, COPY, GONE] = clients.slice(LOAD_CLIENTS) as [SeededClient, SeededClient, SeededClient]
const bearer = ({ identity }: SeededClient) => ({
  authorization: `Bearer ${signToken({ sub: identity.uid_client, login: identity.login, vendor: identity.vendor },
    JWT_SECRET)}`
})
/** The name of a client's copy in Redis. */
const copyName = ({ identity }: SeededClient) =>
  `dealer-bff:lk:${identityName(cacheKey(profileCacheKeys(CACHE_KEY)[0]!), identity)}`

/** The client addresses an instance logged for the profiles it answered. */
const servedTo = (instance: ServerProcess) => instance.logs
  .filter(line => line.msg === 'request completed' && (line.req as { url: string }).url === PROFILE)
  .map(line => (line.req as { remoteAddress: string }).remoteAddress)

/** One scrape's value of `metric` (a line's exact name and labels), 0 when absent. */
async function scraped (instance: ServerProcess, metric: string): Promise<number> {
  const body = (await get(`${instance.url}/metrics`, { authorization: `Bearer ${METRICS_KEY}` })).body
  const line = body.split('\n').find(line => line.startsWith(`${metric} `))
  return line === undefined ? 0 : Number(line.slice(metric.length + 1))
}

interface Timed extends HttpResult { at: number }

/** Each load client asks for its profile through nginx, pauses, and again, until stopped. */
function steadyLoad (nginx: string) {
  const answers: Timed[] = []
  const state = { stopped: false }
  const loops = clients.slice(0, LOAD_CLIENTS).map(async (client, i) => {
    await sleep(i * PAUSE_MS / LOAD_CLIENTS)
    while (!state.stopped) {
      const answer = await get(`${nginx}${PROFILE}`, bearer(client))
        .catch((error: Error) => ({ status: 0, headers: {}, body: `dropped: ${error.message}` }))
      answers.push({ ...answer, at: performance.now() })
      await sleep(PAUSE_MS)
    }
  })
  return {
    answers,
    /** Resolves once `count` more answers have come in. */
    async more (count: number) {
      const until = answers.length + count
      while (answers.length < until) await sleep(20)
    },
    async stop () {
      state.stopped = true
      await Promise.all(loops)
    }
  }
}

const binaries = requireBinaries(t, ['redis-server', 'nginx', 'openssl'])

if (binaries !== undefined) {
  t.test('three instances behind nginx on Sentinel-managed Redis: a failover, a crash and a restart under load',
    async t => {
      const started = performance.now()
      const group = await startSentinelGroup(t, binaries['redis-server'])
      const redisS = (performance.now() - started) / 1000
      const upstream = await startFaultUpstream({ keys: { passport: PASSPORT_KEY, dealer: DEALER_KEY }, clients })
      t.teardown(() => upstream.close())
      const notFound = {
        kind: 'answer' as const,
        status: operations['passport.get_client'].notFound.status,
        body: unknownResponses.passport
      }
      // The passport forgets GONE's requests by their x-request-id, which the service forwards.
      upstream.set('passport.get_client', (_operation, headers) =>
        String(headers['x-request-id']).startsWith('gone-') ? notFound : { kind: 'normal' })
      const env = {
        UPSTREAM_URL: upstream.url,
        PASSPORT_API_KEY: PASSPORT_KEY,
        DEALER_API_KEY: DEALER_KEY,
        AUTH_JWT_SECRET: JWT_SECRET,
        REDIS_SENTINELS: group.sentinels,
        // On a machine this busy a command may take longer than the default 100 ms even on a live primary.
        REDIS_TIMEOUT_MS: '1000',
        PROFILE_CACHE_KEY: CACHE_KEY,
        METRICS_API_KEY: METRICS_KEY,
        RATE_LIMIT_PROFILE_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: String(AUTH_LIMIT),
        // nginx connects from 127.0.0.1: only that hop's X-Forwarded-For is believed.
        TRUST_PROXY: '127.0.0.1',
        // Short: nginx's idle keep-alive connections can hold a draining instance open until the grace ends.
        SHUTDOWN_GRACE_MS: '1000',
        LOG_LEVEL: 'info'
      }
      const instances = await Promise.all([0, 1, 2].map(async () => await startServerProcess(t, env)))
      const portOf = (instance: ServerProcess) => Number(new URL(instance.url).port)
      const { url: nginx } = await startNginx(t, binaries, instances.map(instance => new URL(instance.url).host))
      const setupS = (performance.now() - started) / 1000

      // GONE's copy, in the primary and replicated, before anything fails.
      t.equal((await get(`${instances[0]!.url}${PROFILE}`, bearer(GONE))).status, 200)
      /** Whether the primary of the moment (or `port`) holds the copy, asked on a connection of its own. */
      const holds = async (client: SeededClient, port?: number) => {
        const redis = new Redis({ host: '127.0.0.1', port: port ?? await group.primaryPort(), lazyConnect: true })
        try {
          await redis.connect()
          return await redis.exists(copyName(client)) === 1
        } finally {
          redis.disconnect()
        }
      }
      const firstPrimary = await group.primaryPort()
      await eventually(async () => await holds(GONE) && await holds(GONE, group.replicaPort),
        'GONE\'s copy written and replicated')

      const load = steadyLoad(nginx)
      // Should an assertion throw mid-run, the clients stop before the servers do.
      t.teardown(() => load.stop())
      await load.more(2 * LOAD_CLIENTS)

      // 1. The primary dies. A deletion comes in before the instances have found the new one.
      const killedAt = performance.now()
      await group.killPrimary()
      const gone = await get(`${instances[0]!.url}${PROFILE}`, { ...bearer(GONE), 'x-request-id': 'gone-1' })
      t.equal(gone.status, 404, 'the passport no longer knows GONE')
      // What each instance says, for the failure message: [primary changes, up].
      let states: number[][] = []
      const redisLines = () => instances.map(instance => instance.logs.filter(line => /^Redis /.test(line.msg))
        .map(line => line.msg))
      await eventually(async () => {
        states = await Promise.all(instances.map(async instance => [
          await scraped(instance, 'bff_redis_primary_changes_total'), await scraped(instance, 'bff_redis_up')]))
        // At least one change: on a machine this loaded the Sentinels may fail over once more on their own.
        return states.every(([changes, up]) => changes! >= 1 && up === 1)
      }, 'every instance on the new primary', 30_000).catch((error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify({ states, logs: redisLines() })}`)
      })
      const failoverMs = performance.now() - killedAt
      t.not(await group.primaryPort(), firstPrimary, 'the Sentinels named the replica')
      t.ok(await scraped(instances[0]!, 'bff_profile_copy_store_failures_total{operation="delete"}') >= 1,
        'the deletion could not reach Redis at first: it was queued during the failover')
      await eventually(async () => !await holds(GONE),
        'the queued deletion is applied on the new primary')
      const countedLocally = (await Promise.all(instances.map(async instance =>
        await scraped(instance, 'bff_rate_limit_store_failures_total')))).reduce((a, b) => a + b, 0)
      const duringGap = load.answers.filter(answer => answer.at > killedAt && answer.at <= killedAt + failoverMs)
      // One line a change, not a line a request: each names a move to another address, one failover (two where the
      // Sentinels failed over once more on their own) at most two lines, while the load ran on every instance.
      for (const instance of instances) {
        const moves = instance.logs.filter(line => line.msg === 'Redis primary changed: now counting there')
          .map(line => (line as { redis?: { primary?: string, previous?: string } }).redis)
        t.ok(moves.length >= 1 && moves.length <= 2, `one line a primary change (${moves.length})`)
        t.ok(moves.every(move => move?.primary !== undefined && move.primary !== move.previous),
          'each line names the new primary and the one before')
      }

      // 2. An instance crashes and is started again where nginx expects it.
      const crashed = instances[1]!
      crashed.child.kill('SIGKILL')
      await crashed.exited
      await load.more(LOAD_CLIENTS)
      instances[1] = await startServerProcess(t, env, { port: portOf(crashed) })
      await load.more(LOAD_CLIENTS)

      // 3. Another is restarted gracefully.
      const leaving = instances[2]!
      leaving.child.kill('SIGTERM')
      t.match(await leaving.exited, { code: 0 }, 'the instance drained and exited on SIGTERM')
      instances[2] = await startServerProcess(t, env, { port: portOf(leaving) })
      await load.more(LOAD_CLIENTS)
      await load.stop()
      const loadS = (load.answers.at(-1)!.at - load.answers[0]!.at) / 1000

      const failed = load.answers.filter(answer => answer.status !== 200).map(a => `${a.status} ${a.body}`)
      t.same(failed, [], `all ${load.answers.length} profiles answered 200 through the three disruptions`)

      // nginx leaves an instance alone for 5 s after a refused connection (fail_timeout): until all three serve again.
      await eventually(async () => {
        await get(`${nginx}${PROFILE}`, bearer(clients[0]!))
        return instances.every(instance => servedTo(instance).length > 0)
      }, 'nginx sends to every instance again', 20_000)

      // Shared counting on the new primary: one client's burst over the three instances is limited once.
      const burst: HttpResult[] = []
      for (let i = 0; i < LIMIT + 3; i++) burst.push(await get(`${nginx}${PROFILE}`, bearer(BURST)))
      t.same(burst.map(answer => answer.status), [...Array(LIMIT).fill(200), 429, 429, 429],
        `${LIMIT} served across the instances, then 429`)
      t.same(burst.slice(0, LIMIT).map(answer => answer.headers['x-ratelimit-remaining']),
        Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)), 'x-ratelimit-remaining counts down across them')

      // Refused credentials count per caller address as nginx forwarded it, across the instances.
      const failures: number[] = []
      for (let i = 0; i <= AUTH_LIMIT; i++) failures.push((await get(`${nginx}${PROFILE}`, BAD, CALLER_A)).status)
      t.same(failures, [...Array(AUTH_LIMIT).fill(401), 429], `${AUTH_LIMIT} refused tokens from ${CALLER_A}, then 429`)
      const forged = await get(`${nginx}${PROFILE}`, { ...BAD, 'x-forwarded-for': '198.51.100.77' }, CALLER_A)
      t.equal(forged.status, 429, 'a forged X-Forwarded-For from the caller does not buy a fresh budget')
      t.equal((await get(`${nginx}${PROFILE}`, BAD, CALLER_B)).status, 401, `${CALLER_B} has its own budget`)
      // The access line is written once the answer is sent, so it may reach the test just after the answer.
      await eventually(async () => instances.some(instance => servedTo(instance).includes(CALLER_B)),
        'the instances saw the caller\'s address, not nginx\'s')
      // Straight to an instance from an address that is not the trusted hop: its X-Forwarded-For is ignored.
      const direct = await get(`${instances[0]!.url}${PROFILE}`, { ...BAD, 'x-forwarded-for': CALLER_B }, CALLER_A)
      t.equal(direct.status, 429, `counted as ${CALLER_A}, not the ${CALLER_B} it claims to forward for`)

      // A copy written after the failover serves every instance while the passport is down.
      t.equal((await get(`${nginx}${PROFILE}`, bearer(COPY))).status, 200)
      await eventually(async () => await holds(COPY), 'COPY\'s copy written on the new primary')
      upstream.set('passport.get_client', { kind: 'status', status: 500 })
      const fromCopies = await Promise.all(instances.map(async instance =>
        await get(`${instance.url}${PROFILE}`, bearer(COPY))))
      t.same(fromCopies.map(answer => answer.status), [200, 200, 200], 'each instance answered')
      t.ok(fromCopies.every(answer => String(answer.headers['x-stale']).split(',').includes('passport')),
        'with the copy\'s passport part')

      t.comment(`fleet figures: setup ${setupS.toFixed(1)} s (Redis and Sentinels ${redisS.toFixed(1)} s); ` +
        'failover (primary killed to every instance counting ' +
        `on the new one) ${Math.round(failoverMs)} ms, ${duringGap.length} answers in that gap (all 200), ` +
        `${countedLocally} limit checks counted in the instances' own memory; load ${load.answers.length} ` +
        `answers over ${loadS.toFixed(1)} s; ${fromCopies.filter(a => a.status === 200).length} of 3 instances ` +
        `answered a copy with the passport down; whole test ${((performance.now() - started) / 1000).toFixed(1)} s`)
    })
}
