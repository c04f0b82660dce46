// What `npm run dev` adds to the OpenAPI document it serves, so that Swagger UI shows how to reach each state of the
// profile on the sandbox. The production document (openapi.yaml, `npm start`'s /docs/json) never names them.
import type { DescribeDocument } from '../src/plugins/external/docs/index.ts'
import { OUTCOME_CLIENTS } from './outcomes.ts'

/** The states no test identity causes, and how to reach them in this run, one line each. */
export function statesWithoutIdentity (limitPerMinute: number, minAppVersion: string | undefined): string[] {
  return [
    `429 RATE_LIMITED with Retry-After: more than ${limitPerMinute} profile requests of one token in a minute ` +
      '(RATE_LIMIT_PROFILE_PER_MINUTE=3 npm run dev to reach it by hand)',
    minAppVersion === undefined
      ? '426 APP_UPDATE_REQUIRED: start with MIN_APP_VERSION=2.3.0 npm run dev, send x-app-version: 2.2.0'
      : `426 APP_UPDATE_REQUIRED: send an x-app-version below ${minAppVersion}`,
    '503 UPSTREAM_UNAVAILABLE with Retry-After (an open circuit breaker): none, by design, since no single client ' +
      'can open a breaker; it takes an upstream down for many clients'
  ]
}

const PROFILE = '/api/users/profile'

/** The document's profile operation told which sandbox identity meets which of its answers. */
export function describeOutcomes (limitPerMinute: number, minAppVersion: string | undefined): DescribeDocument {
  const rows = OUTCOME_CLIENTS.map(c => `| \`${c.name}\` | \`${c.uid_client}\` | \`${c.login}\` | ${c.about} |`)
  const text = [
    '**On this sandbox (`npm run dev`)**, test identities meet each state the app must handle; their tokens are in ' +
      'the banner `npm run dev` prints (all with vendor `kia`).',
    '| identity | uid_client | login | what the app sees |',
    '|---|---|---|---|',
    ...rows
  ].join('\n')
  const others = statesWithoutIdentity(limitPerMinute, minAppVersion).map(line => `- ${line}`).join('\n')
  return document => {
    const operation = document.paths?.[PROFILE]?.get
    if (operation === undefined) return
    operation.description = `${operation.description ?? ''}\n\n${text}\n\nNo identity causes these:\n\n${others}`
    const responses = (operation.responses ?? {}) as Record<string, { description?: string }>
    for (const status of ['200', '502', '503', '504']) {
      const response = responses[status]
      const names = OUTCOME_CLIENTS.filter(c => String(c.sees.status) === status).map(c => `\`${c.name}\``)
      if (response === undefined || names.length === 0) continue
      // A copy: the generated answers may share objects with other operations.
      const lead = status === '200' ? 'Degraded or stale on this sandbox' : 'On this sandbox'
      responses[status] = { ...response, description: `${response.description ?? ''} ${lead}: ${names.join(', ')}.` }
    }
  }
}
