// The profile route's bytes: what Fastify's default serializer (fast-json-stringify of the route's schema) writes,
// for every fixture, small or with hundreds of cars and a Cyrillic name; undeclared fields never leave the service.
import fastJsonStringify from 'fast-json-stringify'
import t from 'tap'
import * as fx from '../schemas/fixtures.ts'
import { Profile } from '../schemas/profile.ts'
import { collectShared, toRefs } from '../src/plugins/app/shared-schemas/refs.ts'
import { nullableForSerializer, PIECEWISE_ITEMS, routeSerializer } from '../src/serializer.ts'

type Fields = Record<string, unknown>

const shared: Fields = Object.fromEntries(
  collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)])
)
// The library alone, on the schema as the route declares it.
const library = fastJsonStringify({ $ref: 'Profile' }, { schema: shared as Record<string, fastJsonStringify.Schema> })
const write = routeSerializer<unknown>({ $ref: 'Profile' }, shared)

const [full, degraded] = (Profile as { examples?: Fields[] }).examples ?? []
const extra = { secret: 'must not leave', nested: { deep: true } }
const fixtures: Record<string, Fields> = {
  full: full!,
  degraded: degraded!,
  withNulls: {
    ...full,
    client: { ...fx.client, suspended_date: null, client_data: { ...fx.clientDataReg, email: null, city: null } },
    catalog_cars_view: [{ ...fx.breadcrumb, data: null }],
    contractor: { ...fx.contractor, article: null, date_birth: null, last_dealer: null }
  },
  withValues: {
    ...full,
    client: { ...fx.client, suspended_date: '2024-05-17T14:03:27.512345+03:00' },
    contractor: { ...fx.contractor, article: 'A-1', last_dealer: { name: 'Kia Center' } }
  },
  withExtras: {
    ...full,
    ...extra,
    client: { ...fx.client, ...extra, client_data: { ...fx.clientDataReg, ...extra } },
    catalog_cars_view: [{ ...fx.breadcrumb, ...extra, data: { ...fx.breadcrumbData, ...extra } }],
    // The discount data is open (additionalProperties: true): its undocumented fields pass.
    discount: { ...fx.discountWithBonuses.data, undocumented_bonus: 5 },
    contractor: { ...fx.contractor, ...extra, last_dealer: { name: 'Kia Center', ...extra } }
  }
}

/** The fixture as a heavy user's: 300 viewed cars (each as its first, renumbered) and a Cyrillic city. */
function large (profile: Fields): Fields {
  const car = (profile.catalog_cars_view as Fields[])[0]!
  return {
    ...profile,
    client: { ...(profile.client as Fields), client_data: { ...fx.clientDataReg, city: 'Москва' } },
    catalog_cars_view: Array.from({ length: 300 }, (_, i) => ({ ...car, id_user_breadcrumbs: i }))
  }
}

t.test('every fixture, small or large, is written byte for byte as Fastify\'s ' +
  'default serializer writes it', async t => {
  for (const [name, profile] of Object.entries(fixtures)) {
    for (const [size, value] of [['small', profile], ['large', large(profile)]] as const) {
      const bytes = write(value)
      t.ok(bytes.equals(Buffer.from(library(value))), `${name}, ${size}`)
      if (name !== 'withExtras') t.strictSame(JSON.parse(bytes.toString()), value, `${name}, ${size}: every field`)
    }
  }
  const bytes = write(large(full!))
  t.ok(bytes.length > 64 * 1024 && bytes.toString().includes('Москва'), 'the large one is past 64 KiB and Latin-1')
})

t.test('undeclared fields are dropped at every depth; open objects keep theirs', async t => {
  for (const value of [fixtures.withExtras!, large(fixtures.withExtras!)]) {
    const written = JSON.parse(write(value).toString()) as Fields
    t.equal((written.discount as Fields).undocumented_bonus, 5, 'the open discount keeps its fields')
    const contractor = written.contractor as Fields
    t.strictSame(contractor.last_dealer, { name: 'Kia Center', ...extra }, 'the undescribed last_dealer passes whole')
    delete contractor.last_dealer
    const rest = JSON.stringify(written)
    t.notOk(rest.includes('must not leave') || rest.includes('"deep"'), 'no undeclared field anywhere else')
  }
})

t.test('a profile without a required field is a bug of ours, not an answer: it throws', async t => {
  for (const value of [full!, large(full!)]) {
    t.throws(() => write({ ...value, uid_client: undefined }), /"uid_client" is required!/)
    t.throws(() => library({ ...value, uid_client: undefined }), /"uid_client" is required!/, 'as the library does')
  }
})

t.test('a list is written item by item only from PIECEWISE_ITEMS on, with the same bytes either side', async t => {
  const car = (full!.catalog_cars_view as Fields[])[0]!
  for (const length of [0, 1, PIECEWISE_ITEMS - 1, PIECEWISE_ITEMS, PIECEWISE_ITEMS + 1]) {
    const value = { ...full, catalog_cars_favourites: Array.from({ length }, () => ({ ...car, ...extra })) }
    t.ok(write(value).equals(Buffer.from(library(value))), `${length} favourites`)
  }
})

t.test('every nullable of the Profile is given to the compiler as a nullable type, and nothing else', async t => {
  const count = (node: unknown) => JSON.stringify(node).split('"anyOf"').length - 1
  const rewritten = Object.fromEntries(Object.entries(shared).map(([id, s]) => [id, nullableForSerializer(s, shared)]))
  t.ok(count(shared) > 10, 'the Profile has nullable fields to rewrite')
  t.equal(count(rewritten), 0)
  // A union of two real types is not a nullable: left as it is.
  const union = { anyOf: [{ type: 'string' }, { type: 'number' }] }
  t.strictSame(nullableForSerializer(union, {}), union)
  const nested = { anyOf: [union, { type: 'null' }] }
  t.strictSame(nullableForSerializer(nested, {}), nested)
})
