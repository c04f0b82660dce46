// The alert and recording rules: the committed files are what scripts/alert-rules.ts generates, Prometheus's
// own promtool accepts them and passes their unit tests (deploy/prometheus/alerts.test.yaml), and those tests
// make every alert fire and show it quiet. promtool comes with Debian's prometheus package.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { parse, stringify } from 'yaml'
import {
  BURN_MIN_FAILURES, DEFAULT_RUNBOOK_URL, errorRatioRecord, ruleGroups, UNWATCHED_ROUTES, WATCHED,
  type AlertRule
} from '../../scripts/alert-rules.ts'
import { dashboard } from '../../scripts/dashboard.ts'
import { registeredRoutes } from '../../src/routes/registry.ts'
import {
  ALERT_TESTS_FILE, ALERTS_FILE, alertsYaml, alertTestsLinkingTo, PROMETHEUS_RULE_FILE, prometheusRuleYaml, runbookUrlOf
} from '../../scripts/alerts.ts'
import { requireBinaries } from '../helpers/real-servers.ts'

/** A deployment's own copy of the runbook, as an operator would give it to `npm run alerts`. */
const OPERATOR_RUNBOOK = 'https://git.dealer.example/ops/profile-bff/-/blob/main/docs/runbook.md'
// promtool runs all the rule tests twice, each a few seconds of CPU: tap's 60 s is too tight on a busy machine.
t.setTimeout(180_000)

const alerts = ruleGroups.flatMap(group => group.rules).filter((rule): rule is AlertRule => 'alert' in rule)

/**
 * The committed unit tests cut to those of one alert: a check that must fail needs no more, and each test group
 * promtool runs costs its share of a few seconds of CPU.
 */
function testsOf (alertname: string): string {
  const file = parse(readFileSync(ALERT_TESTS_FILE, 'utf8')) as { tests: Array<{ alert_rule_test?: unknown[] }> }
  const tests = file.tests.filter(test => JSON.stringify(test.alert_rule_test ?? []).includes(`"${alertname}"`))
  if (tests.length === 0) throw new Error(`no unit test of ${alertname}`)
  return stringify({ ...file, tests })
}

interface Run { code: number, output: string }
async function run (binary: string, args: string[], env?: NodeJS.ProcessEnv): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(binary, args, env === undefined ? {} : { env })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const { code, stdout = '', stderr = '' } = error as { code?: number, stdout?: string, stderr?: string }
    return { code: code ?? -1, output: stdout + stderr }
  }
}

t.test('the committed rules are what `npm run alerts` writes', async t => {
  t.equal(readFileSync(ALERTS_FILE, 'utf8'), alertsYaml(), 'deploy/prometheus/alerts.yaml: run `npm run alerts`')
  t.equal(readFileSync(PROMETHEUS_RULE_FILE, 'utf8'), prometheusRuleYaml(),
    'deploy/kubernetes/prometheus-rule.yaml: run `npm run alerts`')
  const plain = parse(readFileSync(ALERTS_FILE, 'utf8'))
  const operator = parse(readFileSync(PROMETHEUS_RULE_FILE, 'utf8'))
  t.strictSame(operator.spec.groups, plain.groups, 'the PrometheusRule holds the very same groups')
})

t.test('every registered route has its error budget and dashboard lines, or the docs say why not', async t => {
  const rules = ruleGroups.flatMap(group => group.rules)
  const budget = rules.find(rule => 'record' in rule && rule.record === errorRatioRecord('1h'))
  const burn = rules.find(rule => 'alert' in rule && rule.alert === 'BffProfileErrorBudgetBurn')
  const panels = JSON.stringify(dashboard().panels)
  const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
  // The paragraph that says which routes are left out, and its list (up to the next heading).
  const start = operations.indexOf('**Which routes have an error budget.**')
  const leftOut = start === -1 ? '' : operations.slice(start, operations.indexOf('\n#', start))
  const routes = registeredRoutes
  t.ok(routes.includes('GET /api/users/profile'), 'the registry is read')
  for (const route of routes) {
    const path = route.split(' ')[1]!
    const reason = UNWATCHED_ROUTES[route]
    // The matcher is a regex alternation of the watched paths.
    const inMatcher = (expr: string) => new RegExp(`route=~"(?:[^"]*\\|)?${path}(?:\\|[^"]*)?"`).test(expr)
    if (reason !== undefined) {
      t.match(leftOut, `\`${route}\``, `${route} is left out, and docs/operations.md says why`)
      t.notOk(budget !== undefined && inMatcher(budget.expr), `${route} has no error ratio`)
      continue
    }
    t.ok(budget !== undefined && inMatcher(budget.expr), `${route} has its error ratio`)
    t.ok(burn !== undefined && inMatcher(burn.expr), `${route} has its burn alert`)
    t.ok(inMatcher(panels.replaceAll('\\"', '"')), `${route} has its dashboard lines`)
  }
  for (const route of Object.keys(UNWATCHED_ROUTES)) t.ok(routes.includes(route), `${route} is a registered route`)
})

t.test('every alert says what, how bad, with its numbers, and where to read on', async t => {
  const names = new Set(alerts.map(rule => rule.alert))
  t.ok(names.size >= 7, `${names.size} alerts`)
  for (const rule of alerts) {
    t.ok(['critical', 'warning'].includes(rule.labels.severity), `${rule.alert}: severity ${rule.labels.severity}`)
    t.ok(rule.annotations.summary.length > 0, `${rule.alert}: a summary`)
    t.match(rule.annotations.description, /\{\{ \$value\b/, `${rule.alert}: the description gives the value`)
    t.match(rule.annotations.runbook_url, new RegExp(`/docs/runbook\\.md#${rule.alert.toLowerCase()}$`),
      `${rule.alert}: a runbook entry`)
  }
  // Budget burn: a fast page, a slower page and a ticket, each of two windows.
  const burns = alerts.filter(rule => rule.alert === 'BffProfileErrorBudgetBurn')
  t.strictSame(burns.map(rule => [rule.labels.severity, rule.labels.long_window, rule.labels.short_window]),
    [['critical', '1h', '5m'], ['critical', '6h', '30m'], ['warning', '1d', '2h']])
  // A handful of requests at night is no outage: each also counts the failures of its long window.
  const profile = WATCHED
  for (const rule of burns) {
    const long = rule.labels.long_window
    t.ok(rule.expr.includes(`(increase(bff_http_requests_total{${profile},status_code=~"5.."}[${long}]))`) &&
      rule.expr.endsWith(`>= ${BURN_MIN_FAILURES}`), `${long}: the 5xx of its long window counted`)
    // Anyone can invent a kid; every other 503 (load shedding, a key set not loaded yet) refuses everyone.
    t.ok(rule.expr.includes(
      `- (sum by (job, route) (increase(bff_auth_signing_key_pending_total{${profile}}[${long}]))`),
      `${long}: but the SIGNING_KEY_PENDING answers`)
  }
})

interface AlertTest { eval_time: string, alertname: string, exp_alerts: unknown[] }
t.test('the unit tests make every alert fire, and show each one quiet', async t => {
  const tests =
    (parse(readFileSync(ALERT_TESTS_FILE, 'utf8')) as { tests: Array<{ alert_rule_test?: AlertTest[] }> }).tests
  const cases = tests.flatMap(test => test.alert_rule_test ?? [])
  for (const name of new Set(alerts.map(rule => rule.alert))) {
    t.ok(cases.some(c => c.alertname === name && c.exp_alerts.length > 0), `${name} fires`)
    t.ok(cases.some(c => c.alertname === name && c.exp_alerts.length === 0), `${name} stays quiet`)
  }
  // Every severity of the burn alert is seen firing.
  const fired = cases.filter(c => c.alertname === 'BffProfileErrorBudgetBurn')
    .flatMap(c => c.exp_alerts) as Array<{ exp_labels: { long_window: string } }>
  t.strictSame([...new Set(fired.map(a => a.exp_labels.long_window))].sort(), ['1d', '1h', '6h'],
    'both pages and the ticket')
})

t.test('RUNBOOK_URL: what `npm run alerts` accepts as the runbook\'s address', async t => {
  t.equal(runbookUrlOf(undefined), DEFAULT_RUNBOOK_URL, 'unset: the placeholder')
  t.equal(runbookUrlOf(''), DEFAULT_RUNBOOK_URL, 'empty: the placeholder')
  t.equal(runbookUrlOf(OPERATOR_RUNBOOK), OPERATOR_RUNBOOK)
  for (const bad of ['docs/runbook.md', 'ftp://host/runbook.md', 'https://host/runbook.md#entry', 'https://host/runbook.md#']) {
    t.throws(() => runbookUrlOf(bad), /RUNBOOK_URL must be an/, `refused: ${bad}`)
  }
  // `npm run alerts` refuses it before anything is read or written: the committed files stay as they are.
  const script = new URL('../../scripts/alerts.ts', import.meta.url).pathname
  const before = readFileSync(ALERTS_FILE, 'utf8')
  const bad = await run(process.execPath, [script], { ...process.env, RUNBOOK_URL: 'runbook.md' })
  t.equal(bad.code, 1, bad.output)
  t.match(bad.output, /RUNBOOK_URL must be an absolute http\(s\) URL of docs\/runbook\.md, got "runbook\.md"/)
  t.equal(readFileSync(ALERTS_FILE, 'utf8'), before, 'nothing written')
})

t.test('a deployment\'s runbook address: every alert links into it, in both files', async t => {
  for (const text of [alertsYaml(OPERATOR_RUNBOOK), prometheusRuleYaml(OPERATOR_RUNBOOK)]) {
    t.notOk(text.includes(DEFAULT_RUNBOOK_URL), 'no placeholder left')
    const file = parse(text) as { groups?: typeof ruleGroups, spec?: { groups: typeof ruleGroups } }
    const rules = (file.groups ?? file.spec!.groups).flatMap(group => group.rules)
    const linked = rules.filter((rule): rule is AlertRule => 'alert' in rule)
    t.equal(linked.length, alerts.length)
    for (const rule of linked) t.equal(rule.annotations.runbook_url, `${OPERATOR_RUNBOOK}#${rule.alert.toLowerCase()}`)
  }
  const tests = alertTestsLinkingTo(readFileSync(ALERT_TESTS_FILE, 'utf8'), OPERATOR_RUNBOOK)
  t.notOk(tests.includes(DEFAULT_RUNBOOK_URL), 'the unit tests expect the new address')
  t.ok(tests.includes(`runbook_url: ${OPERATOR_RUNBOOK}#bffprofileerrorbudgetburn`))
  t.equal(alertTestsLinkingTo(tests, OPERATOR_RUNBOOK), tests, 'regenerating with the same address changes nothing')
  t.equal(alertTestsLinkingTo(tests, DEFAULT_RUNBOOK_URL), readFileSync(ALERT_TESTS_FILE, 'utf8'), 'and back')
})

t.test('promtool', async t => {
  const binaries = requireBinaries(t, ['promtool'])
  if (binaries === undefined) return
  const { promtool } = binaries

  t.test('check rules: valid, every rule counted', async t => {
    const { code, output } = await run(promtool, ['check', 'rules', ALERTS_FILE.pathname])
    t.equal(code, 0, output)
    const count = ruleGroups.reduce((sum, group) => sum + group.rules.length, 0)
    t.match(output, new RegExp(`SUCCESS: ${count} rules found`))
  })

  t.test('test rules: every unit test passes', async t => {
    const { code, output } = await run(promtool, ['test', 'rules', ALERT_TESTS_FILE.pathname])
    t.equal(code, 0, output)
    t.match(output, /SUCCESS/)
  })

  t.test('rules and unit tests regenerated for a deployment\'s runbook pass; the ' +
    'old tests see the new links', async t => {
    const dir = mkdtempSync(join(tmpdir(), 'bff-rules-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    writeFileSync(join(dir, 'alerts.yaml'), alertsYaml(OPERATOR_RUNBOOK))
    writeFileSync(join(dir, 'alerts.test.yaml'),
      alertTestsLinkingTo(readFileSync(ALERT_TESTS_FILE, 'utf8'), OPERATOR_RUNBOOK))
    const passed = await run(promtool, ['test', 'rules', join(dir, 'alerts.test.yaml')])
    t.equal(passed.code, 0, passed.output)
    writeFileSync(join(dir, 'alerts.test.yaml'), testsOf('BffUpstreamBreakerOpen'))
    const stale = await run(promtool, ['test', 'rules', join(dir, 'alerts.test.yaml')])
    t.not(stale.code, 0, 'the committed tests expect the placeholder: promtool compares the runbook_url')
    t.match(stale.output, /runbook_url/)
  })

  t.test('the checks bite: a broken expression, and an alert that no longer fires', async t => {
    const dir = mkdtempSync(join(tmpdir(), 'bff-rules-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const rules = readFileSync(ALERTS_FILE, 'utf8')
    writeFileSync(join(dir, 'alerts.yaml'),
      rules.replace('max by (job, operation) (bff_upstream_breaker_state) > 0',
        'max by (job, operation) (bff_upstream_breaker_state > 0'))
    const broken = await run(promtool, ['check', 'rules', join(dir, 'alerts.yaml')])
    t.not(broken.code, 0)
    t.match(broken.output, /parse error/)

    // The breaker alert made to wait longer than its test allows: the test sees it not firing.
    writeFileSync(join(dir, 'alerts.yaml'), rules.replace(/(bff_upstream_breaker_state\) > 0\n {8}for:) 5m/, '$1 30m'))
    writeFileSync(join(dir, 'alerts.test.yaml'), testsOf('BffUpstreamBreakerOpen'))
    const late = await run(promtool, ['test', 'rules', join(dir, 'alerts.test.yaml')])
    t.not(late.code, 0)
    t.match(late.output, /alertname: BffUpstreamBreakerOpen/)
  })
})
