// Secrets (the upstream keys, the console keys, the caller's login) kept out of what leaves the service, however the
// upstream echoed them. Two entries, by what the text is worth and how often it is redacted:
// - textRedactor, the cheap one, for the texts a failure keeps and a log line prints (a hop's location, a contract
//   message, a cause): each secret as it is, or only once percent-decoded. Paid on every upstream failure.
// - secretRedactor, the thorough one, for what an operator is shown (the console's whole exchange): as they are,
//   percent-, HTML-, base64(url)- or hex-encoded, in another case, with zero-width characters inside, cut short,
//   or split over two adjacent strings. A leaf: it imports nothing. docs/security.md, Secrets.

const REDACTED = '[redacted]'

/** Each secret replaced where it shows as it is. */
function replaced (text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) out = out.replaceAll(secret, REDACTED)
  return out
}

/** Percent-decoded, or the text itself where it is not valid percent-encoding. */
function percentDecoded (text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return text
  }
}

/**
 * The cheap redactor: replaces each secret in a text. A text that holds one only once percent-decoded is replaced
 * whole: its encoded form cannot be cut out reliably.
 */
export function textRedactor (secrets: readonly string[]): (text: string) => string {
  const known = secrets.filter(secret => secret.length > 0)
  return text => {
    const out = replaced(text, known)
    if (out.includes('%') || out.includes('+')) {
      const decoded = percentDecoded(out)
      if (known.some(secret => decoded.includes(secret))) return REDACTED
    }
    return out
  }
}
// 12 characters of a key (48 bits of a hex key) never occur by chance in an answer, and any echo of all but
// a few characters, or either part of a split key of 23 characters or more, holds such a window.
const SECRET_WINDOW = 12
// A window with fewer distinct characters (`0000-0000000`) says nothing about a key: ordinary data has those.
const MIN_DISTINCT = 5
// Three rounds undo double and triple encoding and an encoding inside another; more would only cost time.
const DECODE_ROUNDS = 3
// Strings longer than this are still compared as they are, but not decoded: no answer field is that long.
const MAX_DECODED_LENGTH = 64 * 1024

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
// Zero-width and invisible formatting characters an echo may carry inside a key.
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g

/** Case-folded, invisible characters removed: the form every comparison uses. */
function fold (text: string): string {
  return text.replace(INVISIBLE, '').toLowerCase()
}

const codePoint = (value: number) => String.fromCodePoint(Math.min(value, 0x10FFFF))

/** Percent- and HTML-decoded, leniently (a malformed sequence stays as it is). */
function unescapeText (text: string): string {
  return text
    .replace(/(?:%[0-9A-Fa-f]{2})+/g, run => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'))
    .replace(/&#[xX]([0-9A-Fa-f]{1,6});?/g, (_, hex: string) => codePoint(parseInt(hex, 16)))
    .replace(/&#(\d{1,7});?/g, (_, dec: string) => codePoint(Number(dec)))
    .replace(/&(amp|lt|gt|quot|apos);/gi, (_, name: string) => ENTITIES[name.toLowerCase()]!)
}

/** The text of each base64, base64url or hex run long enough to hold a window, at each alignment. */
function decodedRuns (text: string): string[] {
  const out: string[] = []
  for (const [run] of text.matchAll(/[A-Za-z0-9+/_-]{16,}/g)) {
    for (let offset = 0; offset < 4; offset++) out.push(Buffer.from(run.slice(offset), 'base64').toString('utf8'))
  }
  for (const [run] of text.matchAll(/[0-9A-Fa-f]{16,}/g)) {
    for (let offset = 0; offset < 2; offset++) out.push(Buffer.from(run.slice(offset), 'hex').toString('utf8'))
  }
  return out
}

/** The text and every decoded form of it, each folded. */
function normalizedForms (text: string): string[] {
  const forms = new Set([fold(text)])
  if (text.length > MAX_DECODED_LENGTH) return [...forms]
  let round = [text]
  for (let i = 0; i < DECODE_ROUNDS && round.length > 0; i++) {
    const next: string[] = []
    for (const form of round) {
      for (const decoded of [unescapeText(form), ...decodedRuns(form)]) {
        const folded = fold(decoded)
        if (decoded === form || forms.has(folded)) continue
        forms.add(folded)
        next.push(decoded)
      }
    }
    round = next
  }
  return [...forms]
}

/** The folded windows of a secret that identify it: all of it when shorter than a window. */
function windowsOf (secret: string): string[] {
  const folded = fold(secret)
  if (folded.length <= SECRET_WINDOW) return [folded]
  const windows = new Set<string>()
  for (let i = 0; i + SECRET_WINDOW <= folded.length; i++) {
    const window = folded.slice(i, i + SECRET_WINDOW)
    if (new Set(window).size >= MIN_DISTINCT) windows.add(window)
  }
  return [...windows]
}

export interface Redactor {
  /** The text with each secret replaced; whole, when a secret shows only once normalized. */
  text (text: string): string
  /** A JSON value with every string (object keys included) redacted, and adjacent strings checked together. */
  value (value: unknown): unknown
}

/** The thorough redactor of these secrets (empty ones ignored). */
export function secretRedactor (secrets: readonly string[]): Redactor {
  const kept = secrets.filter(secret => secret.length > 0)
  const windows = kept.flatMap(windowsOf)
  const holdsSecret = (text: string) =>
    normalizedForms(text).some(form => windows.some(window => form.includes(window)))

  function text (value: string): string {
    const out = replaced(value, kept)
    // The encoded or altered form cannot be cut out reliably; a partial text is worth less than a leaked key.
    return holdsSecret(out) ? REDACTED : out
  }

  /** True when a window of a secret runs from the end of `a` into the start of `b`: a key split in two. */
  function straddles (a: string, b: string): boolean {
    const tails = normalizedForms(a).map(form => form.slice(-(SECRET_WINDOW - 1)))
    const heads = normalizedForms(b).map(form => form.slice(0, SECRET_WINDOW - 1))
    return tails.some(tail => heads.some(head => windows.some(window => (tail + head).includes(window))))
  }

  /** Strings in a row (items, or values of an object) redacted alone, and both of a pair a key runs across. */
  function strings (values: unknown[]): unknown[] {
    const out = values.map(redactValue)
    for (let i = 0; i + 1 < values.length; i++) {
      const [a, b] = [values[i], values[i + 1]]
      if (typeof a === 'string' && typeof b === 'string' && straddles(a, b)) out[i] = out[i + 1] = REDACTED
    }
    return out
  }

  function redactValue (value: unknown): unknown {
    if (typeof value === 'string') return text(value)
    if (Array.isArray(value)) return strings(value)
    if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      const values = strings(entries.map(([, item]) => item))
      return Object.fromEntries(entries.map(([key], i) => [text(key), values[i]]))
    }
    return value
  }

  return { text, value: redactValue }
}
