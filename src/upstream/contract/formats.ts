// TypeBox's `date-time` format without allocating for plain RFC 3339; anything else goes to TypeBox's IsDateTime,
// so the answer is TypeBox's for every string (docs/performance.md, register: date-time format).
import { Format, IsDateTime } from 'typebox/format'

const PLAIN_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Two decimal digits at `at` (the caller has checked they are digits). */
function two (value: string, at: number): number {
  return (value.charCodeAt(at) - 48) * 10 + value.charCodeAt(at + 1) - 48
}

/** True when `value` is a plain RFC 3339 date-time with every field in range, seconds below 60. */
function isPlainDateTime (value: string): boolean {
  if (!PLAIN_DATE_TIME.test(value)) return false
  const year = two(value, 0) * 100 + two(value, 2)
  const month = two(value, 5)
  const day = two(value, 8)
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap ? 29 : DAYS[month]!)) return false
  if (two(value, 11) > 23 || two(value, 14) > 59 || two(value, 17) > 59) return false
  const last = value.charCodeAt(value.length - 1)
  // Z or z: no offset to check; otherwise the offset is the last six characters, `+hh:mm`.
  if (last === 90 || last === 122) return true
  return two(value, value.length - 5) <= 23 && two(value, value.length - 2) <= 59
}

/** TypeBox's date-time answer, with no allocation when the string is a plain RFC 3339 date-time. */
export function isDateTime (value: string): boolean {
  return isPlainDateTime(value) || IsDateTime(value)
}

/** Registers isDateTime as TypeBox's `date-time` check; call it before compiling schemas (bound then). Idempotent. */
export function useFastFormats (): void {
  Format.Set('date-time', isDateTime)
}
