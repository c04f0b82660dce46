// How much the service takes in: the rate limits per client and caller address, and the load-shedding thresholds.
import { Type } from 'typebox'
import { PerMinute } from './kinds.ts'

export const LimitsConfigSchema = Type.Object({
  RATE_LIMIT_PROFILE_PER_MINUTE: PerMinute(120,
    'Requests per client (token sub) per minute on each personal route (the profile), each route counting apart.'),
  RATE_LIMIT_CONSOLE_PER_MINUTE: PerMinute(30, 'Console requests per caller address per minute.'),
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: PerMinute(30, 'Credentials that fail verification (401) per caller address ' +
    'per minute; past it, such credentials get 429 (a valid credential is always served, and a token whose ' +
    'signature verifies is always a 401).'),
  UNDER_PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 1000,
    description: 'Mean event loop delay above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_MAX_HEAP_USED_MB: Type.Integer({
    minimum: 0,
    maximum: 1024 * 1024,
    default: 0,
    description: 'Heap used (MiB) above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_MAX_RSS_MB: Type.Integer({
    minimum: 0,
    maximum: 1024 * 1024,
    default: 0,
    description: 'Resident set size (MiB) above which requests are shed with 503; 0 is off.'
  }),
  UNDER_PRESSURE_SAMPLE_INTERVAL_MS: Type.Integer({
    minimum: 10,
    maximum: 60_000,
    default: 1000,
    description: 'How often event loop delay and memory are sampled for load shedding.'
  })
})
