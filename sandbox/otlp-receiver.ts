// A stand-in OpenTelemetry collector for tests and the benchmark (never imported by the service): a
// node:http server that accepts OTLP/HTTP trace exports, JSON or protobuf, and keeps them (or only counts
// them, for a long benchmark run).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

interface OtlpExport { path: string, contentType: string | undefined, body: Buffer }

export interface OtlpReceiver {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT, e.g. `http://127.0.0.1:39123`. */
  url: string
  /** Every export received, in order (empty when started with keep: false). */
  exports: OtlpExport[]
  /** Exports received, kept or not. */
  count (): number
  close (): Promise<void>
}

export async function startOtlpReceiver (options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const keep = options.keep ?? true
  const exports: OtlpExport[] = []
  let count = 0
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => { if (keep) chunks.push(chunk) })
    req.on('end', () => {
      count++
      if (keep) {
        exports.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: Buffer.concat(chunks) })
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      const json = req.headers['content-type']?.includes('json') === true
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '')
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => { server.off('error', reject); resolve() })
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    count: () => count,
    close: () => new Promise(resolve => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }
}
