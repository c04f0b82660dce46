// jsonBytes against what it replaces, Buffer.from(JSON.stringify(value)): the same bytes for any value, written
// whole or piece by piece (objects with long arrays, fields JSON leaves out, characters past U+00FF), or both throw.
import fc from 'fast-check'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { Profile } from '../../schemas/profile.ts'
import { jsonBytes, PIECEWISE_ITEMS } from '../../src/json-bytes.ts'
import { collectShared, toRefs } from '../../src/plugins/app/shared-schemas.ts'
import { projectionSerializer, routeSerializer } from '../../src/serializer.ts'

function outcome (write: () => Buffer): Buffer | 'threw' {
  try {
    return write()
  } catch {
    return 'threw'
  }
}

const same = (value: unknown) => {
  const ours = outcome(() => jsonBytes(value))
  const theirs = outcome(() => Buffer.from(JSON.stringify(value)))
  return ours === 'threw' || theirs === 'threw' ? ours === theirs : ours.equals(theirs)
}

// What JSON.stringify writes, leaves out (undefined, functions, symbols) or turns to null inside arrays.
const leaf = fc.oneof(
  fc.jsonValue({ stringUnit: 'binary', maxDepth: 2 }),
  fc.constantFrom(undefined, () => 1, Symbol('s'), new Date(0), Number.NaN, -0)
)
const longArray = fc.array(leaf, { minLength: PIECEWISE_ITEMS, maxLength: PIECEWISE_ITEMS * 2 })
const record = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.oneof(leaf, longArray), { maxKeys: 6 })

t.test('any value is written as Buffer.from(JSON.stringify()) writes it', async t => {
  let piecewise = 0
  fc.assert(fc.property(fc.oneof(record, leaf, longArray), value => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) &&
      Object.values(value).some(field => Array.isArray(field) && field.length >= PIECEWISE_ITEMS)) piecewise++
    return same(value)
  }), { numRuns: 1500 })
  t.ok(piecewise > 200, `${piecewise} values with a long array, the ones written piece by piece`)
})

t.test('a long array is written item by item, a short one whole: an item\'s toJSON() sees the key it was given', async t => {
  // The one deliberate difference (json-bytes.ts): it tells which way a value was written.
  const item = { toJSON: (key: string) => `key ${JSON.stringify(key)}` }
  const long = Array.from({ length: PIECEWISE_ITEMS }, () => item)
  t.equal(JSON.parse(jsonBytes({ name: 'Иванов', long }).toString()).long[1], 'key ""', 'piece by piece')
  t.equal(JSON.parse(jsonBytes({ name: 'Иванов', short: long.slice(1) }).toString()).short[1], 'key "1"', 'whole')
})

t.test('what JSON.stringify treats specially is written whole, and a cycle throws both ways', async t => {
  const long = Array.from({ length: PIECEWISE_ITEMS }, (_, i) => i)
  const cyclic: Record<string, unknown> = { long }
  cyclic.self = cyclic
  const nullPrototype = Object.assign(Object.create(null) as Record<string, unknown>, { long, name: 'Иванов' })
  class Shape { long = long }
  const values = [
    { long, toJSON: () => 'own toJSON' }, nullPrototype, new Shape(), Object.assign(Object('ab') as object, { long }),
    { long: Object.assign([...long], { extra: 1 }), holes: new Array(3) }, { [Symbol('s')]: long, long }
  ]
  for (const value of values) t.ok(same(value), String(Object.keys(value)))
  t.equal(outcome(() => jsonBytes(cyclic)), 'threw')
  t.equal(outcome(() => Buffer.from(JSON.stringify(cyclic))), 'threw')
})

t.test('a profile with 300 viewed cars and a Cyrillic name: the route writes the projection\'s JSON', async t => {
  const shared = Object.fromEntries(
    collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)]))
  const [full] = (Profile as { examples?: Record<string, unknown>[] }).examples ?? []
  const large = {
    ...full,
    client: { ...fx.client, client_data: { ...fx.clientDataReg, city: 'Москва' } },
    catalog_cars_view: Array.from({ length: 300 }, (_, i) =>
      ({ ...(full!.catalog_cars_view as Record<string, unknown>[])[0], id_user_breadcrumbs: i }))
  }
  const bytes = routeSerializer<unknown>({ $ref: 'Profile' }, shared)(large)
  const text = projectionSerializer({ $ref: 'Profile' }, shared)!(large)
  t.ok(bytes.equals(Buffer.from(text)))
  t.ok(bytes.length > 64 * 1024 && [...text].some(char => char.charCodeAt(0) > 0xFF), 'large, and past Latin-1')
})
