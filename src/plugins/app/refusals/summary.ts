// Refused requests counted instead of logged one by one: past a limit, a client sends about a thousand a second,
// and a line each would cost more than the refusal. Each kind of refusal writes one line per key (an address, a
// console operator) and per window, with the count, when the window ends (and at shutdown); the keys of one window
// are bounded, the rest summed into one line.

const summarisedErrors = new WeakSet<Error>()

/** Marks an error whose request a summary counts: the error handler writes no line of its own for it. */
export function summarised<E extends Error> (error: E): E {
  summarisedErrors.add(error)
  return error
}

/** Whether a summary counts this error's request. */
export const isSummarised = (error: Error): boolean => summarisedErrors.has(error)

/** Where a summary line goes: a pino logger's method, bound (`log.warn.bind(log)`). */
export type SummaryWriter = (fields: Record<string, unknown>, message: string) => void

/** Distinct keys a window keeps; a refusal under any other key of that window counts in one `others` line. */
const SUMMARY_MAX_KEYS = 1000

interface Tally { fields: Record<string, unknown>, count: number }

export class RefusalSummary {
  readonly #write: SummaryWriter
  readonly #message: string
  readonly #windowMs: number
  readonly #maxKeys: number
  #tallies = new Map<string, Tally>()
  #others = 0
  readonly #timer: NodeJS.Timeout

  constructor (write: SummaryWriter, message: string, windowMs: number, maxKeys = SUMMARY_MAX_KEYS) {
    this.#write = write
    this.#message = message
    this.#windowMs = windowMs
    this.#maxKeys = maxKeys
    this.#timer = setInterval(() => { this.flush() }, windowMs)
    // A summary never keeps the process alive.
    this.#timer.unref()
  }

  /** Counts one refusal under `key`; `fields` (no secret, no personal field) describe the key's line. */
  count (key: string, fields: Record<string, unknown>): void {
    const tally = this.#tallies.get(key)
    if (tally !== undefined) tally.count++
    else if (this.#tallies.size < this.#maxKeys) this.#tallies.set(key, { fields, count: 1 })
    else this.#others++
  }

  /** Writes the window's lines and starts a new window. */
  flush (): void {
    const seconds = Math.round(this.#windowMs / 1000)
    for (const { fields, count } of this.#tallies.values()) {
      this.#write({ ...fields, count, window_s: seconds }, this.#message)
    }
    if (this.#others > 0) this.#write({ others: true, count: this.#others, window_s: seconds }, this.#message)
    this.#tallies = new Map()
    this.#others = 0
  }

  /** The last lines, and no more windows. */
  close (): void {
    clearInterval(this.#timer)
    this.flush()
  }
}
