// The serializer against fast-json-stringify, the library it replaces, over generated schemas and values:
// what the app writes (the projection, or fast-json-stringify over the nullable rewrite where the
// projection does not support the schema) must be what fast-json-stringify writes from the schema, or
// both must throw. Compared as parsed JSON with the members sorted: member order is a deliberate
// difference (fast-json-stringify writes required fields first). The other deliberate differences are
// named below and kept out of the generated values; docs/performance.md says why.
import { createRequire } from 'node:module'
import fc from 'fast-check'
import t from 'tap'
import { nullableForSerializer, projectionSerializer } from '../../src/serializer.ts'

type Schema = Record<string, unknown>
type Serialize = (value: unknown) => string

const fastJsonStringify = createRequire(createRequire(import.meta.url).resolve('fastify'))('fast-json-stringify') as
  (schema: unknown, options: { schema: Record<string, unknown>, ajv?: Record<string, unknown> }) => Serialize
// Quiet: ajv's strict mode logs every untyped schema its anyOf validators meet (it changes no answer).
const FJS = { schema: {}, ajv: { strictTypes: false } }

/** What the app writes with `schema` (src/serializer.ts's serializerController, without Fastify). */
function appSerializer (schema: Schema): { serialize: Serialize, projected: boolean } {
  const projected = projectionSerializer(structuredClone(schema), {})
  if (projected !== undefined) return { serialize: projected, projected: true }
  return { serialize: fastJsonStringify(nullableForSerializer(structuredClone(schema), {}), FJS), projected: false }
}

/** JSON with every object's members sorted, `__proto__` included: order aside, equal text is equal JSON. */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  const members = Object.keys(value).sort().map(key => `${JSON.stringify(key)}:${canonical((value as Schema)[key])}`)
  return `{${members.join(',')}}`
}

function outcome (serialize: Serialize, value: unknown): string {
  let text: string
  try {
    text = serialize(value)
  } catch {
    return 'threw'
  }
  try {
    return canonical(JSON.parse(text))
  } catch {
    // fast-json-stringify writes `undefined` for a function under `{}`: the same text is the same outcome.
    return `not JSON: ${text}`
  }
}

// Keys a record may carry: ordinary, and the hostile ones (a prototype's names, toJSON as a plain field).
const KEYS = ['a', 'b', 'c', 'id', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'toJSON']
const declarable = fc.constantFrom(...KEYS)

/**
 * The schema with no property named as a member of Object.prototype (`__proto__`, `constructor`): under
 * anyOf, fast-json-stringify's schema merge drops such a property (its own defect; under a plain object
 * it writes the field, as the app does), so only schemas outside anyOf declare them.
 */
function withoutPrototypeNames (schema: Schema): Schema {
  const out: Schema = {}
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, Schema>)
        .filter(([name]) => !(name in Object.prototype))
        .map(([name, property]) => [name, withoutPrototypeNames(property)]))
    } else if (keyword === 'required') {
      out.required = (value as string[]).filter(name => !(name in Object.prototype))
    } else if (keyword === 'items') {
      out.items = withoutPrototypeNames(value as Schema)
    } else if (keyword === 'anyOf') {
      out.anyOf = (value as Schema[]).map(withoutPrototypeNames)
    } else {
      out[keyword] = value
    }
  }
  return out
}

const scalarSchema: fc.Arbitrary<Schema> = fc.oneof(
  fc.constantFrom('string', 'number', 'integer', 'boolean', 'null').map(type => ({ type })),
  fc.constantFrom('date-time', 'date', 'time').map(format => ({ type: 'string', format })),
  fc.constantFrom<Schema>({ type: 'string', const: 'fixed' }, { type: 'number', nullable: true }, { type: 'string', nullable: true }),
  // No type: fast-json-stringify infers one from the keywords, or writes the value as JSON.stringify does.
  fc.constantFrom<Schema>({}, { maxLength: 5 }, { minimum: 0 }, { description: 'anything' })
)

const { schema: schemaArbitrary } = fc.letrec<{ schema: Schema, object: Schema, array: Schema }>(tie => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    scalarSchema,
    tie('object'),
    tie('array'),
    // Nullable: anyOf [T, null] in either order, as TypeBox writes Nullable(T).
    fc.tuple(tie('schema').map(withoutPrototypeNames), fc.boolean())
      .map(([schema, first]) => ({ anyOf: first ? [{ type: 'null' }, schema] : [schema, { type: 'null' }] })),
    // A union of two real types: fast-json-stringify's own.
    fc.constant({ anyOf: [{ type: 'string' }, { type: 'number' }] })
  ),
  object: fc.record({
    properties: fc.dictionary(declarable, tie('schema'), { maxKeys: 4 }),
    required: fc.subarray(KEYS, { maxLength: 3 }),
    additionalProperties: fc.constantFrom(undefined, true, false),
    typed: fc.boolean()
  }).map(({ properties, required, additionalProperties, typed }) => {
    const names = Object.keys(properties)
    const schema: Schema = { properties, required: required.filter(name => names.includes(name) || (name === 'id' && additionalProperties !== false)) }
    if (typed) schema.type = 'object'
    if (additionalProperties !== undefined) schema.additionalProperties = additionalProperties
    return schema
  }),
  array: fc.record({ items: tie('schema'), typed: fc.boolean() })
    .map(({ items, typed }) => typed ? { type: 'array', items } : { items })
}))

/** A record with the given own fields, `__proto__` as a field (as JSON.parse makes it), never the prototype. */
function record (entries: Array<[string, unknown]>): Schema {
  const out: Schema = {}
  for (const [name, value] of entries) {
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

class WithToJSON {
  readonly fields: Schema
  constructor (fields: Schema) { this.fields = fields }
  toJSON () { return this.fields }
}

const hostileScalar = fc.constantFrom<unknown>(
  null, Number.NaN, Infinity, -Infinity, 1.5, -0, 0, 7, '', 'text', '3.7', true, false,
  new Date(Date.UTC(2024, 4, 17, 23, 30, 5, 12)), new Date(Date.UTC(1999, 11, 31, 0, 0, 0)), /re+/
)

const typeOf = (schema: Schema): string | undefined => {
  if (typeof schema.type === 'string') return schema.type
  if ('properties' in schema) return 'object'
  if ('items' in schema) return 'array'
  if ('maxLength' in schema) return 'string'
  if ('minimum' in schema) return 'number'
  return undefined
}

/**
 * Values for `schema`. `strict`: only values valid for it, as an anyOf branch must be (deliberate
 * difference: a value invalid for T under anyOf [T, null] makes fast-json-stringify throw "does not
 * match schema definition"; the app coerces it as T, which is what fast-json-stringify does with the
 * nullable rewrite the app's own fallback uses).
 */
function valueOf (schema: Schema, strict: boolean, depth = 0): fc.Arbitrary<unknown> {
  const loose = (valid: fc.Arbitrary<unknown>) => strict || depth > 4
    ? valid
    : fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileScalar })
  if (Array.isArray(schema.anyOf)) {
    const branches = schema.anyOf as Schema[]
    return fc.oneof(...branches.map(branch => branch.type === 'null' ? fc.constant(null) : valueOf(branch, true, depth + 1)))
  }
  if (schema.const !== undefined) return loose(fc.constant(schema.const))
  const nullable = schema.nullable === true
    ? (valid: fc.Arbitrary<unknown>) => fc.oneof(valid, fc.constant(null))
    : (valid: fc.Arbitrary<unknown>) => valid
  switch (typeOf(schema)) {
    case 'string':
      if (schema.format === 'date-time') return nullable(loose(fc.constantFrom('2024-05-17T14:03:27.512345+03:00', '2024-05-17T11:03:27Z')))
      if (schema.format === 'date') return nullable(loose(fc.constant('2024-05-17')))
      if (schema.format === 'time') return nullable(loose(fc.constant('14:03:27+03:00')))
      return nullable(loose(fc.string({ maxLength: strict ? 5 : 8, unit: 'binary' })))
    case 'number': return nullable(loose(fc.double({ noNaN: true, noDefaultInfinity: true })))
    case 'integer': return loose(fc.integer())
    case 'boolean': return loose(fc.boolean())
    case 'null': return loose(fc.constant(null))
    case 'array': return loose(fc.array(valueOf((schema.items ?? {}) as Schema, strict, depth + 1), { maxLength: 3 }))
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>
      const required = new Set(schema.required as string[])
      const declared = Object.entries(properties).map(([name, property]) =>
        fc.tuple(fc.constant(name), valueOf(property, strict, depth + 1), fc.boolean())
          .map(([name, value, present]) =>
            present || (strict && required.has(name)) ? [[name, value] as [string, unknown]] : []))
      const extraAllowed = !strict || schema.additionalProperties !== false
      const undeclared = KEYS.filter(name => !(name in properties))
      const extras = extraAllowed && undeclared.length > 0
        ? fc.array(fc.tuple(fc.constantFrom(...undeclared), fc.oneof(hostileScalar, fc.constant({ nested: 'x' }))), { maxLength: 3 })
        : fc.constant([])
      const strictIds = strict && required.has('id') && !('id' in properties) ? fc.constant([['id', 'x'] as [string, unknown]]) : fc.constant([])
      const fields = fc.tuple(fc.tuple(...declared), extras, strictIds).map(([present, extra, ids]) => {
        const seen = new Set<string>()
        return [...present.flat(), ...ids, ...extra].filter(([name]) => !seen.has(name) && seen.add(name))
      })
      const plain = fields.map(record)
      if (strict) return plain
      // Hostile shapes: a class whose toJSON returns the fields, a null prototype, a Date, an array.
      return loose(fc.oneof(
        { weight: 4, arbitrary: plain },
        { weight: 1, arbitrary: fields.map(entries => new WithToJSON(record(entries))) },
        { weight: 1, arbitrary: fields.map(entries => Object.assign(Object.create(null) as Schema, record(entries))) },
        { weight: 1, arbitrary: fc.constantFrom<unknown>(new Date(0), ['a'], 'text') }
      ))
    }
    default:
      // An open schema: anything JSON.stringify writes the same way twice.
      return loose(fc.jsonValue({ maxDepth: 2 }))
  }
}

const cases = schemaArbitrary.chain(schema =>
  fc.tuple(fc.constant(schema), fc.array(valueOf(schema, false), { minLength: 1, maxLength: 4 })))

t.test('the app writes what fast-json-stringify writes, or both throw', async t => {
  let runs = 0
  let projected = 0
  let threw = 0
  fc.assert(fc.property(cases, ([schema, values]) => {
    const ours = appSerializer(schema)
    const theirs = fastJsonStringify(structuredClone(schema), FJS)
    runs++
    if (ours.projected) projected++
    for (const value of values) {
      const expected = outcome(theirs, value)
      if (expected === 'threw') threw++
      if (outcome(ours.serialize, value) !== expected) return false
    }
    return true
  }), { seed: 21, numRuns: 250 })
  t.ok(projected > runs / 3, `a good part of the schemas take the projection (${projected} of ${runs})`)
  t.ok(threw > 0, `some values are refused by both (${threw})`)
})

t.test('the deliberate differences, by name', async t => {
  const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] }
  t.equal(projectionSerializer(nullableString, {})!(12), '"12"', 'a value invalid for T under anyOf [T, null] is written as T writes it')
  t.throws(() => fastJsonStringify(nullableString, FJS)(12), /does not match schema definition/, 'fast-json-stringify refuses it')
  t.equal(fastJsonStringify(nullableForSerializer(nullableString, {}), FJS)(12), '"12"', 'as it writes it under the nullable rewrite')

  t.throws(() => projectionSerializer({ type: 'integer' }, {})!(12n), TypeError, 'a BigInt as an integer throws')
  t.equal(fastJsonStringify({ type: 'integer' }, FJS)(12n), '12', 'fast-json-stringify writes its digits')

  const hidden = Object.defineProperty({}, 'a', { value: 'hidden', enumerable: false })
  const objectOfA = { type: 'object', properties: { a: { type: 'string' } } }
  t.equal(projectionSerializer(objectOfA, {})!(hidden), '{}', 'a non-enumerable field of a value kept as it is is not written')
  t.equal(fastJsonStringify(objectOfA, FJS)(hidden), '{"a":"hidden"}', 'fast-json-stringify reads it by name')

  t.equal(projectionSerializer({ type: 'array' }, {})!([undefined, () => 1]), '[null,null]', 'undefined and functions in an open list are null')
  t.equal(fastJsonStringify({ type: 'array' }, FJS)([undefined, () => 1]), '[undefined,undefined]', 'fast-json-stringify writes text that is not JSON')

  const schema = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['b'] }
  t.equal(projectionSerializer(schema, {})!({ a: 'x', b: 'y' }), '{"a":"x","b":"y"}', 'members in the order of the value')
  t.equal(fastJsonStringify(schema, FJS)({ a: 'x', b: 'y' }), '{"b":"y","a":"x"}', 'fast-json-stringify writes required ones first')
})
