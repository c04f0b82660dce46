// The profile route's serializer (src/serializer.ts: nullables rewritten, long lists written item by item) against
// fast-json-stringify alone on the route's schema, over generated profiles: any characters in every string, nulls,
// undeclared fields, 0 to 150 cars in each list. The same bytes, or both throw.
import fastJsonStringify from 'fast-json-stringify'
import fc from 'fast-check'
import t from 'tap'
import * as fx from '../../schemas/fixtures.ts'
import { Profile } from '../../schemas/profile.ts'
import { collectShared, toRefs } from '../../src/plugins/app/shared-schemas/refs.ts'
import { PIECEWISE_ITEMS, routeSerializer } from '../../src/serializer.ts'

type Fields = Record<string, unknown>

const shared: Fields = Object.fromEntries(
  collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)])
)
const library = fastJsonStringify({ $ref: 'Profile' }, { schema: shared as Record<string, fastJsonStringify.Schema> })
const write = routeSerializer<unknown>({ $ref: 'Profile' }, shared)
const [full] = (Profile as { examples?: Fields[] }).examples ?? []

function outcome (run: () => Buffer): Buffer | 'threw' {
  try {
    return run()
  } catch {
    return 'threw'
  }
}

const text = fc.string({ unit: 'binary', maxLength: 12 })
const extras = fc.dictionary(fc.constantFrom('secret', 'note', 'id_vendor_extra'), fc.jsonValue({ maxDepth: 1 }),
  { maxKeys: 2 })
const data = fc.option(fc.record({ car_guid: text, date: fc.constant(fx.breadcrumbData.date), type: fc.integer() }))
const car = fc.tuple(fc.record({ key_breadcrumbs: text, vendor: text, id_user_breadcrumbs: fc.integer(), data }),
  extras).map(([fields, more]) => ({ ...(full!.catalog_cars_view as Fields[])[0], ...more, ...fields }))
const cars = fc.oneof(fc.array(car, { maxLength: 4 }), fc.array(car, { minLength: PIECEWISE_ITEMS, maxLength: 150 }))
const profile = fc.record({
  client: fc.record({ name: text, surname: text }).map(names => ({ ...fx.client, ...names })),
  catalog_cars_view: cars,
  catalog_cars_favourites: cars,
  contractor: fc.option(fc.constant(fx.contractor)),
  more: extras
}).map(({ more, ...fields }) => ({ ...full, ...more, ...fields }))

t.test('a generated profile is written as fast-json-stringify writes it from the route\'s schema', async t => {
  let piecewise = 0
  fc.assert(fc.property(profile, value => {
    if ([value.catalog_cars_view, value.catalog_cars_favourites].some(list => list.length >= PIECEWISE_ITEMS)) {
      piecewise++
    }
    const ours = outcome(() => write(value))
    const theirs = outcome(() => Buffer.from(library(value)))
    return ours === 'threw' || theirs === 'threw' ? ours === theirs : ours.equals(theirs)
  }), { numRuns: 200 })
  t.ok(piecewise > 50, `${piecewise} profiles with a long list, the ones written item by item`)
})

t.test('what the library reads differently is written whole: a toJSON, a class, a missing list', async t => {
  const long = Array.from({ length: PIECEWISE_ITEMS }, () => (full!.catalog_cars_view as Fields[])[0])
  class Shape { constructor () { Object.assign(this, { ...full, catalog_cars_view: long }) } }
  const values = [
    { ...full, catalog_cars_view: long, toJSON: () => ({ ...full }) },
    new Shape(),
    Object.assign(Object.create(null) as Fields, { ...full, catalog_cars_view: long }),
    { ...full, catalog_cars_view: long, catalog_cars_favourites: undefined },
    { ...full, catalog_cars_view: [...long, undefined] }
  ]
  for (const value of values) {
    const ours = outcome(() => write(value))
    const theirs = outcome(() => Buffer.from(library(value)))
    t.ok(ours === 'threw' || theirs === 'threw' ? ours === theirs : ours.equals(theirs), String(Object.keys(value)))
  }
})
