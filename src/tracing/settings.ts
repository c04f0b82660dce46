// Tracing is configured only by the standard OpenTelemetry variables (docs/operations.md, Tracing). The OTLP
// exporters and the resource detector read theirs (endpoint, headers, timeout, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES) from the environment themselves; the trace SDK 3.x no longer reads the
// sampler and batch variables, so they are read here, with the spec's defaults. Nothing is imported:
// with tracing off, no module of the SDK or the exporters is ever loaded.

export type OtlpProtocol = 'http/protobuf' | 'http/json'

type SamplerName = 'always_on' | 'always_off' | 'traceidratio' |
  'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio'

export interface TracingSettings {
  protocol: OtlpProtocol
  sampler: { name: SamplerName, ratio: number }
  batch: { scheduledDelayMillis: number, exportTimeoutMillis: number, maxQueueSize: number, maxExportBatchSize: number }
}

export const DEFAULT_SERVICE_NAME = 'dealer-profile-bff'

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'] satisfies OtlpProtocol[]
const SAMPLERS: readonly string[] = [
  'always_on', 'always_off', 'traceidratio',
  'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'
] satisfies SamplerName[]

/** A tracing variable with a value the service cannot use; server.ts names each and exits before listening. */
export class TracingConfigError extends Error {
  readonly problems: string[]

  constructor (problems: string[]) {
    super(`Invalid tracing configuration:\n${problems.map(p => `  - ${p}`).join('\n')}`)
    this.name = 'TracingConfigError'
    this.problems = problems
  }
}

type Env = Record<string, string | undefined>

const set = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

/**
 * True when tracing should run: an OTLP endpoint is set, OTEL_SDK_DISABLED is not `true` and
 * OTEL_TRACES_EXPORTER is not `none`.
 */
export function tracingEnabled (env: Env): boolean {
  if (set(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return false
  if (set(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none') return false
  return set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined ||
    set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined
}

/** The settings of an enabled tracing, null when it is off; throws TracingConfigError naming each bad variable. */
export function tracingSettings (env: Env): TracingSettings | null {
  if (!tracingEnabled(env)) return null
  const problems: string[] = []

  const exporter = set(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() ?? 'otlp'
  if (exporter !== 'otlp') {
    problems.push(`OTEL_TRACES_EXPORTER: ${exporter} is not supported (use otlp, or none to turn tracing off)`)
  }

  const protocolVariable = set(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') === undefined
    ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
  const protocol = set(env, protocolVariable) ?? 'http/protobuf'
  if (!PROTOCOLS.includes(protocol)) {
    problems.push(`${protocolVariable}: ${protocol} is not supported (use http/protobuf or http/json)`)
  }

  const sampler = set(env, 'OTEL_TRACES_SAMPLER')?.toLowerCase() ?? 'parentbased_always_on'
  if (!SAMPLERS.includes(sampler)) problems.push(`OTEL_TRACES_SAMPLER: ${sampler} is not one of ${SAMPLERS.join(', ')}`)
  let ratio = 1
  const arg = set(env, 'OTEL_TRACES_SAMPLER_ARG')
  if (arg !== undefined && sampler.endsWith('traceidratio')) {
    ratio = Number(arg)
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
      problems.push(`OTEL_TRACES_SAMPLER_ARG: ${arg} is not a ratio between 0 and 1`)
    }
  }

  const count = (name: string, fallback: number, min: number): number => {
    const raw = set(env, name)
    if (raw === undefined) return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < min) {
      problems.push(`${name}: ${raw} is not an integer of at least ${min}`)
      return fallback
    }
    return value
  }
  const batch = {
    scheduledDelayMillis: count('OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    exportTimeoutMillis: count('OTEL_BSP_EXPORT_TIMEOUT', 30_000, 0),
    maxQueueSize: count('OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1),
    maxExportBatchSize: count('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)
  }
  if (batch.maxExportBatchSize > batch.maxQueueSize) {
    problems.push(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ${batch.maxExportBatchSize} is larger than ` +
      `OTEL_BSP_MAX_QUEUE_SIZE (${batch.maxQueueSize})`)
  }

  if (problems.length > 0) throw new TracingConfigError(problems)
  return { protocol: protocol as OtlpProtocol, sampler: { name: sampler as SamplerName, ratio }, batch }
}
