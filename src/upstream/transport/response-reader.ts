// One POST through undici's dispatch API, read by our own handler as status, headers and bytes under a size cap:
// request() costs a stream, a promise and a signal listener per answer (docs/performance.md, register: Answer reader).
import type { IncomingHttpHeaders } from 'node:http'
import type { Dispatcher } from 'undici'

export interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  /** The body as received: response-body.ts reads it as text or JSON. */
  body: Buffer
}

/** The body of an answer whose body is not kept (a redirect's). */
export const EMPTY_BODY = Buffer.alloc(0)

/** What can end the hop in flight: the exchange's deadline calls it (deadline.ts). */
export interface Abortable {
  abort (reason: unknown): void
}

/** The answer's body passed the cap: declared so, or counted while read. */
export class ResponseTooLarge extends Error {
  constructor (limit: number) {
    super(`the answer is larger than ${limit} bytes`)
    this.name = 'ResponseTooLarge'
  }
}

export interface ReadOptions {
  maxBodyBytes: number
  /** Statuses whose body is read only to free the connection, never kept (a redirect's). */
  discard: ReadonlySet<number>
  /** At most this much of a discarded body is read; past it the connection is closed instead. */
  discardLimit: number
}

/**
 * Settles once: with the answer, or with why there is none. `status` tells whether the headers had
 * arrived (0 until then): a failure before them read no byte of any answer.
 */
export class ResponseReader implements Dispatcher.DispatchHandler, Abortable {
  status = 0
  headers: IncomingHttpHeaders = {}
  readonly promise: Promise<RawResponse>
  #resolve!: (response: RawResponse) => void
  #reject!: (reason: unknown) => void
  #settled = false
  #controller: Dispatcher.DispatchController | null = null
  #abortedWith: Error | null = null
  #chunks: Buffer[] = []
  #size = 0
  #discarding = false
  readonly #options: ReadOptions

  constructor (options: ReadOptions) {
    this.#options = options
    this.promise = new Promise<RawResponse>((resolve, reject) => {
      this.#resolve = resolve
      this.#reject = reject
    })
  }

  /** Ends the hop at once, queued or in flight; the promise rejects with `reason`. */
  abort (reason: unknown): void {
    if (this.#settled) return
    const error = reason instanceof Error ? reason : new Error('the exchange was aborted', { cause: reason })
    this.#abortedWith = error
    this.#fail(reason)
    // Not yet on a connection: onRequestStart ends it there.
    this.#controller?.abort(error)
  }

  onRequestStart (controller: Dispatcher.DispatchController): void {
    this.#controller = controller
    if (this.#abortedWith !== null) controller.abort(this.#abortedWith)
  }

  onResponseStart (controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return
    this.status = statusCode
    this.headers = headers
    this.#discarding = this.#options.discard.has(statusCode)
    const declared = Number(headers['content-length'])
    if (this.#discarding) {
      if (declared > this.#options.discardLimit) this.#finishDiscarding(controller)
      return
    }
    if (declared > this.#options.maxBodyBytes) this.#tooLarge(controller)
  }

  onResponseData (controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    this.#size += chunk.length
    if (this.#discarding) {
      if (this.#size > this.#options.discardLimit) this.#finishDiscarding(controller)
      return
    }
    if (this.#size > this.#options.maxBodyBytes) return this.#tooLarge(controller)
    this.#chunks.push(chunk)
  }

  onResponseEnd (): void {
    if (this.#settled) return
    this.#settled = true
    const chunks = this.#chunks
    this.#chunks = []
    const body = chunks.length === 0 ? EMPTY_BODY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size)
    this.#resolve({ status: this.status, headers: this.headers, body })
  }

  onResponseError (_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error)
  }

  #fail (reason: unknown): void {
    if (this.#settled) return
    this.#settled = true
    this.#chunks = []
    this.#reject(reason)
  }

  #tooLarge (controller: Dispatcher.DispatchController): void {
    const error = new ResponseTooLarge(this.#options.maxBodyBytes)
    this.#fail(error)
    controller.abort(error)
  }

  /** A discarded body too long to read through: the answer is what we have, the connection is closed. */
  #finishDiscarding (controller: Dispatcher.DispatchController): void {
    this.#settled = true
    this.#resolve({ status: this.status, headers: this.headers, body: EMPTY_BODY })
    controller.abort(new Error('a discarded answer body was too long to read through'))
  }
}

/** Sends one POST and reads its answer with `reader`; the reader's promise tells the outcome. */
export function dispatchPost (
  dispatcher: Dispatcher, url: URL, headers: Record<string, string>, body: string, reader: ResponseReader
): Promise<RawResponse> {
  try {
    dispatcher.dispatch({ origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body }, reader)
  } catch (error) {
    // Invalid options are thrown at once; the reader may already have been told (then this is a no-op).
    reader.abort(error)
  }
  return reader.promise
}
