// The part of autocannon's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  export interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    /** Called before each send of this request; what it returns is sent. */
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request
  }

  /** One connection. */
  export interface Client {
    /** Replaces the headers of the requests this connection sends from now on. */
    setHeaders (headers: Record<string, string>): void
    on (event: 'response', listener: (status: number, bytes: number, ms: number) => void): this
  }

  export interface Options {
    url: string
    connections?: number
    /** Seconds; ignored when `amount` is set. */
    duration?: number
    /** Total requests, spread evenly over the connections; each ends after its last answer. */
    amount?: number
    /** Seconds to wait for an answer. */
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: Request[]
    /** Called once per connection, before its first request. */
    setupClient?: (client: Client) => void
  }

  /** Milliseconds, as hdr-histogram percentiles (1 ms resolution). */
  export interface Latency {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p90: number
    p97_5: number
    p99: number
  }

  export interface Result {
    latency: Latency
    requests: { average: number, mean: number, total: number, sent: number }
    duration: number
    errors: number
    timeouts: number
    mismatches: number
    non2xx: number
    resets: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
  }

  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
