// `npm run dashboard`: writes deploy/grafana/dealer-bff.json, the Grafana dashboard of the service (import it,
// pick the Prometheus data source). Every query reads metrics /metrics exports or records of
// deploy/prometheus/alerts.yaml (test/deploy/metric-names.test.ts checks both); the file is generated so
// that check reads what Grafana reads.
import { writeFile } from 'node:fs/promises'
import {
  AVAILABILITY_OBJECTIVE, errorRatioRecord, KEY_SET_MAX_AGE_S, STALE_PASSPORT_SHARE, UPSTREAM_DEADLINE_S,
  UPSTREAM_P99_RECORD, WATCHED, WATCHED_ROUTES
} from './alert-rules.ts'

export const DASHBOARD_FILE = new URL('../deploy/grafana/dealer-bff.json', import.meta.url)

// Grafana's variable syntax, not a template literal.
const DATASOURCE = { type: 'prometheus', uid: '$' + '{datasource}' }
const JOB = 'job=~"$job"'
const PROFILE = `${JOB},route="/api/users/profile"`
// Every registered route with an error budget (scripts/alert-rules.ts says which are left out, and why).
const ROUTES = `${JOB},${WATCHED}`
const RATE = '$__rate_interval'

interface Target { expr: string, legend: string }
interface PanelOptions {
  unit: string
  targets: Target[]
  description: string
  threshold?: number
  max?: number
  stack?: boolean
}

const WIDTH = 8
const HEIGHT = 8
let nextId = 1

function panel (
  title: string, x: number, y: number, { unit, targets, description, threshold, max, stack = false }: PanelOptions
) {
  return {
    id: nextId++,
    type: 'timeseries',
    title,
    description,
    datasource: DATASOURCE,
    gridPos: { x, y, w: WIDTH, h: HEIGHT },
    fieldConfig: {
      defaults: {
        unit,
        min: 0,
        ...(max === undefined ? {} : { max }),
        custom: {
          drawStyle: 'line',
          fillOpacity: stack ? 30 : 10,
          stacking: { mode: stack ? 'normal' : 'none' },
          thresholdsStyle: { mode: threshold === undefined ? 'off' : 'line' }
        },
        thresholds: {
          mode: 'absolute',
          steps: [
            { color: 'green', value: null },
            ...(threshold === undefined ? [] : [{ color: 'red', value: threshold }])
          ]
        }
      },
      overrides: []
    },
    options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi', sort: 'desc' } },
    targets: targets.map((target, i) => ({
      datasource: DATASOURCE,
      refId: String.fromCharCode(65 + i),
      expr: target.expr,
      legendFormat: target.legend
    }))
  }
}

function row (title: string, y: number) {
  return { id: nextId++, type: 'row', title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] }
}

const quantiles = (metric: string, selector: string, by: string) => [0.5, 0.9, 0.99].map(q => ({
  expr: `histogram_quantile(${q}, sum by (${by}le) (rate(${metric}{${selector}}[${RATE}])))`,
  legend: `p${q * 100}${by === '' ? '' : ` {{${by.replace(/, $/, '')}}}`}`
}))

export function dashboard () {
  nextId = 1
  const panels = [
    row(`Routes (${WATCHED_ROUTES.join(', ')})`, 0),
    panel('Requests by status', 0, 1, {
      unit: 'reqps',
      description: 'Answers per second by route and status code; 429 are rate-limit refusals, 5xx count against the ' +
        'objective but 503 SIGNING_KEY_PENDING (panel Key-set refresh failures).',
      stack: true,
      targets: [{
        expr: `sum by (route, status_code) (rate(bff_http_requests_total{${ROUTES}}[${RATE}]))`,
        legend: '{{route}} {{status_code}}'
      }]
    }),
    panel('Error ratio (5xx)', 8, 1, {
      unit: 'percentunit',
      description: 'Share of each route\'s answers that were 5xx (504 included; 503 SIGNING_KEY_PENDING not, anyone ' +
        'can cause it with an invented kid). The red line is the error budget of the ' +
        `${AVAILABILITY_OBJECTIVE * 100}% objective; the alert BffProfileErrorBudgetBurn reads these same records.`,
      threshold: 1 - AVAILABILITY_OBJECTIVE,
      targets: [
        { expr: `${errorRatioRecord('5m')}{${JOB}}`, legend: '5m {{route}} {{job}}' },
        { expr: `${errorRatioRecord('1h')}{${JOB}}`, legend: '1h {{route}} {{job}}' }
      ]
    }),
    panel('Latency', 16, 1, {
      unit: 's',
      description: 'Latency by route from arrival to the last byte sent (the profile\'s bound is PROFILE_TIMEOUT_MS, ' +
        '8 s by default).',
      targets: quantiles('bff_http_request_duration_seconds_bucket', ROUTES, 'route, ')
    }),
    panel('Degraded sections', 0, 9, {
      unit: 'reqps',
      description: 'Profiles answered without a section (x-degraded) because its dealer lookup failed, by section.',
      stack: true,
      targets: [{
        expr: `sum by (section) (rate(bff_profile_degraded_sections_total{${JOB}}[${RATE}]))`,
        legend: '{{section}}'
      }]
    }),
    panel('Rate-limit refusals (429)', 8, 9, {
      unit: 'reqps',
      description: 'Requests refused with 429 by route: the per-client profile limit, the console limit, and refused ' +
        'credentials past their limit.',
      stack: true,
      targets: [{
        expr: `sum by (route) (rate(bff_http_requests_total{${JOB},status_code="429"}[${RATE}]))`,
        legend: '{{route}}'
      }]
    }),
    panel('Load shedding', 16, 9, {
      unit: 'reqps',
      description: 'Requests refused with 503 because an instance was under pressure, by instance and the bound ' +
        'exceeded (alert BffLoadShedding).',
      stack: true,
      targets: [{
        expr: `sum by (instance, pressure) (rate(bff_load_shed_requests_total{${JOB}}[${RATE}])) > 0`,
        legend: '{{instance}} {{pressure}}'
      }]
    }),
    row('Upstream', 17),
    panel('Calls by operation and outcome', 0, 18, {
      unit: 'reqps',
      description: 'Upstream exchanges per second: outcome ok, not_found, or why the call failed (timeout, connect, ' +
        'status, contract, breaker_open...).',
      stack: true,
      targets: [{
        expr: `sum by (operation, outcome) (rate(bff_upstream_requests_total{${JOB}}[${RATE}]))`,
        legend: '{{operation}} {{outcome}}'
      }]
    }),
    panel('p99 latency by operation', 8, 18, {
      unit: 's',
      description: `99th percentile of each operation over 5 minutes; the red line is the ${UPSTREAM_DEADLINE_S} s ` +
        'deadline (UPSTREAM_TIMEOUT_MS default), past which a call fails with 504.',
      threshold: UPSTREAM_DEADLINE_S,
      targets: [{ expr: `${UPSTREAM_P99_RECORD}{${JOB}}`, legend: '{{operation}}' }]
    }),
    panel('Breaker state', 16, 18, {
      unit: 'none',
      description: 'Circuit breaker per operation, worst instance: 0 closed, 1 half-open, 2 open (alert ' +
        'BffUpstreamBreakerOpen).',
      max: 2,
      targets: [{ expr: `max by (operation) (bff_upstream_breaker_state{${JOB}})`, legend: '{{operation}}' }]
    }),
    panel('Contract violations by field', 0, 26, {
      unit: 'short',
      description: 'Upstream answers outside their schema, by operation and JSON-pointer path (alert ' +
        'BffUpstreamContractViolations).',
      stack: true,
      targets: [{
        expr: `sum by (operation, path) (increase(bff_upstream_contract_violations_total{${JOB}}[${RATE}])) > 0`,
        legend: '{{operation}} {{path}}'
      }]
    }),
    panel('Undescribed fields passed through', 8, 26, {
      unit: 'short',
      description: 'Key paths seen for the first time in the parts of answers passed on undescribed: the upstream ' +
        'sends a field no schema describes.',
      targets: [{
        expr: `sum by (operation) (increase(bff_upstream_passthrough_new_paths_total{${JOB}}[${RATE}])) > 0`,
        legend: '{{operation}}'
      }]
    }),
    panel('Redirects followed', 16, 26, {
      unit: 'short',
      description: 'Redirect hops per second by operation; steady growth means a learned location keeps moving.',
      targets: [{
        expr: `sum by (operation) (rate(bff_upstream_redirects_total{${JOB}}[${RATE}]))`,
        legend: '{{operation}}'
      }]
    }),
    row('Redis (shared rate limits)', 34),
    panel('Redis reachable', 0, 35, {
      unit: 'none',
      description: '1 while the instance reaches the shared Redis, 0 while its rate limits count on it alone (alert ' +
        'BffRedisUnreachable).',
      max: 1,
      targets: [{ expr: `bff_redis_up{${JOB}}`, legend: '{{instance}}' }]
    }),
    panel('Rate-limit checks counted locally', 8, 35, {
      unit: 'reqps',
      description: 'Rate-limit checks that could not count in Redis (unreachable, slow or skipped while down) and ' +
        'counted in the instance\'s own memory instead, and the requests refused on that count.',
      targets: [{
        expr: `sum by (instance) (rate(bff_rate_limit_store_failures_total{${JOB}}[${RATE}]))`,
        legend: '{{instance}} counted locally'
      }, {
        expr: `sum by (instance) (rate(bff_rate_limit_local_total{${JOB}}[${RATE}]))`,
        legend: '{{instance}} refused locally'
      }]
    }),
    row('Process', 43),
    panel('CPU', 0, 44, {
      unit: 'percentunit',
      description: 'CPU time per second of each instance (1 = one core); the Deployment requests half a core.',
      targets: [{ expr: `rate(process_cpu_seconds_total{${JOB}}[${RATE}])`, legend: '{{instance}}' }]
    }),
    panel('Resident memory', 8, 44, {
      unit: 'bytes',
      description: 'Resident set size of each instance; the Deployment requests 384 MiB and limits 512 MiB. A ' +
        'restart shows as a gap (alert BffInstanceRestarted).',
      targets: [
        { expr: `process_resident_memory_bytes{${JOB}}`, legend: 'rss {{instance}}' },
        { expr: `nodejs_heap_size_used_bytes{${JOB}}`, legend: 'heap used {{instance}}' }
      ]
    }),
    panel('Event-loop delay', 16, 44, {
      unit: 's',
      description: 'Event-loop delay of each instance; past UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS (1 s by default) ' +
        'the instance sheds load.',
      targets: [
        { expr: `nodejs_eventloop_lag_p99_seconds{${JOB}}`, legend: 'p99 {{instance}}' },
        { expr: `nodejs_eventloop_lag_mean_seconds{${JOB}}`, legend: 'mean {{instance}}' }
      ]
    }),
    row('Last-known profiles', 52),
    panel('Stale sections by section and reason', 0, 53, {
      unit: 'reqps',
      description: 'Profile sections answered from the client\'s last-known copy, by section and the failure\'s ' +
        'reason (fresh_window: within PROFILE_FRESH_S, no failure). A stale passport means the passport upstream ' +
        'failed.',
      stack: true,
      targets: [{
        expr: `sum by (section, reason) (rate(bff_profile_stale_sections_total{${JOB}}[${RATE}]))`,
        legend: '{{section}} {{reason}}'
      }]
    }),
    panel('Stale passport share', 8, 53, {
      unit: 'percentunit',
      description: 'Share of profile answers with a stale passport (x-stale); past the red line ' +
        `(${STALE_PASSPORT_SHARE * 100}%) for 15 minutes the alert BffProfileStaleServed fires. These answers are ` +
        '200s: the error ratio does not show them.',
      threshold: STALE_PASSPORT_SHARE,
      targets: [{
        expr: `sum by (job) (rate(bff_profile_stale_sections_total{${JOB},section="passport",` +
          `reason!="fresh_window"}[${RATE}]))\n/\n` +
          `sum by (job) (rate(bff_http_requests_total{${PROFILE}}[${RATE}]))`,
        legend: '{{job}}'
      }]
    }),
    panel('Last-known copies', 16, 53, {
      unit: 'ops',
      description: 'Copies written after fresh answers, pushed out of the in-process store ' +
        '(PROFILE_CACHE_MAX_BYTES), and found in Redis but opened by no PROFILE_CACHE_KEY (alert ' +
        'BffProfileCopyDecryptFailures).',
      targets: [
        { expr: `sum (rate(bff_profile_copies_written_total{${JOB}}[${RATE}]))`, legend: 'written' },
        { expr: `sum (rate(bff_profile_copies_evicted_total{${JOB}}[${RATE}]))`, legend: 'evicted' },
        { expr: `sum (rate(bff_profile_copy_decrypt_failures_total{${JOB}}[${RATE}]))`, legend: 'not decrypted' }
      ]
    }),
    row('Identity provider key set (AUTH_JWKS_URL)', 61),
    panel('Key-set keys', 0, 62, {
      unit: 'none',
      description: 'Usable signing keys in each instance\'s copy of the key set; 0 until the first load, when tokens ' +
        'are refused with 503 and the instance is not ready (alert BffAuthKeySetEmpty). Empty without AUTH_JWKS_URL.',
      targets: [{ expr: `bff_auth_jwks_keys{${JOB}}`, legend: '{{instance}}' }]
    }),
    panel('Key-set last load age', 8, 62, {
      unit: 's',
      description: 'Time since each instance last loaded the key set; refreshes run every AUTH_JWKS_REFRESH_S (or ' +
        `the provider's max-age). Past the red line (${KEY_SET_MAX_AGE_S / 3600} h) with failing refreshes the alert ` +
        'BffAuthKeySetStale fires.',
      threshold: KEY_SET_MAX_AGE_S,
      // Before the first load the timestamp is 0: no age then, not 55 years.
      targets: [{ expr: `time() - (bff_auth_jwks_last_load_timestamp_seconds{${JOB}} > 0)`, legend: '{{instance}}' }]
    }),
    panel('Key-set refresh failures', 16, 62, {
      unit: 'short',
      description: 'Failed refreshes of the key set per instance (unreachable, slow, not a key set, no usable key); ' +
        'the last good set keeps serving (alert BffAuthKeySetRefreshFailing). Beside them, the 503 ' +
        'SIGNING_KEY_PENDING answers (a token naming a key not known yet): with failures, perhaps a rotated key the ' +
        'instance cannot learn (alert BffAuthSigningKeyPending); alone, often invented kids.',
      targets: [
        {
          expr: `sum by (instance) (increase(bff_auth_jwks_refresh_failures_total{${JOB}}[${RATE}]))`,
          legend: '{{instance}}'
        },
        {
          expr: `sum by (instance) (increase(bff_auth_signing_key_pending_total{${JOB}}[${RATE}]))`,
          legend: 'pending {{instance}}'
        }
      ]
    }),
    row('App versions', 70),
    panel('Requests by app version', 0, 71, {
      unit: 'reqps',
      description: 'Accepted authenticated requests by the app\'s x-app-version: the versions with the most ' +
        'distinct callers (at least 50) by name, the rest as other, none without the header; 4xx answers (426, ' +
        '429, refused tokens) do not count. ' +
        'Before raising MIN_APP_VERSION or removing a deprecated part, see who still calls.',
      stack: true,
      targets: [{
        expr: `sum by (app_version) (rate(bff_app_version_requests_total{${JOB}}[${RATE}]))`,
        legend: '{{app_version}}'
      }]
    })
  ]
  return {
    uid: 'dealer-profile-bff',
    title: 'Dealer profile BFF',
    description: 'The profile\'s rate, errors and latency, the upstream, the shared Redis, the processes, last-known ' +
      'profiles and the identity provider\'s key set. Runbook: docs/runbook.md.',
    tags: ['dealer-profile-bff'],
    editable: true,
    graphTooltip: 1,
    refresh: '30s',
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          name: 'job',
          label: 'Job',
          type: 'query',
          datasource: DATASOURCE,
          query: { query: 'label_values(bff_http_requests_total, job)', refId: 'job' },
          definition: 'label_values(bff_http_requests_total, job)',
          refresh: 2,
          includeAll: true,
          multi: true,
          current: {},
          hide: 0
        }
      ]
    },
    annotations: { list: [] },
    panels
  }
}

export const dashboardJson = () => JSON.stringify(dashboard(), null, 2) + '\n'

if (import.meta.main) {
  await writeFile(DASHBOARD_FILE, dashboardJson())
  process.stdout.write(`wrote ${DASHBOARD_FILE.pathname}\n`)
}
