// `npm run alerts`: writes the rules of scripts/alert-rules.ts as a plain Prometheus rules file and as a
// PrometheusRule of the Prometheus Operator. test/deploy/prometheus-rules.test.ts fails when either drifts.
import { writeFile } from 'node:fs/promises'
import { stringify } from 'yaml'
import { ruleGroups } from './alert-rules.ts'

export const ALERTS_FILE = new URL('../deploy/prometheus/alerts.yaml', import.meta.url)
export const PROMETHEUS_RULE_FILE = new URL('../deploy/kubernetes/prometheus-rule.yaml', import.meta.url)

const HEADER = '# Generated from scripts/alert-rules.ts by `npm run alerts`; do not edit by hand.\n'
// No folding: an expression reads as written.
const yaml = (value: unknown) => stringify(value, { lineWidth: 0 })

/** `rule_files` content for Prometheus (`promtool check rules` reads it too). */
export function alertsYaml (): string {
  return HEADER + yaml({ groups: ruleGroups })
}

/** The same groups for the Prometheus Operator; its ruleSelector must match the labels (kustomization.yaml). */
export function prometheusRuleYaml (): string {
  return HEADER + yaml({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'dealer-profile-bff', labels: { 'app.kubernetes.io/name': 'dealer-profile-bff' } },
    spec: { groups: ruleGroups }
  })
}

if (import.meta.main) {
  await writeFile(ALERTS_FILE, alertsYaml())
  await writeFile(PROMETHEUS_RULE_FILE, prometheusRuleYaml())
  process.stdout.write(`wrote ${ALERTS_FILE.pathname} and ${PROMETHEUS_RULE_FILE.pathname}\n`)
}
