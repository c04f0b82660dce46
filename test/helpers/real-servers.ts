// Real servers for the scale-out tests: Debian's redis-server and nginx, and the service itself as a
// `node src/server.ts` process. Each runs unprivileged on a free local port with its files in a temporary
// directory, and is stopped when the test ends. A missing binary skips the test file outside CI (saying
// which) and fails it in CI (CI=true), where .ci/run installs them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { connect, createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import type { Writable } from 'node:stream'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { untilListening, type LogLine } from './server-logs.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The nginx site docs/operations.md shows; the tests run it with their own addresses, ports and certificate. */
const NGINX_EXAMPLE = join(ROOT, 'deploy/nginx/dealer-bff.conf')

const PACKAGES: Record<string, string> = {
  'redis-server': 'redis-server', nginx: 'nginx', prometheus: 'prometheus', promtool: 'prometheus', openssl: 'openssl'
}
// nginx lives in sbin, often not on an unprivileged user's PATH.
const SEARCH_PATH = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin']

function findBinary (name: string): string | undefined {
  for (const dir of SEARCH_PATH) {
    if (dir === '') continue
    try {
      accessSync(join(dir, name), constants.X_OK)
      return join(dir, name)
    } catch {}
  }
  return undefined
}

/**
 * The paths of the binaries by name. When one is missing: outside CI the file is skipped with the reason,
 * in CI it fails; either way the answer is undefined and the caller defines no test.
 */
export function requireBinaries<N extends string> (t: Test, names: N[]): Record<N, string> | undefined {
  const found = {} as Record<N, string>
  const missing: string[] = []
  for (const name of names) {
    const path = findBinary(name)
    if (path === undefined) missing.push(name)
    else found[name] = path
  }
  if (missing.length === 0) return found
  const reason =
    `${missing.join(' and ')} not installed (apt-get install ${missing.map(name => PACKAGES[name] ?? name).join(' ')})`
  if (process.env.CI === 'true') t.fail(`${reason}; .ci/run installs them in CI`)
  else t.plan(0, `${reason}: skipped outside CI`)
  return undefined
}

/** A port nothing listens on right now. */
export async function freePort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}

/** Resolves once `port` accepts connections; rejects if the process exits first or after 10 s. */
async function accepting (port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited before listening: ${stderr()}`)
    const ok = await new Promise<boolean>(resolve => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.destroy(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after 10 s: ${stderr()}`)
    await new Promise(resolve => setTimeout(resolve, 20))
  }
}

/**
 * tap records block coverage in every Node process a test spawns and writes it only when the process exits on its
 * own: a child ended with SIGKILL paid for it (about a third more CPU) and leaves nothing. Such children go without.
 */
export const WITHOUT_COVERAGE = { _TAPJS_PROCESSINFO_COVERAGE_: '0' }

/** How a process ended: its exit code, or the signal that ended it. */
export interface Exit { code: number | null, signal: NodeJS.Signals | null }

interface Process { child: ChildProcess, exited: Promise<Exit>, stderr: () => string }

/** Spawned with stdout piped to the test (read by the caller or drained), or to `stdout` (another's stdin). */
function run (binary: string, args: string[],
  options: { cwd?: string, env?: NodeJS.ProcessEnv, stdout?: Writable } = {}): Process {
  const { stdout, ...rest } = options
  const child = spawn(binary, args, { ...rest, stdio: ['ignore', stdout ?? 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (text: string) => { stderr += text })
  child.stdout?.resume()
  const exited = new Promise<Exit>(resolve => { child.once('exit', (code, signal) => resolve({ code, signal })) })
  return { child, exited, stderr: () => stderr }
}

async function stop ({ child, exited }: Process, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  await exited
}

export interface RedisServer {
  port: number
  url: string
  /** SIGKILL, as a crash would. */
  kill (): Promise<void>
  /** Starts it again on the same port, with what its last SAVE wrote (nothing, if none). */
  start (): Promise<void>
  /** The keys the last start loaded from that snapshot, once its log has said so. */
  loadedKeys (): number | undefined
  /** SIGSTOP / SIGCONT: connections stay open, commands go unanswered, as with a Redis that hangs. */
  pause (): void
  resume (): void
}

/** redis-server on `port` (a free one by default), nothing saved to disk. Not started when `started` is false. */
export async function startRedis (t: Test, binary: string,
  { port, started = true }: { port?: number, started?: boolean } = {}): Promise<RedisServer> {
  const chosen = port ?? await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'bff-redis-'))
  let current: Process | undefined
  let log = ''
  const server: RedisServer = {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    async kill () {
      if (current !== undefined) await stop(current)
      current = undefined
    },
    async start () {
      await server.kill()
      log = ''
      // At notice level Redis logs the keys it loads from a snapshot (one line per start; nothing at run time).
      current = run(binary,
        ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
          '--loglevel', 'notice'])
      current.child.stdout!.setEncoding('utf8').on('data', (text: string) => { log += text })
      await accepting(chosen, current.child, current.stderr)
    },
    loadedKeys () {
      const loaded = /keys loaded: (\d+)/.exec(log)?.[1]
      return loaded === undefined ? undefined : Number(loaded)
    },
    pause () { current?.child.kill('SIGSTOP') },
    resume () { current?.child.kill('SIGCONT') }
  }
  t.teardown(async () => {
    await server.kill()
    rmSync(dir, { recursive: true, force: true })
  })
  if (started) await server.start()
  return server
}

/** A certificate made for this run, for `127.0.0.1` only and one day, with its key; also its own CA. */
interface Certificate { certFile: string, keyFile: string, cert: Buffer }

/** A throwaway EC P-256 certificate for 127.0.0.1 in `dir`, made by openssl (node:crypto makes no certificates). */
function throwawayCertificate (openssl: string, dir: string): Certificate {
  const [keyFile, certFile] = [join(dir, 'tls.key'), join(dir, 'tls.crt')]
  execFileSync(openssl, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext',
    'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
  return { certFile, keyFile, cert: readFileSync(certFile) }
}

/** The certificates of the nginx sites started in this process: what get() trusts for an https URL. */
const trusted: Buffer[] = []

export interface Nginx {
  /** The HTTPS site: `https://127.0.0.1:port`. */
  url: string
  port: number
  /** The plain-HTTP server beside it: `http://127.0.0.1:port`. */
  plainUrl: string
  /** The certificate it serves, its own CA. */
  ca: Buffer
}

/**
 * The nginx site of docs/operations.md (deploy/nginx/dealer-bff.conf) as it is written, in front of `upstreams`
 * (`host:port`): its HTTPS server on a free local port with a throwaway certificate, its plain-HTTP server on
 * another, inside a minimal main configuration whose every path is in a temporary prefix. That main configuration
 * has the gzip lines of Debian's nginx.conf uncommented, as an operator may have them: the site must keep its answers
 * as the service made them all the same.
 */
export async function startNginx (t: Test, binaries: { nginx: string, openssl: string },
  upstreams: string[]): Promise<Nginx> {
  const [port, plainPort] = [await freePort(), await freePort()]
  const dir = mkdtempSync(join(tmpdir(), 'bff-nginx-'))
  const certificate = throwawayCertificate(binaries.openssl, dir)
  const lines = readFileSync(NGINX_EXAMPLE, 'utf8').split('\n')
  const serverLine = /^( *)server \S+:\d+( [^;]*)?;$/
  // The example's upstream servers become ours (same options), its ports ours, its certificate files ours.
  const rewrites: Array<[RegExp, (line: string) => string]> = [
    [/^ *listen 443 ssl( http2)?;$/, line => line.replace('listen 443', `listen 127.0.0.1:${port}`)],
    [/^ *listen 80;$/, line => line.replace('listen 80', `listen 127.0.0.1:${plainPort}`)],
    [/^ *ssl_certificate \S+;$/, line => line.replace(/ \S+;$/, ` ${certificate.certFile};`)],
    [/^ *ssl_certificate_key \S+;$/, line => line.replace(/ \S+;$/, ` ${certificate.keyFile};`)]
  ]
  for (const [pattern, rewrite] of rewrites) {
    const at = lines.findIndex(line => pattern.test(line))
    if (at === -1) throw new Error(`${NGINX_EXAMPLE} no longer has a line like ${String(pattern)}`)
    lines[at] = rewrite(lines[at]!)
  }
  const first = lines.findIndex(line => serverLine.test(line))
  if (first === -1) throw new Error(`${NGINX_EXAMPLE} no longer has upstream servers`)
  const [, indent, options = ''] = serverLine.exec(lines[first]!)!
  lines[first] = upstreams.map(address => `${indent}server ${address}${options};`).join('\n')
  const site = lines.filter((line, i) => i === first || !serverLine.test(line)).join('\n')
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    gzip on;
    gzip_vary on;
    gzip_proxied any;
    gzip_comp_level 6;
    gzip_buffers 16 8k;
    gzip_http_version 1.1;
    gzip_types text/plain text/css application/json application/javascript
        text/xml application/xml application/xml+rss text/javascript;
${site}
}
`)
  const nginx = run(binaries.nginx, ['-p', `${dir}/`, '-c', conf, '-e', join(dir, 'error.log')])
  t.teardown(async () => {
    await stop(nginx, 'SIGTERM')
    if (trusted.includes(certificate.cert)) trusted.splice(trusted.indexOf(certificate.cert), 1)
    rmSync(dir, { recursive: true, force: true })
  })
  const stderr = () => nginx.stderr() + readFileSync(join(dir, 'error.log'), 'utf8')
  await accepting(port, nginx.child, stderr)
  await accepting(plainPort, nginx.child, stderr)
  trusted.push(certificate.cert)
  return { url: `https://127.0.0.1:${port}`, port, plainUrl: `http://127.0.0.1:${plainPort}`, ca: certificate.cert }
}

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Its log lines; none when its stdout goes elsewhere. */
  logs: LogLine[]
  exited: Promise<Exit>
}

/**
 * `node src/server.ts` with exactly `env`, from an empty directory (no `.env`), on a free local port. Its
 * stdout is read into `logs`, or goes to `stdout` (a pipe to another process, say), then the listener is
 * awaited by connecting. Event-loop shedding is off unless `env` sets it: on a loaded machine a fresh
 * process's own start-up lags its loop past the bound, and its first requests were shed with 503. `covered`: the
 * test ends the process with a signal it exits on, so its coverage is written; otherwise it runs without. `port`:
 * that one (a restart where a balancer expects it) rather than a free one.
 */
export async function startServerProcess (
  t: Test, env: Record<string, string>,
  { stdout, covered = false, port: chosen }: { stdout?: Writable, covered?: boolean, port?: number } = {}
): Promise<ServerProcess> {
  const cwd = mkdtempSync(join(tmpdir(), 'bff-instance-'))
  const port = chosen ?? (stdout === undefined ? 0 : await freePort())
  const server = run(process.execPath, [join(ROOT, 'src/server.ts')], {
    cwd,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...(covered ? {} : WITHOUT_COVERAGE),
      ...env
    },
    stdout
  })
  t.teardown(async () => {
    await stop(server)
    rmSync(cwd, { recursive: true, force: true })
  })
  const logs: LogLine[] = []
  if (stdout !== undefined) {
    await accepting(port, server.child, server.stderr)
    return { child: server.child, url: `http://127.0.0.1:${port}`, logs, exited: server.exited }
  }
  const url = await untilListening(server.child, logs, server.stderr)
  return { child: server.child, url, logs, exited: server.exited }
}

export interface HttpResult { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/**
 * One GET on its own connection, from `localAddress` (any 127.x.y.z is this machine) when given; an https URL over
 * HTTP/1.1, trusting the certificates of the nginx sites started here.
 */
export function get (url: string, headers: Record<string, string> = {}, localAddress?: string): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const options = {
      headers,
      agent: false,
      ...(localAddress === undefined ? {} : { localAddress }),
      ...(url.startsWith('https:') ? { ca: trusted } : {})
    }
    const req = (url.startsWith('https:') ? httpsRequest : request)(url, options, res => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** Polls `check` every 100 ms until it holds; fails after `ms`. */
export async function eventually (check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`${what}: still not the case after ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

export interface SentinelGroup {
  /** REDIS_SENTINELS for the instances: the three Sentinels' `127.0.0.1:port`. */
  sentinels: string
  /** The group's name (REDIS_SENTINEL_NAME's default). */
  name: string
  /** The port of the primary the Sentinels name now. */
  primaryPort (): Promise<number>
  /** The port of the replica it started with. */
  replicaPort: number
  /** SIGKILL to the primary of the moment, as a crash would; its port. */
  killPrimary (): Promise<number>
}

/**
 * A Redis primary and its replica under three Sentinels (`redis-server --sentinel`, quorum 2), each on a free port
 * with its files in a temporary directory, nothing saved to disk. A primary unanswering for a second is failed
 * over. Resolves once the replica is in sync and every Sentinel knows the replica and the other two.
 */
export async function startSentinelGroup (t: Test, binary: string): Promise<SentinelGroup> {
  const { Redis } = await import('ioredis')
  const dir = mkdtempSync(join(tmpdir(), 'bff-sentinel-'))
  const processes = new Map<number, Process>()
  t.teardown(async () => {
    for (const server of processes.values()) await stop(server)
    rmSync(dir, { recursive: true, force: true })
  })
  const start = async (port: number, args: string[]) => {
    const server = run(binary, args, { cwd: dir })
    processes.set(port, server)
    await accepting(port, server.child, server.stderr)
  }
  /** One command on a connection of its own, closed after. */
  const ask = async (port: number, ...command: [string, ...Array<string | number>]) => {
    const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 })
    try {
      await client.connect()
      return await client.call(...command)
    } finally {
      client.disconnect()
    }
  }
  const name = 'mymaster'
  const ports = await Promise.all(Array.from({ length: 5 }, async () => await freePort()))
  const [primary, replica, ...sentinelPorts] = ports
  const data = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--dir', dir, '--dbfilename', `dump-${port}.rdb`]
  await start(primary!, data(primary!))
  await start(replica!, [...data(replica!), '--replicaof', '127.0.0.1', String(primary)])
  await eventually(async () => /master_link_status:up/.test(String(await ask(replica!, 'INFO', 'replication'))),
    'the replica in sync')
  for (const port of sentinelPorts) {
    // Sentinel rewrites its configuration file as it learns: one writable file each.
    const conf = join(dir, `sentinel-${port}.conf`)
    writeFileSync(conf, [
      `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
      `sentinel monitor ${name} 127.0.0.1 ${primary} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 3000`,
      `sentinel parallel-syncs ${name} 1`
    ].join('\n') + '\n')
    await start(port, [conf, '--sentinel'])
  }
  const known = async (port: number) => {
    const fields = await ask(port, 'SENTINEL', 'MASTER', name) as string[]
    const field = (key: string) => Number(fields[fields.indexOf(key) + 1])
    return field('num-slaves') === 1 && field('num-other-sentinels') === 2
  }
  await eventually(async () => (await Promise.all(sentinelPorts.map(known))).every(Boolean),
    'every Sentinel knows the replica and the other two', 30_000)

  const primaryPort = async () => {
    const [, port] = await ask(sentinelPorts[0]!, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name) as [string, string]
    return Number(port)
  }
  return {
    sentinels: sentinelPorts.map(port => `127.0.0.1:${port}`).join(','),
    name,
    primaryPort,
    replicaPort: replica!,
    async killPrimary () {
      const port = await primaryPort()
      await stop(processes.get(port)!)
      processes.delete(port)
      return port
    }
  }
}
