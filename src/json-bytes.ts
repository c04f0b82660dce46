// JSON as UTF-8 bytes, written piece by piece when large. V8 writes a JSON text with one character past U+00FF (a
// Cyrillic name) as a two-byte string, and from about 64 Ki characters on makes it in the large-object space:
// JSON.stringify and the UTF-8 encoding of a 300-car profile cost 1.65 ms so, 0.24 ms piece by piece
// (docs/performance.md, register: Serializer bytes). Each piece stays one-byte unless it holds such a character.

// An array with this many items or more is written item by item.
export const PIECEWISE_ITEMS = 64

const OPEN_OBJECT = 0x7B
const CLOSE_OBJECT = 0x7D
const OPEN_ARRAY = 0x5B
const CLOSE_ARRAY = 0x5D
const COMMA = 0x2C
const COLON = 0x3A

type Fields = Record<string, unknown>

/** A plain object JSON.stringify writes member by member: no toJSON() of its own, an ordinary prototype. */
function isPlainObject (value: unknown): value is Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  return (prototype === Object.prototype || prototype === null) && typeof (value as Fields).toJSON !== 'function'
}

const isLongArray = (value: unknown): value is unknown[] => Array.isArray(value) && value.length >= PIECEWISE_ITEMS

/**
 * Buffer.from(JSON.stringify(value)), the same bytes. A plain object with a long array among its fields is written
 * field by field, that array item by item; a piece's toJSON() is then called with '' as its key, not its name
 * (JSON.stringify passes the name): no value a schema projection writes has one that reads it.
 */
export function jsonBytes (value: unknown): Buffer {
  if (!isPlainObject(value)) return Buffer.from(JSON.stringify(value))
  const names = Object.keys(value)
  if (!names.some(name => isLongArray(value[name]))) return Buffer.from(JSON.stringify(value))
  const pieces: (string | number)[] = [OPEN_OBJECT]
  let first = true
  for (const name of names) {
    const field = value[name]
    let text: string | undefined
    if (!isLongArray(field)) {
      // Undefined, a function or a symbol: JSON.stringify leaves the member out.
      text = JSON.stringify(field)
      if (text === undefined) continue
    }
    if (!first) pieces.push(COMMA)
    first = false
    pieces.push(JSON.stringify(name), COLON)
    if (text !== undefined) {
      pieces.push(text)
      continue
    }
    pieces.push(OPEN_ARRAY)
    for (let i = 0; i < (field as unknown[]).length; i++) {
      if (i > 0) pieces.push(COMMA)
      // An array holds `null` where JSON.stringify writes nothing (undefined, a function, a hole).
      pieces.push(JSON.stringify((field as unknown[])[i]) ?? 'null')
    }
    pieces.push(CLOSE_ARRAY)
  }
  pieces.push(CLOSE_OBJECT)
  return write(pieces)
}

/** The pieces, strings as UTF-8 and numbers as one byte each, in one Buffer of their exact length. */
function write (pieces: readonly (string | number)[]): Buffer {
  let length = 0
  for (const piece of pieces) length += typeof piece === 'number' ? 1 : Buffer.byteLength(piece)
  const out = Buffer.allocUnsafe(length)
  let at = 0
  for (const piece of pieces) {
    if (typeof piece === 'number') out[at++] = piece
    else at += out.write(piece, at)
  }
  return out
}
