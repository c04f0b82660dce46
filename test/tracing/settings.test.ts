// Which OTEL_* variables turn tracing on, and how the ones read here (protocol, sampler, batch) are read.
import t from 'tap'
import { samplerOf } from '../../src/tracing/sdk.ts'
import { tracingEnabled, tracingSettings, TracingConfigError } from '../../src/tracing/settings.ts'

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }

t.test('on only with an endpoint, and never with OTEL_SDK_DISABLED=true', async t => {
  t.equal(tracingEnabled({}), false)
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), false, 'a blank endpoint is none')
  t.equal(tracingEnabled(ENDPOINT), true)
  t.equal(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  t.equal(tracingEnabled({ ...ENDPOINT, OTEL_SDK_DISABLED: 'TRUE' }), false)
  t.equal(tracingEnabled({ ...ENDPOINT, OTEL_SDK_DISABLED: 'false' }), true)
  t.equal(tracingEnabled({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }), false)
  t.equal(tracingEnabled({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'otlp' }), true)
  t.equal(tracingSettings({ OTEL_TRACES_SAMPLER: 'nonsense' }), null, 'off: nothing else is even read')
})

t.test('defaults: http/protobuf, parent-based always-on, the spec batch sizes', async t => {
  t.strictSame(tracingSettings(ENDPOINT), {
    protocol: 'http/protobuf',
    sampler: { name: 'parentbased_always_on', ratio: 1 },
    batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30000, maxQueueSize: 2048, maxExportBatchSize: 512 }
  })
})

t.test('the variables as given', async t => {
  t.match(tracingSettings({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { protocol: 'http/json' })
  t.match(tracingSettings({
    ...ENDPOINT,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json'
  }), { protocol: 'http/json' },
  'the traces variable wins')
  t.match(tracingSettings({
    ...ENDPOINT,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1'
  }),
  { sampler: { name: 'parentbased_traceidratio', ratio: 0.1 } })
  t.match(tracingSettings({
    ...ENDPOINT,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_BSP_MAX_QUEUE_SIZE: '100',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '10',
    OTEL_BSP_EXPORT_TIMEOUT: '1000'
  }),
  { batch: { scheduledDelayMillis: 200, exportTimeoutMillis: 1000, maxQueueSize: 100, maxExportBatchSize: 10 } })
})

t.test('every unusable variable is named at once', async t => {
  try {
    tracingSettings({
      ...ENDPOINT,
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '2',
      OTEL_BSP_SCHEDULE_DELAY: 'soon',
      OTEL_BSP_MAX_QUEUE_SIZE: '10',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20'
    })
    t.fail('should throw')
  } catch (error) {
    t.type(error, TracingConfigError)
    t.match((error as TracingConfigError).problems, [
      /^OTEL_TRACES_EXPORTER: zipkin is not supported/,
      /^OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported/,
      /^OTEL_TRACES_SAMPLER_ARG: 2 /,
      /^OTEL_BSP_SCHEDULE_DELAY: soon /,
      /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 20 is larger than OTEL_BSP_MAX_QUEUE_SIZE/
    ])
  }
})

t.test('the sampler the variables name, e.g. 10 % of new traces, callers\' decisions kept', async t => {
  const sampler = (env: Record<string, string>) =>
    samplerOf(tracingSettings({ ...ENDPOINT, ...env })!.sampler).toString()
  t.match(sampler({}), /^ParentBased\{root=AlwaysOnSampler/)
  t.match(sampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), /^ParentBased\{root=TraceIdRatioBased\{0\.1\}/)
  t.equal(sampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }), 'TraceIdRatioBased{0.25}')
  t.equal(sampler({ OTEL_TRACES_SAMPLER: 'always_off' }), 'AlwaysOffSampler')
})
