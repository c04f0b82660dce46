// A real Prometheus (Debian's) scrapes two instances of the service with the metrics key, every second,
// and evaluates deploy/prometheus/alerts.yaml, while the instances serve profiles and failures from the
// fault upstream. Through Prometheus's HTTP API: both instances are up (the key was accepted), their
// series arrive, the error-ratio recording rule evaluates to the share of failures, and every rule of the
// file evaluates without error. Prometheus runs unprivileged (uid 1000 when the test runs as root), on a
// free local port, with its data in a temporary directory.
import { spawn } from 'node:child_process'
import { chownSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ivanov } from '../../sandbox/seed.ts'
import { ruleGroups } from '../../scripts/alert-rules.ts'
import { ALERTS_FILE } from '../../scripts/alerts.ts'
import { faultService, faultUpstream, profileOf } from '../helpers/fault-upstream.ts'
import { eventually, freePort, requireBinaries } from '../helpers/real-servers.ts'

const METRICS_KEY = 'metrics-key-for-the-prometheus-test'
const JOB = 'dealer-profile-bff'
/** An unprivileged user for Prometheus when the test runs as root (the node user of the node images). */
const UNPRIVILEGED = 1000

const binaries = requireBinaries(t, ['prometheus'])
if (binaries !== undefined) {
  t.test('Prometheus scrapes two instances with the key and evaluates the rules', async t => {
    const upstream = await faultUpstream(t)
    // No last-known copies: the passport's 500 must reach the caller for the error ratio to move.
    const env = { METRICS_API_KEY: METRICS_KEY, PROFILE_STALE_IF_ERROR_S: '0' }
    const instances = [await faultService(t, upstream.url, env), await faultService(t, upstream.url, env)]
    const targets = instances.map(base => new URL(base).host)

    const dir = mkdtempSync(join(tmpdir(), 'bff-prometheus-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(join(dir, 'metrics-key'), METRICS_KEY, { mode: 0o600 })
    copyFileSync(ALERTS_FILE, join(dir, 'alerts.yaml'))
    writeFileSync(join(dir, 'prometheus.yml'), `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [alerts.yaml]
scrape_configs:
  - job_name: ${JOB}
    authorization: { credentials_file: ${join(dir, 'metrics-key')} }
    static_configs: [{ targets: ${JSON.stringify(targets)} }]
`)
    const asRoot = process.getuid?.() === 0
    if (asRoot) for (const file of ['', ...readdirSync(dir)]) chownSync(join(dir, file), UNPRIVILEGED, UNPRIVILEGED)

    const port = await freePort()
    const prometheus = spawn(binaries.prometheus, [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn'
    ], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], ...(asRoot ? { uid: UNPRIVILEGED, gid: UNPRIVILEGED } : {}) })
    let log = ''
    prometheus.stderr.setEncoding('utf8').on('data', (text: string) => { log += text })
    const exited = new Promise(resolve => prometheus.once('exit', resolve))
    t.teardown(async () => {
      if (prometheus.exitCode === null && prometheus.signalCode === null) prometheus.kill('SIGTERM')
      await exited
    })

    const api = `http://127.0.0.1:${port}`
    const ready = async () => {
      if (prometheus.exitCode !== null) throw new Error(`prometheus exited: ${log}`)
      return await fetch(`${api}/-/ready`).then(res => res.ok, () => false)
    }
    await eventually(ready, `prometheus ready (${log})`, 15_000)

    interface Sample { metric: Record<string, string>, value: [number, string] }
    const query = async (promql: string): Promise<Sample[]> => {
      const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`)
      const body = await res.json() as { status: string, data: { result: Sample[] }, error?: string }
      if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`)
      return body.data.result
    }

    // Traffic while Prometheus watches: on each instance a profile, and one whose passport answers 500.
    let failures = 0
    let successes = 0
    const traffic = async () => {
      for (const base of instances) {
        if ((await profileOf(base, ivanov.identity)).status === 200) successes++
        upstream.queue('passport.get_client', { kind: 'status', status: 500 })
        if ((await profileOf(base, ivanov.identity)).status >= 500) failures++
      }
    }

    const upInstances = async () => (await query(`up{job="${JOB}"} == 1`)).map(s => s.metric.instance).sort()
    await eventually(async () => (await upInstances()).length === 2, 'both instances scraped with the key', 20_000)
    t.strictSame(await upInstances(), [...targets].sort(), 'both instances up: the bearer key was accepted')

    const ratio = `job:bff_profile_error_ratio:rate5m{job="${JOB}"}`
    await eventually(async () => {
      await traffic()
      const found = await query(ratio)
      return found.length === 1 && Number(found[0]!.value[1]) > 0
    }, 'the error-ratio recording rule evaluates', 25_000)
    t.ok(successes > 0 && failures > 0, `${successes} profiles served, ${failures} failed`)

    const [sample] = await query(ratio)
    const value = Number(sample!.value[1])
    t.ok(value > 0 && value < 1, `the recorded error ratio ${value} is a share of the answers`)
    const profiles = await query(`sum by (instance) (bff_http_requests_total{job="${JOB}",route="/api/users/profile"})`)
    t.strictSame(profiles.map(s => s.metric.instance).sort(), [...targets].sort(), 'profile counts from both instances')
    const upstreamFailures =
      await query(`sum(bff_upstream_requests_total{job="${JOB}",operation="passport.get_client",outcome!="ok"})`)
    t.ok(Number(upstreamFailures[0]?.value[1]) > 0, 'the upstream failures were counted')

    // Every group and rule of the file loaded; each rule evaluated without an error.
    interface RuleState { name: string, health: string, lastError?: string, type: string }
    const rulesNow = async () => {
      const body = await (await fetch(`${api}/api/v1/rules`)).json() as {
        data: {
          groups: Array<{
            name: string,
            rules: RuleState[]
          }>
        }
      }
      return body.data.groups
    }
    await eventually(async () => (await rulesNow()).every(g => g.rules.every(r => r.health !== 'unknown')),
      'every rule evaluated', 10_000)
    const groups = await rulesNow()
    t.strictSame(groups.map(g => g.name).sort(), ruleGroups.map(g => g.name).sort(), 'the groups of alerts.yaml')
    for (const rule of groups.flatMap(g => g.rules)) {
      t.equal(rule.health, 'ok',
        `${rule.type} ${rule.name}${rule.lastError ? `: ${rule.lastError}` : ''}`)
    }
    t.equal(readFileSync(join(dir, 'alerts.yaml'), 'utf8'), readFileSync(ALERTS_FILE, 'utf8'),
      'the very file the repository ships')
  })
}
