// What the service tells its operators: the log level and the key of the metrics scrape (tracing is configured by
// the standard OTEL_* variables, src/tracing/settings.ts).
import { Type } from 'typebox'

export const ObservabilityConfigSchema = Type.Object({
  METRICS_API_KEY: Type.Optional(Type.String({
    minLength: 16,
    description: 'Turns on GET /metrics, scraped with Authorization: Bearer <key>; unset, metrics are off and the ' +
      'route answers 404.'
  })),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    default: 'info',
    description: 'pino log level.'
  })
})
