// The fast date-time check answers exactly as TypeBox's own, for any string.
import fc from 'fast-check'
import t from 'tap'
import { Compile } from 'typebox/compile'
import { IsDateTime } from 'typebox/format'
import { IsoDateTime } from '../../schemas/common.ts'
import { compileOperationContracts } from '../../src/upstream/contract/check.ts'
import { isDateTime } from '../../src/upstream/contract/formats.ts'

const digits = (n: number) => fc.integer({ min: 0, max: 10 ** n - 1 }).map(v => String(v).padStart(n, '0'))
// Near-valid date-times: every field anywhere in its digit range, so out-of-range ones come up often.
const dateTime = fc.tuple(
  digits(4), digits(2), digits(2), fc.constantFrom('T', 't', ' '), digits(2), digits(2), digits(2),
  fc.constantFrom('', '.5', '.512345', '.'),
  fc.oneof(fc.constantFrom('Z', 'z', '', '[Europe/Moscow]', 'Z[!u-ca=iso8601]'), fc.tuple(fc.constantFrom('+', '-'), digits(2), digits(2)).map(([s, h, m]) => `${s}${h}:${m}`))
).map(([y, mo, d, T, h, mi, s, frac, zone]) => `${y}-${mo}-${d}${T}${h}:${mi}:${s}${frac}${zone}`)

t.test('same answer as TypeBox for near-valid date-times and for any string', async t => {
  fc.assert(
    fc.property(fc.oneof(dateTime, fc.string()), value => isDateTime(value) === IsDateTime(value)), { numRuns: 20_000 }
  )
  t.pass('20 000 strings agree')
})

t.test('the edge cases by name', async t => {
  const cases = [
    '2024-05-17T14:03:27.512345+03:00', '2024-02-29T00:00:00Z', '2023-02-29T00:00:00Z', '2000-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-00-10T00:00:00Z', '2024-04-31T00:00:00Z',
    '2024-05-17T24:00:00Z', '2024-05-17T23:60:00Z', '2016-12-31T23:59:60Z', '2016-12-31T23:59:60+01:00',
    '2024-05-17T10:00:00+24:00', '2024-05-17T10:00:00+23:60', '2024-05-17T10:00:00', '2024-05-17t10:00:00z',
    '2024-05-17T10:00:00Z[Europe/Moscow]', '２０２４-05-17T10:00:00Z'
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
