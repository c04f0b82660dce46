// The Prometheus alerting and recording rules of the service: the one source of deploy/prometheus/alerts.yaml
// and of the Prometheus Operator's deploy/kubernetes/prometheus-rule.yaml (`npm run alerts` writes both).
// Every alert has an entry in docs/runbook.md under its own name; every metric is one /metrics exports
// (test/deploy/metric-names.test.ts scrapes the service to check).
import { ConfigSchema } from '../src/config.ts'
import { registeredRoutes } from '../src/routes/registry.ts'

/**
 * Where the committed rules say the runbook is read: a placeholder, since only a deployment knows where its copy of
 * docs/runbook.md is served. `RUNBOOK_URL=<address> npm run alerts` writes the rules with that address instead.
 */
export const DEFAULT_RUNBOOK_URL = 'https://github.com/example/dealer-profile-bff/blob/main/docs/runbook.md'

/** An alert's runbook entry: the runbook's address and the entry's anchor (the alert's name in lower case). */
const runbookLink = (runbookUrl: string, alertName: string) => `${runbookUrl}#${alertName.toLowerCase()}`

/** Share of requests of each watched route that must not fail with a 5xx, over 30 days. */
export const AVAILABILITY_OBJECTIVE = 0.995
const ERROR_BUDGET = 1 - AVAILABILITY_OBJECTIVE
const BUDGET_DAYS = 30

/** The upstream deadline (UPSTREAM_TIMEOUT_MS's default), in seconds; a p99 past NEAR_DEADLINE of it alerts. */
export const UPSTREAM_DEADLINE_S = (ConfigSchema.properties.UPSTREAM_TIMEOUT_MS as { default?: number }).default! / 1000
const NEAR_DEADLINE = 0.8

/**
 * The registered routes (src/routes/registry.ts) the error budget, its alerts and the dashboard leave out, and why;
 * docs/operations.md ("Which routes have an error budget") says the same. Every other registered route is watched.
 */
export const UNWATCHED_ROUTES: Readonly<Record<string, string>> = {
  'POST /request-console': 'an operator tool, used by hand: an operator sees its failures as they happen, and an ' +
    'upstream error it shows is data there, not a failure of the service',
  'GET /health/live': 'the orchestrator\'s probe: a failing one restarts the instance, and BffInstanceNotReady ' +
    'watches readiness',
  'GET /health/ready': 'the orchestrator\'s probe: BffInstanceNotReady watches it'
}

/** Every registered route but those above, as `METHOD /path`: each has its error budget and its dashboard line. */
export const WATCHED_ROUTES = registeredRoutes
  .filter(route => !(route in UNWATCHED_ROUTES))
/** The watched routes' label matcher (the route pattern, as the front metrics label it). */
export const WATCHED = `route=~"${[...new Set(WATCHED_ROUTES.map(route => route.split(' ')[1]))].join('|')}"`

const PROFILE = 'route="/api/users/profile"'
/** The watched routes' 5xx answers. */
const WATCHED_5XX = `bff_http_requests_total{${WATCHED},status_code=~"5.."}`
/** 503 SIGNING_KEY_PENDING answers: a token naming a kid not known yet, its caller not authenticated. */
const PENDING = 'bff_auth_signing_key_pending_total'
const WATCHED_PENDING = `${PENDING}{${WATCHED}}`

/**
 * Each watched route's failed answers per job over `window` (`fn`: rate or increase): what burns its error budget,
 * the 5xx but SIGNING_KEY_PENDING, which anyone can cause by inventing a kid (BffAuthSigningKeyPending watches those).
 * A 503 of load shedding or of a key set not loaded yet stays in: everyone is refused then. The pending counter exists
 * only with a key set, hence the "or"; clamped, as the two counters are not sampled at the very same instant.
 */
const budgetFailures = (fn: 'rate' | 'increase', window: string) => `clamp_min(
  sum by (job, route) (${fn}(${WATCHED_5XX}[${window}]))
  - (sum by (job, route) (${fn}(${WATCHED_PENDING}[${window}])) or 0 * group by (job, route) (${WATCHED_5XX})),
  0
)`

/** Share of profile answers carrying a stale passport (the passport upstream failed) that alerts. */
export const STALE_PASSPORT_SHARE = 0.05

/** The key set's refresh period (AUTH_JWKS_REFRESH_S's default); failures are counted over two of them. */
const KEY_SET_REFRESH_S = (ConfigSchema.properties.AUTH_JWKS_REFRESH_S as { default?: number }).default!
/** A key set older than this while its refreshes fail alerts: a key the provider rotated in is not known. */
export const KEY_SET_MAX_AGE_S = 3600

type Severity = 'critical' | 'warning'

export interface AlertRule {
  alert: string
  expr: string
  for?: string
  labels: { severity: Severity, [name: string]: string }
  annotations: { summary: string, description: string, runbook_url: string }
}
interface RecordingRule { record: string, expr: string }
type Rule = AlertRule | RecordingRule
export interface RuleGroup { name: string, rules: Rule[] }

function alert (
  name: string,
  severity: Severity,
  rule: { expr: string, for?: string, labels?: Record<string, string>, summary: string, description: string }
): AlertRule {
  return {
    alert: name,
    expr: rule.expr,
    ...(rule.for === undefined ? {} : { for: rule.for }),
    labels: { severity, ...rule.labels },
    annotations: {
      summary: rule.summary, description: rule.description, runbook_url: runbookLink(DEFAULT_RUNBOOK_URL, name)
    }
  }
}

const percent = (ratio: number) => `${Number((ratio * 100).toFixed(2))}%`

// The SRE workbook's multi-window, multi-burn-rate alerts (chapter "Alerting on SLOs"): a long window that
// says the budget is burning fast enough to matter, a short one that says it still is. 3d/6h at 1x is left out:
// a ticket at 3x already catches a slow burn, long before the month's budget is gone.
const BURN_RATES = [
  { long: '1h', short: '5m', factor: 14.4, severity: 'critical' as const, for: '2m' },
  { long: '6h', short: '30m', factor: 6, severity: 'critical' as const, for: '15m' },
  { long: '1d', short: '2h', factor: 3, severity: 'warning' as const, for: '1h' }
]
/** Failed answers of a route a burn alert needs over its long window: at night one failure of a few is a high ratio. */
export const BURN_MIN_FAILURES = 10
const SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86_400 }
const seconds = (window: string) => Number(window.slice(0, -1)) * SECONDS[window.slice(-1)]!
const ERROR_RATIO_WINDOWS = [...new Set(BURN_RATES.flatMap(b => [b.short, b.long]))]
  .sort((a, b) => seconds(a) - seconds(b))

export const errorRatioRecord = (window: string) => `job:bff_profile_error_ratio:rate${window}`
export const UPSTREAM_P99_RECORD = 'job_operation:bff_upstream_request_duration_seconds:p99_rate5m'

// Each group's recording rules come before the alerts that read them: a group evaluates in order, so an
// alert sees this evaluation's records, not the last one's.
const profileRecords: RecordingRule[] = [
  ...ERROR_RATIO_WINDOWS.map(window => ({
    record: errorRatioRecord(window),
    // 0, not nothing, while every answer succeeds: the "or" supplies the zero when no 5xx series exists yet.
    expr: `(
  ${budgetFailures('rate', window).replaceAll('\n', '\n  ')}
  or
  0 * sum by (job, route) (rate(bff_http_requests_total{${WATCHED}}[${window}]))
)
/
sum by (job, route) (rate(bff_http_requests_total{${WATCHED}}[${window}]))`
  })),
  {
    record: 'job:bff_profile_requests:rate5m',
    expr: `sum by (job, route) (rate(bff_http_requests_total{${WATCHED}}[5m]))`
  },
  {
    record: 'job:bff_profile_request_duration_seconds:p99_rate5m',
    expr: 'histogram_quantile(0.99, sum by (job, route, le) ' +
      `(rate(bff_http_request_duration_seconds_bucket{${WATCHED}}[5m])))`
  }
]

const upstreamRecords: RecordingRule[] = [
  {
    record: 'job_operation_outcome:bff_upstream_requests:rate5m',
    expr: 'sum by (job, operation, outcome) (rate(bff_upstream_requests_total[5m]))'
  },
  {
    record: UPSTREAM_P99_RECORD,
    // A refusal of an open breaker takes no time: it would only pull the quantile down.
    expr: 'histogram_quantile(0.99, sum by (job, operation, le) ' +
      '(rate(bff_upstream_request_duration_seconds_bucket{outcome!="breaker_open"}[5m])))'
  }
]

const burnAlerts = BURN_RATES.map(({ long, short, factor, severity, for: pending }) => {
  const threshold = Number((factor * ERROR_BUDGET).toFixed(6))
  const days = Number((BUDGET_DAYS / factor).toFixed(1))
  return alert('BffProfileErrorBudgetBurn', severity, {
    expr: `${errorRatioRecord(long)} > ${threshold}\nand\n${errorRatioRecord(short)} > ${threshold}\nand\n` +
      `${budgetFailures('increase', long)} >= ${BURN_MIN_FAILURES}`,
    for: pending,
    labels: { long_window: long, short_window: short },
    summary: `{{ $labels.route }} requests fail at ${factor} times the error budget over ${long}`,
    description: '{{ $value | humanizePercentage }} of {{ $labels.route }} answers of {{ $labels.job }} were 5xx ' +
      '(504 included; ' +
      'SIGNING_KEY_PENDING not) ' +
      `over the last ${long}, and still above ${percent(threshold)} over the last ${short}: ${factor} times the ` +
      `${percent(ERROR_BUDGET)} the ${percent(AVAILABILITY_OBJECTIVE)} objective allows, with ${BURN_MIN_FAILURES} ` +
      `or more failed over ${long}. At this rate the ${BUDGET_DAYS}-day error budget is gone in ${days} days.`
  })
})

const upstreamAlerts: AlertRule[] = [
  alert('BffUpstreamBreakerOpen', 'warning', {
    // Open (2) and half-open (1) alike: a breaker that keeps failing its probe cycles between the two.
    expr: 'max by (job, operation) (bff_upstream_breaker_state) > 0',
    for: '5m',
    summary: 'Circuit breaker of {{ $labels.operation }} open for 5 minutes',
    description: 'The breaker of upstream operation {{ $labels.operation }} has not closed on some instance of ' +
      '{{ $labels.job }} for 5 minutes (state {{ $value }}: 2 open, 1 half-open). Its calls fail at once with 503 ' +
      'UPSTREAM_UNAVAILABLE (passport.get_client: the profile fails; dealer.*: profiles lack a section).'
  }),
  alert('BffUpstreamLatencyNearDeadline', 'warning', {
    expr: `${UPSTREAM_P99_RECORD} > ${NEAR_DEADLINE * UPSTREAM_DEADLINE_S}`,
    for: '10m',
    summary: 'Upstream {{ $labels.operation }} p99 latency near its deadline',
    description: 'The 99th percentile of {{ $labels.operation }} calls from {{ $labels.job }} is ' +
      `{{ $value | humanizeDuration }} over 5 minutes, past ${NEAR_DEADLINE * 100}% of the ${UPSTREAM_DEADLINE_S} s ` +
      'deadline (UPSTREAM_TIMEOUT_MS default). Calls past the deadline fail with 504 UPSTREAM_TIMEOUT.'
  }),
  alert('BffUpstreamContractViolations', 'warning', {
    // increase() misses a series' first samples; the second term catches a path that newly appeared.
    expr: 'sum by (job, operation, path) (increase(bff_upstream_contract_violations_total[15m])) > 0\nor\n' +
      'sum by (job, operation, path) ' +
      '(bff_upstream_contract_violations_total unless bff_upstream_contract_violations_total offset 15m) > 0',
    summary: 'Upstream {{ $labels.operation }} answers break the schema at {{ $labels.path }}',
    description: 'About {{ $value | printf "%.0f" }} answers of {{ $labels.operation }} to {{ $labels.job }} in the ' +
      'last 15 minutes did not match the schema at {{ $labels.path }}: the upstream changed shape. Such answers are ' +
      'refused (502 UPSTREAM_BAD_RESPONSE, or a profile without the section).'
  })
]

const instanceAlerts: AlertRule[] = [
  alert('BffRedisUnreachable', 'warning', {
    expr: 'rate(bff_rate_limit_store_failures_total[5m])\nand on (job, instance)\nbff_redis_up == 0',
    for: '5m',
    summary: 'Instance {{ $labels.instance }} cannot reach the shared Redis',
    description: '{{ $labels.instance }} of {{ $labels.job }} has not reached Redis for 5 minutes; its rate limits ' +
      'count on this instance alone ({{ $value | printf "%.2f" }} checks/s), so a client gets the limit once per ' +
      'instance.'
  }),
  alert('BffLoadShedding', 'warning', {
    expr: 'sum by (job, instance) (rate(bff_load_shed_requests_total[5m])) > 0',
    for: '5m',
    summary: 'Instance {{ $labels.instance }} sheds load',
    description: '{{ $labels.instance }} of {{ $labels.job }} has refused {{ $value | printf "%.2f" }} requests/s ' +
      'with 503 SERVICE_UNAVAILABLE for 5 minutes: its event loop lags (or memory is past its bound).'
  }),
  alert('BffInstanceRestarted', 'warning', {
    expr: 'changes(process_start_time_seconds[30m]) > 0',
    summary: 'Instance {{ $labels.instance }} restarted',
    description: '{{ $labels.instance }} of {{ $labels.job }} started anew {{ $value }} time(s) in the last 30 ' +
      'minutes (a crash, an out-of-memory kill or a failed liveness probe); requests in flight then were lost.'
  })
]

const lastKnownAlerts: AlertRule[] = [
  alert('BffProfileStaleServed', 'warning', {
    // Only a failing passport upstream makes the passport stale; fresh_window answers (PROFILE_FRESH_S) are not.
    expr: `sum by (job) (rate(bff_profile_stale_sections_total{section="passport",reason!="fresh_window"}[5m]))
/
sum by (job) (rate(bff_http_requests_total{${PROFILE}}[5m]))
> ${STALE_PASSPORT_SHARE}`,
    for: '15m',
    summary: 'Profiles answered from last-known copies',
    description: '{{ $value | humanizePercentage }} of profile answers of {{ $labels.job }} over 5 minutes carried a ' +
      `stale passport (x-stale), above ${percent(STALE_PASSPORT_SHARE)} for 15 minutes: the passport upstream fails, ` +
      'and clients see their last good profile (up to PROFILE_STALE_IF_ERROR_S old) instead of an error. These ' +
      'answers do not burn the error budget.'
  }),
  alert('BffProfileCopyDecryptFailures', 'warning', {
    expr: 'sum by (job) (increase(bff_profile_copy_decrypt_failures_total[15m])) > 0',
    summary: 'Last-known profile copies in Redis cannot be decrypted',
    description: 'About {{ $value | printf "%.0f" }} last-known copies read by {{ $labels.job }} in the last 15 ' +
      'minutes were opened by no PROFILE_CACHE_KEY: a key was removed while copies it encrypted live on (or the ' +
      'copies were tampered with). Each counts as a miss: a failing upstream then gives those clients an error ' +
      'instead of their last profile.'
  })
]

const keySetAlerts: AlertRule[] = [
  alert('BffAuthKeySetRefreshFailing', 'warning', {
    // Two refresh periods: after a few quick retries a failing refresh is retried once per period.
    expr: `sum by (job, instance) (increase(bff_auth_jwks_refresh_failures_total[${2 * KEY_SET_REFRESH_S / 60}m])) > 0`,
    for: '15m',
    summary: 'Instance {{ $labels.instance }} fails to refresh the identity provider\'s key set',
    description: '{{ $labels.instance }} of {{ $labels.job }} failed about {{ $value | printf "%.0f" }} refreshes of ' +
      `AUTH_JWKS_URL in the last ${2 * KEY_SET_REFRESH_S / 60} minutes, and has kept failing for 15 minutes. The ` +
      'last good key set keeps serving; tokens signed with a key the provider has rotated in since are refused (401).'
  }),
  alert('BffAuthSigningKeyPending', 'critical', {
    // Pending answers alone are anyone's to cause (an invented kid); with failing refreshes the key may be real.
    expr: `sum by (job, instance) (rate(${PENDING}[5m])) > 0\nand on (job, instance)\n` +
      `sum by (job, instance) (increase(bff_auth_jwks_refresh_failures_total[${2 * KEY_SET_REFRESH_S / 60}m])) > 0`,
    for: '10m',
    summary: 'Instance {{ $labels.instance }} answers SIGNING_KEY_PENDING while its key-set refreshes fail',
    description: '{{ $labels.instance }} of {{ $labels.job }} has answered {{ $value | printf "%.2f" }} requests/s ' +
      'with 503 SIGNING_KEY_PENDING for 10 minutes while its refreshes of AUTH_JWKS_URL failed: tokens name a key ' +
      'it cannot learn. If the provider has rotated its signing key, those users are refused until a refresh ' +
      'succeeds. These answers are kept out of the error budget.'
  }),
  alert('BffAuthKeySetStale', 'warning', {
    // A set loaded long ago is normal when the provider's Cache-Control asks for rare refreshes: only with failures.
    expr: `(time() - bff_auth_jwks_last_load_timestamp_seconds > ${KEY_SET_MAX_AGE_S} and ` +
      'bff_auth_jwks_last_load_timestamp_seconds > 0)\nand on (job, instance)\n' +
      `increase(bff_auth_jwks_refresh_failures_total[${KEY_SET_MAX_AGE_S / 60}m]) > 0`,
    summary: 'Instance {{ $labels.instance }} verifies tokens with an old key set',
    description: '{{ $labels.instance }} of {{ $labels.job }} last loaded the AUTH_JWKS_URL key set ' +
      `{{ $value | humanizeDuration }} ago (over ${KEY_SET_MAX_AGE_S / 3600} h), and its refreshes since have ` +
      'failed. Keys the provider added since are unknown to it: their tokens are refused (401); keys it removed are ' +
      'still accepted.'
  }),
  alert('BffAuthKeySetEmpty', 'critical', {
    expr: 'bff_auth_jwks_keys == 0',
    for: '5m',
    summary: 'Instance {{ $labels.instance }} has no key to verify tokens with',
    description: '{{ $labels.instance }} of {{ $labels.job }} has held {{ $value }} usable keys of AUTH_JWKS_URL for ' +
      '5 minutes: it has never loaded the key set. It answers every authenticated request with 503 and reports ' +
      'itself not ready; if every instance is so, no profile is served.'
  })
]

export const ruleGroups: RuleGroup[] = [
  { name: 'dealer-profile-bff.profile', rules: [...profileRecords, ...burnAlerts] },
  { name: 'dealer-profile-bff.upstream', rules: [...upstreamRecords, ...upstreamAlerts] },
  { name: 'dealer-profile-bff.last-known', rules: lastKnownAlerts },
  { name: 'dealer-profile-bff.key-set', rules: keySetAlerts },
  { name: 'dealer-profile-bff.instances', rules: instanceAlerts }
]

/** The rules with every alert linking into the runbook at `runbookUrl`. */
export function ruleGroupsLinkingTo (runbookUrl: string): RuleGroup[] {
  return ruleGroups.map(group => ({
    ...group,
    rules: group.rules.map(rule => 'alert' in rule
      ? { ...rule, annotations: { ...rule.annotations, runbook_url: runbookLink(runbookUrl, rule.alert) } }
      : rule)
  }))
}
