// `npm run alerts`: writes the rules of scripts/alert-rules.ts as a plain Prometheus rules file and as a
// PrometheusRule of the Prometheus Operator. test/deploy/prometheus-rules.test.ts fails when either drifts.
// `RUNBOOK_URL=<address> npm run alerts` links the alerts to a deployment's own copy of docs/runbook.md, and
// makes the promtool unit tests expect that address too, so they keep passing on the regenerated rules.
import { readFile, writeFile } from 'node:fs/promises'
import { stringify } from 'yaml'
import { DEFAULT_RUNBOOK_URL, ruleGroupsLinkingTo } from './alert-rules.ts'

export const ALERTS_FILE = new URL('../deploy/prometheus/alerts.yaml', import.meta.url)
export const PROMETHEUS_RULE_FILE = new URL('../deploy/kubernetes/prometheus-rule.yaml', import.meta.url)
export const ALERT_TESTS_FILE = new URL('../deploy/prometheus/alerts.test.yaml', import.meta.url)

const HEADER = '# Generated from scripts/alert-rules.ts by `npm run alerts`; do not edit by hand.\n'
// No folding: an expression reads as written.
const yaml = (value: unknown) => stringify(value, { lineWidth: 0 })

/** `rule_files` content for Prometheus (`promtool check rules` reads it too). */
export function alertsYaml (runbookUrl = DEFAULT_RUNBOOK_URL): string {
  return HEADER + yaml({ groups: ruleGroupsLinkingTo(runbookUrl) })
}

/** The same groups for the Prometheus Operator; its ruleSelector must match the labels (kustomization.yaml). */
export function prometheusRuleYaml (runbookUrl = DEFAULT_RUNBOOK_URL): string {
  return HEADER + yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'dealer-profile-bff', labels: { 'app.kubernetes.io/name': 'dealer-profile-bff' } },
    spec: { groups: ruleGroupsLinkingTo(runbookUrl) }
  })
}

/** The hand-written unit tests with each expected runbook_url on `runbookUrl` (the anchors stay). */
export function alertTestsLinkingTo (tests: string, runbookUrl: string): string {
  return tests.replace(/^(\s*runbook_url: )[^#\n]*#/gm, (_, key: string) => `${key}${runbookUrl}#`)
}

/** The runbook's address an operator gives, or why it cannot be one: an absolute http(s) URL with no fragment. */
export function runbookUrlOf (value: string | undefined): string {
  if (value === undefined || value === '') return DEFAULT_RUNBOOK_URL
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new Error(`RUNBOOK_URL must be an absolute http(s) URL of docs/runbook.md, got "${value}"`)
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || value.includes('#')) {
    throw new Error(`RUNBOOK_URL must be an http(s) URL without a #fragment (each alert adds its own), got "${value}"`)
  }
  return value
}

if (import.meta.main) {
  let runbookUrl: string
  try {
    runbookUrl = runbookUrlOf(process.env.RUNBOOK_URL)
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    process.exit(1)
  }
  const tests = await readFile(ALERT_TESTS_FILE, 'utf8')
  await writeFile(ALERTS_FILE, alertsYaml(runbookUrl))
  await writeFile(PROMETHEUS_RULE_FILE, prometheusRuleYaml(runbookUrl))
  await writeFile(ALERT_TESTS_FILE, alertTestsLinkingTo(tests, runbookUrl))
  process.stdout.write(`wrote ${ALERTS_FILE.pathname}, ${PROMETHEUS_RULE_FILE.pathname} and the runbook links of ` +
    `${ALERT_TESTS_FILE.pathname}, linking to ${runbookUrl}\n`)
}
