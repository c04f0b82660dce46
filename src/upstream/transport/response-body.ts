// An answer's bytes as text, or as JSON. JSON.parse needs a string, and decoding UTF-8 with a single character past
// U+00FF (a Cyrillic name) gives a string of two bytes a character: from about 64 KiB on it no longer fits a
// regular heap page, and V8 makes it in the large-object space, where decoding 107 KB cost 1 ms against 15 µs for
// one-byte text (docs/performance.md, register: Answer body). A large body is parsed as one-byte text instead.

// JSON forbids a byte order mark and allows a reader to ignore one (RFC 8259 section 8.1).
const BOM = [0xEF, 0xBB, 0xBF] as const
// Below this many bytes the UTF-8 text always fits a regular page (two bytes a character and a header).
export const LARGE_BODY_BYTES = 60 * 1024
// A run of bytes outside ASCII, read as Latin-1 (one character a byte).
const NON_ASCII = /[\x80-\xFF]+/g
const BACKSLASH = 0x5C

function bomLength (body: Buffer): number {
  return body.length >= 3 && body[0] === BOM[0] && body[1] === BOM[1] && body[2] === BOM[2] ? 3 : 0
}

/** The body as UTF-8 text, a leading byte order mark dropped. */
export function responseText (body: Buffer): string {
  return body.toString('utf8', bomLength(body))
}

/** What JSON.parse(responseText(body)) answers, or throws; without a two-byte string for a large body. */
export function parseResponseJson (body: Buffer): unknown {
  return body.length < LARGE_BODY_BYTES ? JSON.parse(responseText(body)) : parseAsAscii(body)
}

/**
 * JSON.parse(responseText(body)) over ASCII text: each run of non-ASCII bytes becomes the `\uXXXX` escapes of what
 * it decodes to. UTF-8 never uses an ASCII byte inside a multi-byte character, so a run decodes alone as it does
 * in the whole text (invalid bytes to U+FFFD alike). Inside a string an escape is the character; anywhere else
 * JSON allows neither, so invalid text stays invalid. A run right after an escaping backslash is left as it is:
 * an escape there would turn an invalid escape into a valid `\\`.
 */
export function parseAsAscii (body: Buffer): unknown {
  const start = bomLength(body)
  const text = body.toString('latin1', start)
  // With no run to escape, replace() answers the text itself.
  return JSON.parse(text.replace(NON_ASCII, (run: string, at: number) =>
    escapedAt(text, at) ? run : escapes(body.toString('utf8', start + at, start + at + run.length))))
}

/** Whether the character at `at` follows an odd number of backslashes: the second character of an escape. */
function escapedAt (text: string, at: number): boolean {
  let backslashes = 0
  while (at - backslashes - 1 >= 0 && text.charCodeAt(at - backslashes - 1) === BACKSLASH) backslashes++
  return backslashes % 2 === 1
}

function escapes (decoded: string): string {
  let out = ''
  // Each UTF-16 unit, surrogates included: JSON.parse joins an escaped pair back into one character.
  for (let i = 0; i < decoded.length; i++) out += '\\u' + (decoded.charCodeAt(i) + 0x10000).toString(16).slice(1)
  return out
}
