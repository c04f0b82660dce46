// The profile's bytes, written by fast-json-stringify (the compiler Fastify uses for every response schema) from
// the route's schema, so undeclared fields are dropped as on any route. Two measured exceptions (docs/performance.md,
// register: Serializer nullable rewrite, Serializer bytes): each `anyOf: [T, null]` is given to the compiler as a
// nullable T (it would run an ajv validator of each branch on every write), and a profile is written field by field
// (a long list item by item), so that only the pieces with a wide character are flattened as two-byte strings.
import fastJsonStringify from 'fast-json-stringify'
import { VALUE_KEYWORDS } from './json-schema.ts'

type SchemaNode = Record<string, unknown>
type Write = (value: unknown) => string

/** A list with this many items or more is written item by item. */
export const PIECEWISE_ITEMS = 64

// Keywords fast-json-stringify acts on before it reads `nullable`: a branch with one is left as anyOf.
const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'if']

/** fast-json-stringify's writer of `schema`, with the shared schemas its `$ref`s name. */
const compile = (schema: unknown, shared: Record<string, unknown>) => fastJsonStringify(
  schema as fastJsonStringify.Schema, { schema: shared as Record<string, fastJsonStringify.Schema> }) as Write

const isObject = (node: unknown): node is SchemaNode => typeof node === 'object' && node !== null
const isNullSchema = (node: unknown) => isObject(node) && Object.keys(node).length === 1 && node.type === 'null'
const resolved = (node: SchemaNode, shared: Record<string, unknown>) =>
  typeof node.$ref === 'string' ? shared[node.$ref.replace(/#$/, '')] as SchemaNode | undefined : node

/** True when fast-json-stringify honours `nullable` on this branch: one plain type, here or behind its $ref. */
function takesNullable (branch: SchemaNode, shared: Record<string, unknown>): boolean {
  const target = resolved(branch, shared)
  if (target === undefined || typeof target.type !== 'string' || target.type === 'null') return false
  return COMBINATORS.every(keyword => !(keyword in branch) && !(keyword in target))
}

/** The schema with every `anyOf: [T, null]` that fast-json-stringify can write as a nullable T rewritten so. */
export function nullableForSerializer<T> (schema: T, shared: Record<string, unknown>): T {
  if (Array.isArray(schema)) return schema.map(item => nullableForSerializer(item, shared)) as T
  if (!isObject(schema)) return schema
  const out: SchemaNode = {}
  for (const [key, value] of Object.entries(schema)) {
    out[key] = VALUE_KEYWORDS.has(key) ? value : nullableForSerializer(value, shared)
  }
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.length === 2) {
    const nullAt = anyOf.findIndex(isNullSchema)
    const branch = anyOf[1 - nullAt] as SchemaNode
    if (nullAt !== -1 && takesNullable(branch, shared)) {
      const { anyOf: _, ...siblings } = out
      return { ...siblings, ...branch, nullable: true } as T
    }
  }
  return out as T
}

interface Field { name: string, prefix: string, write: Write, item: Write | undefined }

// The keywords of an object schema whose JSON is its declared fields in order, each written by its own schema.
const PLAIN_OBJECT = new Set(['type', 'properties', 'required', 'additionalProperties', '$id', 'title', 'description',
  'examples'])

/**
 * The fields of an object schema that fast-json-stringify writes in declared order whatever the value (all required,
 * no default, nothing but declared fields), each with its writer and, for a list, its items' writer; undefined for
 * any other schema, which is always written whole.
 */
function piecewiseFields (schema: SchemaNode, shared: Record<string, unknown>): Field[] | undefined {
  const target = resolved(schema, shared)
  if (target === undefined || target.type !== 'object' || target.additionalProperties !== false) return undefined
  if (!Object.keys(target).every(key => PLAIN_OBJECT.has(key))) return undefined
  const properties = Object.entries((target.properties ?? {}) as Record<string, SchemaNode>)
  const required = new Set((target.required ?? []) as string[])
  const fields: Field[] = []
  for (const [name, property] of properties) {
    const own = resolved(property, shared)
    if (!required.has(name) || own === undefined || 'default' in own) return undefined
    const list = own.type === 'array' && isObject(own.items) && !('nullable' in own) && !('default' in own.items)
    fields.push({
      name,
      // What comes before its value: the object's brace or the comma, and the name.
      prefix: `${fields.length === 0 ? '{' : ','}${JSON.stringify(name)}:`,
      write: compile(property, shared),
      item: list ? compile(own.items, shared) : undefined
    })
  }
  return fields
}

/** A value fast-json-stringify reads field by field: no toJSON() of its own, an ordinary prototype. */
function isPlainObject (value: unknown): value is Record<string, unknown> {
  if (!isObject(value) || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value) as unknown
  return (prototype === Object.prototype || prototype === null) && typeof value.toJSON !== 'function'
}

/**
 * The bytes Fastify's serializer writes for a route answering `schema` (shared: the app's shared schemas), for a
 * route that serializes its answer itself to share the bytes.
 */
export function routeSerializer<T> (schema: unknown, shared: Record<string, unknown>): (value: T) => Buffer {
  const schemas = Object.fromEntries(
    Object.entries(shared).map(([id, node]) => [id, nullableForSerializer(node, shared)]))
  const top = nullableForSerializer(schema, shared) as SchemaNode
  const whole = compile(top, schemas)
  const fields = piecewiseFields(top, schemas)
  if (fields === undefined || fields.length === 0) return value => Buffer.from(whole(value))
  // Field by field even with short lists: one string of the whole profile is flattened two bytes a character when any
  // field holds a wide one (a Cyrillic name), while the pieces of the cars, most of the bytes, stay one-byte.
  return value => {
    if (!isPlainObject(value)) return Buffer.from(whole(value))
    const pieces: string[] = []
    for (const field of fields) {
      const member = value[field.name]
      if (member === undefined) throw new Error(`${JSON.stringify(field.name)} is required!`)
      pieces.push(field.prefix)
      if (!isLong(field, member)) {
        pieces.push(field.write(member))
        continue
      }
      for (let i = 0; i < member.length; i++) pieces.push(i === 0 ? '[' : ',', field.item!(member[i]))
      pieces.push(']')
    }
    pieces.push('}')
    return write(pieces)
  }
}

function isLong (field: Field, value: unknown): value is unknown[] & { length: number } {
  return field.item !== undefined && Array.isArray(value) && value.length >= PIECEWISE_ITEMS
}

/** The pieces as UTF-8 in one Buffer of their exact length: each stays one-byte unless it holds a wide character. */
function write (pieces: readonly string[]): Buffer {
  let length = 0
  for (const piece of pieces) length += Buffer.byteLength(piece)
  const out = Buffer.allocUnsafe(length)
  let at = 0
  for (const piece of pieces) at += out.write(piece, at)
  return out
}
