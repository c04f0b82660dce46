// The OpenTelemetry SDK, wired from the standard variables (settings.ts). Loaded only when tracing is on
// (start.ts imports it dynamically). Everything below the API is the maintained packages: the trace SDK,
// the AsyncLocalStorage context manager, the W3C trace-context propagator, the resource detector and
// the OTLP/HTTP exporters (protobuf or JSON).
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogFunction } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource
} from '@opentelemetry/resources'
import {
  AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider,
  type Sampler, type SpanExporter, type SpanProcessor
} from '@opentelemetry/sdk-trace'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { DEFAULT_SERVICE_NAME, type OtlpProtocol, type TracingSettings } from './settings.ts'
import { setActiveTracer } from './tracer.ts'

export interface Tracing {
  /**
   * Ends tracing: spans still queued are exported, then nothing more is. Never rejects and never takes
   * more than SHUTDOWN_EXPORT_MS: an unreachable collector must neither fail nor hold up the shutdown.
   * Answers why the last spans could not be exported, undefined when they were.
   */
  shutdown (): Promise<Error | undefined>
}

/** How long the shutdown waits for the last export. */
const SHUTDOWN_EXPORT_MS = 3000

export interface TracingOptions {
  spanProcessors: SpanProcessor[]
  sampler?: Sampler
  resource?: Resource
}

/** OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over our default name over the SDK's own attributes. */
function serviceResource (): Resource {
  return defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }))
}

export function samplerOf ({ name, ratio }: TracingSettings['sampler']): Sampler {
  switch (name) {
    case 'always_on': return new AlwaysOnSampler()
    case 'always_off': return new AlwaysOffSampler()
    case 'traceidratio': return new TraceIdRatioBasedSampler(ratio)
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
    default: return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/** The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION itself. */
async function otlpExporter (protocol: OtlpProtocol): Promise<SpanExporter> {
  const { OTLPTraceExporter } = protocol === 'http/json'
    ? await import('@opentelemetry/exporter-trace-otlp-http')
    : await import('@opentelemetry/exporter-trace-otlp-proto')
  return new OTLPTraceExporter()
}

// The SDK reports a failing export through its diagnostic logger, silent by default: warnings and errors
// become JSON lines on stderr, like the service's own log (pino's levels).
function diagLine (level: number): DiagLogFunction {
  return (message, ...args) => {
    const detail = args.length > 0 ? ` ${args.map(a => a instanceof Error ? a.message : String(a)).join(' ')}` : ''
    process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg: `opentelemetry: ${message}${detail}` })}\n`)
  }
}
const ignore: DiagLogFunction = () => {}

/**
 * Makes the SDK the process's tracer: global provider, context manager and propagator, and the tracer
 * the app reads when it is built. Only the W3C trace context is propagated by the SDK: `baggage` and the
 * other tracing headers pass through to the upstream unchanged (upstream/transport/tracing-headers.ts).
 */
export function registerTracing (options: TracingOptions): Tracing {
  const provider = new TracerProvider({
    resource: options.resource ?? serviceResource(),
    spanProcessors: options.spanProcessors,
    ...(options.sampler === undefined ? {} : { sampler: options.sampler })
  })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  diag.setLogger(
    { error: diagLine(50), warn: diagLine(40), info: ignore, debug: ignore, verbose: ignore }, DiagLogLevel.WARN
  )
  setActiveTracer(provider.getTracer(DEFAULT_SERVICE_NAME))
  return {
    async shutdown () {
      setActiveTracer(null)
      let timer: NodeJS.Timeout | undefined
      const outcome = await Promise.race([
        provider.shutdown().then(
          () => undefined,
          (error: unknown) => error instanceof Error ? error : new Error(String(error))
        ),
        new Promise<Error>(resolve => {
          timer = setTimeout(() => {
            resolve(new Error(`the last spans were not exported within ${SHUTDOWN_EXPORT_MS} ms`))
          }, SHUTDOWN_EXPORT_MS)
        })
      ])
      clearTimeout(timer)
      trace.disable()
      propagation.disable()
      context.disable()
      diag.disable()
      return outcome
    }
  }
}

export async function startSdk (settings: TracingSettings): Promise<Tracing> {
  const exporter = await otlpExporter(settings.protocol)
  return registerTracing({
    sampler: samplerOf(settings.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...settings.batch })]
  })
}
