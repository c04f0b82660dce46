// The serializer's nullable rewrite: fewer anyOf for fast-json-stringify to validate, the same bytes out.
import { createRequire } from 'node:module'
import t from 'tap'
import * as fx from '../schemas/fixtures.ts'
import { Profile } from '../schemas/profile.ts'
import { collectShared, toRefs } from '../src/plugins/shared-schemas.ts'
import { nullableForSerializer } from '../src/serializer.ts'

const fastJsonStringify = createRequire(createRequire(import.meta.url).resolve('fastify'))('fast-json-stringify') as
  (schema: unknown, options: { schema: Record<string, unknown> }) => (value: unknown) => string

const shared: Record<string, unknown> = Object.fromEntries(collectShared([Profile]).map(schema => [(schema as { $id: string }).$id, toRefs(schema)]))
const rewritten = Object.fromEntries(Object.entries(shared).map(([id, schema]) => [id, nullableForSerializer(schema, shared)]))

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
