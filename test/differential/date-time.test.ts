// The date-time format against TypeBox's own check (IsDateTime, the `date-time` format it registers),
// over generated ISO 8601 strings with offsets: valid ones, and near-valid ones one edit away; any string; the edge
// cases by name. The one test of src/upstream/contract/formats.ts.
import fc from 'fast-check'
import t from 'tap'
import { Compile } from 'typebox/compile'
import { IsDateTime } from 'typebox/format'
import { IsoDateTime } from '../../schemas/common.ts'
import { compileOperationContracts } from '../../src/upstream/contract/check.ts'
import { isDateTime } from '../../src/upstream/contract/formats.ts'

const two = (n: number) => String(n).padStart(2, '0')

// Valid instants written with every offset form: Z or z, +hh:mm or -hh:mm, a fraction of 0-9 digits.
const valid = fc.record({
  date: fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
  separator: fc.constantFrom('T', 't'),
  fraction: fc.nat({ max: 9 }),
  offset: fc.oneof(fc.constantFrom('Z', 'z', '+00:00', '-00:00'),
    fc.tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }),
      fc.integer({ min: 0, max: 59 })).map(([s, h, m]) => `${s}${two(h)}:${two(m)}`)),
  leapSecond: fc.nat({ max: 9 }).map(n => n === 0)
}).map(({ date, separator, fraction, offset, leapSecond }) => {
  const iso = date.toISOString()
  const seconds = leapSecond ? '60' : iso.slice(17, 19)
  const digits = fraction === 0 ? '' : `.${'123456789'.slice(0, fraction)}`
  return `${iso.slice(0, 10)}${separator}${iso.slice(11, 17)}${seconds}${digits}${offset}`
})

// One edit away: a character replaced, removed, inserted or doubled, from characters that matter here.
const CHARACTERS = ['0', '1', '2', '3', '5', '9', ':', '-', '+', 'T', 'Z', ' ', '.', 'x', '٣', '１', '\n']
const nearValid = fc.tuple(valid, fc.nat(), fc.constantFrom('replace', 'remove', 'insert', 'double'),
  fc.constantFrom(...CHARACTERS))
  .map(([value, at, edit, character]) => {
    const i = at % value.length
    if (edit === 'replace') return value.slice(0, i) + character + value.slice(i + 1)
    if (edit === 'remove') return value.slice(0, i) + value.slice(i + 1)
    if (edit === 'insert') return value.slice(0, i) + character + value.slice(i)
    return value.slice(0, i) + value[i]! + value.slice(i)
  })

// Fields at and just past their edges: impossible days (leap years too), hour 24, minute 60, offsets past 23:59.
const field = (max: number) => fc.integer({ min: 0, max: max + 1 }).map(two)
const outOfRange = fc.tuple(fc.constantFrom('0000', '1900', '2000', '2023', '2024', '9999'), field(12), field(31),
  field(23), field(59), field(60),
  fc.constantFrom('+', '-'), field(23), field(59))
  .map(([y, mo, d, h, mi, s, sign, oh, om]) => `${y}-${mo}-${d}T${h}:${mi}:${s}${sign}${oh}:${om}`)
// The ends of February and of the 30-day months, in leap years and not (the centuries too).
const monthEnds = fc.tuple(fc.constantFrom('0000', '0004', '1900', '2000', '2023', '2024', '2100', '2400'),
  fc.constantFrom('02-28', '02-29', '02-30', '04-30', '04-31', '12-31', '12-32'), fc.constantFrom('Z', '+03:00'))
  .map(([year, day, offset]) => `${year}-${day}T12:00:00${offset}`)
const edges = fc.oneof(outOfRange, monthEnds)

t.test('the date-time format answers as TypeBox for valid, near-valid and out-of-range date-times', async t => {
  const accepted = { valid: 0, nearValid: 0, outOfRange: 0 }
  const seen = { valid: 0, nearValid: 0, outOfRange: 0 }
  for (const [name, strings] of Object.entries({ valid, nearValid, outOfRange: edges })) {
    const kind = name as keyof typeof accepted
    fc.assert(fc.property(strings, value => {
      const answer = isDateTime(value)
      seen[kind]++
      if (answer) accepted[kind]++
      return answer === IsDateTime(value)
    }), { seed: 21, numRuns: 3000 })
  }
  t.ok(accepted.valid > seen.valid / 2,
    `most valid ones are accepted (${accepted.valid} of ${seen.valid}; a leap second is not always)`)
  t.ok(accepted.nearValid > 0 && accepted.nearValid < seen.nearValid,
    `near-valid ones go both ways (${accepted.nearValid} of ${seen.nearValid})`)
  t.ok(accepted.outOfRange > 0 && accepted.outOfRange < seen.outOfRange,
    `out-of-range ones too (${accepted.outOfRange} of ${seen.outOfRange})`)
})

t.test('any string, and the edge cases by name', async t => {
  fc.assert(fc.property(fc.string(), value => isDateTime(value) === IsDateTime(value)), { seed: 21, numRuns: 3000 })
  const cases = [
    '2024-05-17T14:03:27.512345+03:00', '2024-02-29T00:00:00Z', '2023-02-29T00:00:00Z', '2000-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-00-10T00:00:00Z', '2024-04-31T00:00:00Z',
    '2024-05-17T24:00:00Z', '2024-05-17T23:60:00Z', '2016-12-31T23:59:60Z', '2016-12-31T23:59:60+01:00',
    '2024-05-17T10:00:00+24:00', '2024-05-17T10:00:00+23:60', '2024-05-17T10:00:00', '2024-05-17t10:00:00z',
    '2024-05-17 10:00:00Z', '2024-05-17T10:00:00.Z', '2024-05-17T10:00:00Z[Europe/Moscow]',
    '２０２４-05-17T10:00:00Z'
  ]
  for (const value of cases) t.equal(isDateTime(value), IsDateTime(value), value)
})

t.test('the contracts compile with it: the schemas check date-times as before', async t => {
  compileOperationContracts()
  const check = Compile(IsoDateTime)
  t.ok(check.Check('2024-05-17T14:03:27.512345+03:00'))
  t.notOk(check.Check('2024-02-30T14:03:27+03:00'), 'an impossible day')
  t.notOk(check.Check('2024-05-17T14:03:27'), 'no offset')
})
