// The serializers: JSON.stringify of the schema's projection, and the nullable rewrite for the schemas left to
// fast-json-stringify. Either way the JSON written is the one fast-json-stringify writes from the schema.
import { createRequire } from 'node:module'
import t, { type Test } from 'tap'
import * as fx from '../schemas/fixtures.ts'
import { Profile } from '../schemas/profile.ts'
import { collectShared, toRefs } from '../src/plugins/app/shared-schemas.ts'
import { nullableForSerializer, projectionSerializer } from '../src/serializer.ts'

const fastJsonStringify = createRequire(createRequire(import.meta.url).resolve('fastify'))('fast-json-stringify') as
  (schema: unknown, options: { schema: Record<string, unknown> }) => (value: unknown) => string

const shared: Record<string, unknown> = Object.fromEntries(
  collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)])
)
const rewritten = Object.fromEntries(
  Object.entries(shared).map(([id, schema]) => [id, nullableForSerializer(schema, shared)])
)

t.test('every nullable of the Profile becomes a nullable type, and nothing else changes', async t => {
  const count = (node: unknown) => JSON.stringify(node).split('"anyOf"').length - 1
  t.ok(count(shared) > 10, 'the Profile has nullable fields to rewrite')
  t.equal(count(rewritten), 0)
  // A union of two real types is not a nullable: left to fast-json-stringify as it is.
  const union = { anyOf: [{ type: 'string' }, { type: 'number' }] }
  t.strictSame(nullableForSerializer(union, {}), union)
  t.strictSame(nullableForSerializer({ anyOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'null' }] }, {}),
    { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'null' }] })
})

t.test('a profile serializes to the same bytes, with sections and fields null or not', async t => {
  const before = fastJsonStringify({ $ref: 'Profile' }, { schema: shared })
  const after = fastJsonStringify({ $ref: 'Profile' }, { schema: rewritten })
  const [full, degraded] = (Profile as { examples?: unknown[] }).examples ?? []
  const withNulls = {
    ...(full as Record<string, unknown>),
    client: { ...fx.client, suspended_date: null, client_data: { ...fx.clientDataReg, email: null, city: null } },
    catalog_cars_view: [{ ...fx.breadcrumb, data: null }],
    contractor: { ...fx.contractor, article: null, date_birth: null, last_dealer: null }
  }
  const withValues = {
    ...(full as Record<string, unknown>),
    client: { ...fx.client, suspended_date: '2024-05-17T14:03:27.512345+03:00' },
    contractor: { ...fx.contractor, article: 'A-1', last_dealer: { name: 'Kia Center' } }
  }
  for (const [name, profile] of Object.entries({ full, degraded, withNulls, withValues })) {
    const bytes = after(profile)
    t.equal(bytes, before(profile), name)
    t.strictSame(JSON.parse(bytes), profile, `${name}: every field, nulls included`)
  }
})

t.test('the projection writes the JSON fast-json-stringify writes, undeclared fields dropped the same', async t => {
  const fjs = fastJsonStringify({ $ref: 'Profile' }, { schema: shared })
  const projected = projectionSerializer({ $ref: 'Profile' }, shared)
  if (projected === undefined) throw new Error('the Profile must take the projection')
  const [full, degraded] = (Profile as { examples?: unknown[] }).examples ?? []
  const extra = { secret: 'must not leave', nested: { deep: true } }
  const withExtras = {
    ...(full as Record<string, unknown>),
    ...extra,
    client: { ...fx.client, ...extra, client_data: { ...fx.clientDataReg, ...extra } },
    catalog_cars_view: [{ ...fx.breadcrumb, ...extra, data: { ...fx.breadcrumbData, ...extra } }],
    // The discount data is open (additionalProperties: true): its undocumented fields pass, as before.
    discount: { ...fx.discountWithBonuses.data, undocumented_bonus: 5 },
    contractor: { ...fx.contractor, ...extra, last_dealer: { name: 'Kia Center', ...extra } }
  }
  for (const [name, profile] of Object.entries({ full, degraded, withExtras })) {
    const written = JSON.parse(projected(profile))
    t.strictSame(written, JSON.parse(fjs(profile)), name)
  }
  const written = JSON.parse(projected(withExtras))
  t.notOk('secret' in written, 'an undeclared top-level field is dropped')
  t.notOk('secret' in written.client || 'secret' in written.client.client_data || 'secret' in written.catalog_cars_view[0], 'and nested ones')
  t.equal(written.discount.undocumented_bonus, 5, 'an open object keeps its fields')
  t.strictSame(written.contractor.last_dealer, { name: 'Kia Center', ...extra }, 'the undescribed last_dealer passes whole')
  t.throws(() => projected({ ...(full as Record<string, unknown>), uid_client: undefined }), /"uid_client" is required!/, 'a missing required field is a bug, not an answer')
})

t.test('a schema the projection does not support stays with fast-json-stringify', async t => {
  t.equal(projectionSerializer({ anyOf: [{ type: 'string' }, { type: 'number' }] }, {}), undefined, 'a union of two types')
  t.equal(projectionSerializer({ type: 'object', patternProperties: { '^x': { type: 'string' } } }, {}), undefined, 'patternProperties')
  t.equal(projectionSerializer({ $ref: 'Missing' }, {}), undefined, 'an unknown $ref')
  t.equal(projectionSerializer({ type: 'object', properties: { a: { type: 'string' } } }, {})?.({ a: 'x', b: 1 }), '{"a":"x"}')
})

/** What a serializer does with a value: the parsed JSON it writes, or that it threw. */
function outcome (serialize: (value: unknown) => string, value: unknown): unknown {
  try {
    return { wrote: JSON.parse(serialize(value)) }
  } catch {
    return 'threw'
  }
}

/** The projection does with `value` what fast-json-stringify does with it. */
function sameAsFastJsonStringify (t: Test, name: string, schema: Record<string, unknown>, value: unknown) {
  const projected = projectionSerializer(schema, {})
  if (projected === undefined) throw new Error(`${name}: the schema must take the projection`)
  t.strictSame(outcome(projected, value), outcome(fastJsonStringify(schema, { schema: {} }), value), name)
}

t.test('a required field after a field that changed is still checked (issue 21, finding 3)', async t => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'object', properties: { x: { type: 'string' } } }, b: { type: 'string' } },
    required: ['a', 'b']
  }
  const projected = projectionSerializer(schema, {})!
  t.throws(() => projected({ a: { x: '1', extra: true } }), /"b" is required!/, 'the copy checks it too')
  t.throws(() => projected({ a: { x: '1' } }), /"b" is required!/, 'as the check without a copy does')
  t.throws(() => projectionSerializer({ type: 'object', required: ['z'] }, {})!({}), /"z" is required!/, 'required, not declared')
  sameAsFastJsonStringify(t, 'as fast-json-stringify', schema, { a: { x: '1', extra: true } })
})

t.test('where the projection and fast-json-stringify disagreed, they agree (issue 21, finding 4)', async t => {
  const objectOfA = { properties: { a: { type: 'string' } } }
  sameAsFastJsonStringify(t, 'properties without type is an object: undeclared fields dropped', objectOfA, { a: 'ok', secret: 'leak' })
  t.equal(projectionSerializer(objectOfA, {})!({ a: 'ok', secret: 'leak' }), '{"a":"ok"}')
  sameAsFastJsonStringify(t, 'items without type is an array', { items: { type: 'object', ...objectOfA } }, [{ a: 'ok', secret: 'leak' }])

  class Record { toJSON () { return { a: 'ok', secret: 'leak' } } }
  sameAsFastJsonStringify(t, 'an inherited toJSON is written through the schema', { type: 'object', ...objectOfA }, new Record())
  t.equal(projectionSerializer({ type: 'object', ...objectOfA }, {})!(new Record()), '{"a":"ok"}')

  const hostile = JSON.parse('{"a":{"x":"1","extra":true},"__proto__":{"polluted":true}}') as unknown
  const open = { type: 'object', properties: { a: { type: 'object', properties: { x: { type: 'string' } } } }, additionalProperties: true }
  sameAsFastJsonStringify(t, 'a __proto__ key of an open object is a field', open, hostile)
  t.equal(projectionSerializer(open, {})!(hostile), '{"a":{"x":"1"},"__proto__":{"polluted":true}}', 'and never the prototype')

  const day = new Date(2024, 4, 17, 23, 30)
  sameAsFastJsonStringify(t, 'a Date under format: date is its local day', { type: 'string', format: 'date' }, day)
  t.equal(projectionSerializer({ type: 'string', format: 'date' }, {})!(day), '"2024-05-17"')
  sameAsFastJsonStringify(t, 'a Date under format: time is its local time', { type: 'string', format: 'time' }, day)
  sameAsFastJsonStringify(t, 'NaN as a number throws', { type: 'number' }, Number.NaN)
  sameAsFastJsonStringify(t, '1.5 as an integer is 1', { type: 'integer' }, 1.5)
  sameAsFastJsonStringify(t, 'null as a string is ""', { type: 'string' }, null)
  sameAsFastJsonStringify(t, 'a number as a string is its digits', { type: 'object', properties: { n: { type: 'string' } } }, { n: 12 })
  sameAsFastJsonStringify(t, 'null as an object is {}', { type: 'object', ...objectOfA }, null)
  sameAsFastJsonStringify(t, 'a const is written whatever the value', { type: 'string', const: 'x' }, 'y')
})
