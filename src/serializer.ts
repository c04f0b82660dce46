// JSON.stringify of a value projected on its schema, else Fastify's own serializer with `anyOf: [T, null]` rewritten
// to a nullable T, so fast-json-stringify does not validate each branch again (docs/performance.md, register:
// Serializer projection). The rewrite is for the serializer only: routes, OpenAPI and validators keep the anyOf.
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'
import { jsonBytes } from './json-bytes.ts'

type SchemaNode = Record<string, unknown>
type SerializerFactory =
  (externalSchemas: Record<string, unknown>, options: unknown) => (route: { schema: unknown }) => unknown

// The copy Fastify itself would use, resolved from Fastify's own location (not a dependency of ours).
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'))
const { SerializerSelector } = fastifyRequire('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory }

// Values, not schemas: left as they are.
const VALUE_KEYS = new Set(['examples', 'default', 'const', 'enum'])
// Keywords fast-json-stringify acts on before it reads `nullable`: a branch with one is left as anyOf.
const COMBINATORS = ['anyOf', 'oneOf', 'allOf', 'if']

function isNullSchema (node: unknown): boolean {
  return typeof node === 'object' && node !== null && Object.keys(node).length === 1 && (node as SchemaNode).type === 'null'
}

/** True when fast-json-stringify honours `nullable` on this branch: one plain type, here or behind its $ref. */
function takesNullable (branch: SchemaNode, shared: Record<string, unknown>): boolean {
  const target = typeof branch.$ref === 'string' ? shared[branch.$ref] as SchemaNode | undefined : branch
  if (target === undefined || typeof target.type !== 'string' || target.type === 'null') return false
  return COMBINATORS.every(keyword => !(keyword in branch) && !(keyword in target))
}

/** The schema with every `anyOf: [T, null]` that fast-json-stringify can write as a nullable T rewritten so. */
export function nullableForSerializer<T> (schema: T, shared: Record<string, unknown>): T {
  if (Array.isArray(schema)) return schema.map(item => nullableForSerializer(item, shared)) as T
  if (typeof schema !== 'object' || schema === null) return schema
  const out: SchemaNode = {}
  for (const [key, value] of Object.entries(schema)) {
    setField(out, key, VALUE_KEYS.has(key) ? value : nullableForSerializer(value, shared))
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

/**
 * Fastify's `schemaController` option: JSON.stringify of the schema's projection where the projection
 * supports the schema, otherwise the default serializer over the rewritten schemas.
 */
export function serializerController (): NonNullable<FastifyServerOptions['schemaController']> {
  const buildDefault = SerializerSelector()
  return {
    compilersFactory: {
      buildSerializer (externalSchemas: Record<string, unknown>, options: unknown) {
        const shared = externalSchemas ?? {}
        const rewritten = Object.fromEntries(
          Object.entries(shared).map(([id, schema]) => [id, nullableForSerializer(schema, shared)])
        )
        const compile = buildDefault(rewritten, options)
        return (route: { schema: unknown }) =>
          projectionSerializer(route.schema, shared) ??
          compile({ ...route, schema: nullableForSerializer(route.schema, shared) })
      }
    }
  } as NonNullable<FastifyServerOptions['schemaController']>
}

/** Copies a value down to what its schema declares; the same value out for what the schema leaves open. */
type Projection = (value: unknown) => unknown

const asIs: Projection = value => value
// Annotations and checks fast-json-stringify does not act on when it writes, and the keywords below.
const OPEN_KEYWORDS = new Set(['description', 'examples', 'title', '$id', 'deprecated', 'readOnly', 'writeOnly', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'enum', 'const', 'type', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', '$ref', 'nullable', 'minProperties', 'maxProperties', '~kind', '~optional', '~readonly'])
// Keywords that make a sibling of `$ref` or `anyOf` a part of the schema (fast-json-stringify merges them).
const STRUCTURAL = ['type', 'properties', 'required', 'additionalProperties', 'items', 'nullable', 'const', 'format', '$ref', 'anyOf']
// fast-json-stringify's type inference for a schema without `type` (inferTypeByKeyword), in its order.
const INFERRED: Array<[string, string[]]> = [
  ['object', ['properties', 'required', 'additionalProperties', 'patternProperties', 'maxProperties', 'minProperties', 'dependencies']],
  ['array', ['items', 'additionalItems', 'maxItems', 'minItems', 'uniqueItems', 'contains']],
  ['string', ['maxLength', 'minLength', 'pattern']],
  ['number', ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum']]
]
const EMPTY_OBJECT = Object.freeze({})
const EMPTY_ARRAY = Object.freeze([])

class Unsupported extends Error {}

function typeOf (node: SchemaNode): unknown {
  if (node.type !== undefined) return node.type
  return INFERRED.find(([, keywords]) => keywords.some(keyword => keyword in node))?.[0]
}

const pad = (n: number) => (n < 10 ? '0' : '') + n
/** A year as fast-json-stringify writes it in four digits, or undefined outside 0-9999. */
const year4 = (year: number) => year >= 0 && year <= 9999 ? String(year).padStart(4, '0') : undefined
/** A Date's local calendar day as fast-json-stringify writes `format: date`. */
function localDate (date: Date): string {
  const year = year4(date.getFullYear())
  if (year === undefined) return new Date(date.getTime() - date.getTimezoneOffset() * 60000).toISOString().slice(0, 10)
  return `${year}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
}
/** A Date's local time of day as fast-json-stringify writes `format: time` (an invalid Date throws). */
function localTime (date: Date): string {
  if (Number.isNaN(date.getTime())) return date.toISOString()
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

/** A string, or what fast-json-stringify writes for a value of another type under a string `format`. */
function formatted (format: string, toString: (date: Date) => string): Projection {
  return value => {
    if (typeof value === 'string') return value
    if (value === null) return ''
    if (value instanceof Date) return toString(value)
    throw new Error(`The value "${String(value)}" cannot be converted to a ${format}.`)
  }
}

/** Scalars are written as fast-json-stringify writes them: coerced to the type, or thrown. */
function scalarProjection (type: string, format: unknown): Projection {
  switch (type) {
    case 'null': return () => null
    case 'boolean': return value => typeof value === 'boolean' ? value : Boolean(value)
    case 'number': return value => {
      const number = typeof value === 'number' ? value : Number(value)
      if (Number.isNaN(number)) throw new Error(`The value "${String(value)}" cannot be converted to a number.`)
      return number === value ? value : number
    }
    case 'integer': return value => {
      if (Number.isInteger(value)) return value
      const integer = Math.trunc(value as number)
      if (!Number.isFinite(integer)) throw new Error(`The value "${String(value)}" cannot be converted to an integer.`)
      return integer
    }
  }
  if (format === 'date-time') return formatted('date-time', date => date.toISOString())
  if (format === 'date') return formatted('date', localDate)
  if (format === 'time') return formatted('time', localTime)
  if (format === 'unsafe') throw new Unsupported('format unsafe')
  return value => {
    if (typeof value === 'string') return value
    if (value === null) return ''
    if (value instanceof Date) return value.toISOString()
    if (value instanceof RegExp) return value.source
    return (value as { toString (): string }).toString()
  }
}

/** Sets a field of a copy; a `__proto__` key is a field, never the copy's prototype. */
function setField (out: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
  else out[name] = value
}

const requiredMissing = (name: string) => new Error(`${JSON.stringify(name)} is required!`)

/**
 * The projection of `schema`, or throws Unsupported for a keyword it does not know (that schema keeps
 * fast-json-stringify). Supported: objects (declared properties, and the others only where
 * `additionalProperties` is true), arrays, scalars, `{}` (anything, as is), `$ref` to a shared schema,
 * `const`, `nullable`, and `anyOf: [T, null]`. A schema without `type` has the type fast-json-stringify
 * infers from its keywords.
 */
function compileProjection (
  node: SchemaNode, shared: Record<string, unknown>, refs: Map<string, Projection>
): Projection {
  if (typeof node === 'boolean') return asIs
  for (const key of Object.keys(node)) if (!OPEN_KEYWORDS.has(key)) throw new Unsupported(key)
  if (typeof node.$ref === 'string') {
    if (STRUCTURAL.some(keyword => keyword !== '$ref' && keyword in node)) throw new Unsupported('$ref with siblings')
    const id = node.$ref.replace(/#$/, '')
    const known = refs.get(id)
    if (known !== undefined) return known
    const target = shared[id] as SchemaNode | undefined
    if (target === undefined) throw new Unsupported(`$ref ${id}`)
    // Registered before compiling, so a recursive schema refers to itself lazily.
    let compiled: Projection = asIs
    refs.set(id, value => compiled(value))
    compiled = compileProjection(target, shared, refs)
    return compiled
  }
  if (node.anyOf !== undefined) {
    const branches = node.anyOf as SchemaNode[]
    const nullAt = Array.isArray(branches) ? branches.findIndex(isNullSchema) : -1
    if (branches.length !== 2 || nullAt === -1) throw new Unsupported('anyOf')
    if (STRUCTURAL.some(keyword => keyword !== 'anyOf' && keyword in node)) throw new Unsupported('anyOf with siblings')
    // fast-json-stringify picks the first branch valid for the value: one without a type takes null too.
    if (!takesNullable(branches[1 - nullAt]!, shared)) throw new Unsupported('anyOf of an untyped branch')
    const branch = compileProjection(branches[1 - nullAt]!, shared, refs)
    return value => value === null ? null : branch(value)
  }
  if (node.nullable === true) {
    const { nullable: _, ...rest } = node
    const inner = compileProjection(rest, shared, refs)
    return value => value === null ? null : inner(value)
  }
  const type = typeOf(node)
  if (node.const !== undefined) {
    // fast-json-stringify writes the constant, whatever the value.
    const constant = node.const
    if (typeof constant === 'object' || Array.isArray(type)) throw new Unsupported('const')
    return () => constant
  }
  if (type === undefined) return asIs
  if (typeof type !== 'string') throw new Unsupported(`type ${String(type)}`)
  if (type === 'array') return arrayProjection(node, shared, refs)
  if (type === 'object') return objectProjection(node, shared, refs)
  return scalarProjection(type, node.format)
}

function arrayProjection (
  node: SchemaNode, shared: Record<string, unknown>, refs: Map<string, Projection>
): Projection {
  if (Array.isArray(node.items)) throw new Unsupported('tuple items')
  const items = node.items === undefined ? asIs : compileProjection(node.items as SchemaNode, shared, refs)
  const code = node.items === undefined ? KEEPS_ANY : keepsCode(node.items as SchemaNode, items, shared)
  return value => {
    if (value === null) return EMPTY_ARRAY
    if (!Array.isArray(value)) throw new TypeError('The value does not match the array schema.')
    if (code === KEEPS_ANY) return value
    // Copied only from the first item its projection changes: a list that meets the schema is kept.
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (keeps(code, item)) continue
      const projected = items(item)
      if (projected === item) continue
      const out = value.slice(0, i)
      out.push(projected)
      for (let j = i + 1; j < value.length; j++) out.push(items(value[j]))
      return out
    }
    return value
  }
}

const NOT_YET = Symbol('not projected yet')

// What a value must be for its projection to return it as it is: checked inline, with no call.
const KEEPS_NONE = 0
const KEEPS_ANY = 1
const KEEPS_STRING = 2
const KEEPS_BOOLEAN = 3
const KEEPS_NUMBER = 4
const KEEPS_INTEGER = 5
const KEEPS_BY_TYPE: Record<string, number> = {
  string: KEEPS_STRING, boolean: KEEPS_BOOLEAN, number: KEEPS_NUMBER, integer: KEEPS_INTEGER
}
/** Added to a code: null is kept too. */
const OR_NULL = 8

/** The KEEPS_ code of a compiled schema (its projection is `projection`). */
function keepsCode (schema: SchemaNode, projection: Projection, shared: Record<string, unknown>): number {
  if (projection === asIs) return KEEPS_ANY
  if (typeof schema !== 'object' || schema === null) return KEEPS_NONE
  if (typeof schema.$ref === 'string') {
    const target = shared[schema.$ref.replace(/#$/, '')] as SchemaNode | undefined
    return target === undefined || typeof target.$ref === 'string' ? KEEPS_NONE : keepsCode(target, projection, shared)
  }
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as SchemaNode[]).find(node => !isNullSchema(node))!
    const code = keepsCode(branch, projection, shared)
    return code === KEEPS_NONE ? KEEPS_NONE : code | OR_NULL
  }
  if (schema.const !== undefined) return KEEPS_NONE
  const code = KEEPS_BY_TYPE[String(schema.type)] ?? KEEPS_NONE
  return schema.nullable === true && code !== KEEPS_NONE ? code | OR_NULL : code
}

/** True when a projection of code `code` returns `value` as it is. */
function keeps (code: number, value: unknown): boolean {
  if (value === null) return (code & OR_NULL) !== 0
  switch (code & 7) {
    case KEEPS_ANY: return true
    case KEEPS_STRING: return typeof value === 'string'
    case KEEPS_BOOLEAN: return typeof value === 'boolean'
    // NaN is thrown; every other number (Infinity too: JSON writes null for it, as fast-json-stringify does) is kept.
    case KEEPS_NUMBER: return typeof value === 'number' && !Number.isNaN(value)
    case KEEPS_INTEGER: return Number.isInteger(value)
    default: return false
  }
}

function objectProjection (
  node: SchemaNode, shared: Record<string, unknown>, refs: Map<string, Projection>
): Projection {
  if (node.additionalProperties !== undefined && typeof node.additionalProperties !== 'boolean') throw new Unsupported('additionalProperties')
  const entries = Object.entries((node.properties ?? {}) as Record<string, SchemaNode>)
  const names = entries.map(([name]) => name)
  const projections = entries.map(([, schema]) => compileProjection(schema, shared, refs))
  const requiredNames = new Set((node.required ?? []) as string[])
  const required = names.map(name => requiredNames.has(name))
  // Required but not declared: checked, never written (as fast-json-stringify).
  const requiredOnly = [...requiredNames].filter(name => !names.includes(name))
  const codes = entries.map(([, schema], i) => keepsCode(schema, projections[i]!, shared))
  // A declared name Object.prototype has (`constructor`): the source has it even when it does not.
  const inherited = names.map(name => name in Object.prototype)
  const declared = new Set(names)
  const open = node.additionalProperties === true
  const count = names.length

  /** The copy down to the declared fields; the first `kept` are unchanged, field `kept` projects to `next`. */
  const copy = (source: Record<string, unknown>, kept: number, next: unknown): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const field = source[names[i]!]
      if (field === undefined) {
        if (required[i]) throw requiredMissing(names[i]!)
        continue
      }
      setField(out, names[i]!, i < kept ? field : i === kept && next !== NOT_YET ? next : projections[i]!(field))
    }
    for (const name of requiredOnly) if (source[name] === undefined) throw requiredMissing(name)
    if (open) {
      for (const name of Object.keys(source)) {
        const field = source[name]
        if (declared.has(name) || field === undefined || typeof field === 'function' || typeof field === 'symbol') continue
        setField(out, name, field)
      }
    }
    return out
  }

  /** A value that is not a plain object: null is {}, another is read as an object (a string's indices). */
  const other = (value: unknown): Record<string, unknown> => {
    if (value === null) return EMPTY_OBJECT
    if (typeof value === 'object') return copy(value as Record<string, unknown>, 0, NOT_YET)
    // Undefined has no fields to read: an error wherever fast-json-stringify would read one.
    if (value === undefined && (count > 0 || requiredOnly.length > 0 || open)) throw new TypeError('Cannot read the fields of undefined')
    return copy(Object(value) as Record<string, unknown>, 0, NOT_YET)
  }

  // An object that meets the schema is kept as it is: only one with an undeclared field (anywhere) is copied.
  return value => {
    // As fast-json-stringify: toJSON() is honoured, null is {}, another value is read as an object.
    if (typeof value !== 'object' || value === null) return other(value)
    const source = value as Record<string, unknown>
    if (typeof source.toJSON === 'function') return other(source.toJSON())
    const prototype = Object.getPrototypeOf(source) as unknown
    if (prototype !== Object.prototype && prototype !== null) return copy(source, 0, NOT_YET)
    for (let i = 0; i < count; i++) {
      const field = source[names[i]!]
      if (field === undefined) {
        // As fast-json-stringify: a required field missing is a bug of ours, not an answer.
        if (required[i]) throw requiredMissing(names[i]!)
        continue
      }
      if (keeps(codes[i]!, field)) {
        if (inherited[i] && !Object.hasOwn(source, names[i]!)) return copy(source, i, NOT_YET)
        continue
      }
      const projected = projections[i]!(field)
      if (projected !== field || (inherited[i] && !Object.hasOwn(source, names[i]!))) return copy(source, i, projected)
    }
    for (const name of requiredOnly) if (source[name] === undefined) throw requiredMissing(name)
    if (!open) {
      for (const name in source) {
        if (!declared.has(name) && source[name] !== undefined) return copy(source, count, NOT_YET)
      }
    }
    return source
  }
}

/**
 * A serializer of `schema` as `JSON.stringify` of its projection: the JSON fast-json-stringify writes (undeclared
 * fields dropped, values coerced or thrown the same; deliberate differences in docs/performance.md) at a third of
 * the allocation. Undefined when the schema uses a keyword the projection does not support.
 */
export function projectionSerializer (
  schema: unknown, shared: Record<string, unknown>
): ((value: unknown) => string) | undefined {
  const project = projectionOf(schema, shared)
  return project === undefined ? undefined : value => JSON.stringify(project(value))
}

function projectionOf (schema: unknown, shared: Record<string, unknown>): Projection | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined
  try {
    return compileProjection(schema as SchemaNode, shared, new Map())
  } catch (error) {
    if (error instanceof Unsupported) return undefined
    throw error
  }
}

/**
 * The bytes Fastify's serializer would write for a route answering `schema`, for a route that serializes its
 * answer itself (to share the bytes): projectionSerializer's JSON as UTF-8 (json-bytes.ts). Throws at start-up
 * when the projection does not support the schema.
 */
export function routeSerializer<T> (schema: unknown, shared: Record<string, unknown>): (value: T) => Buffer {
  const project = projectionOf(schema, shared)
  if (project === undefined) throw new TypeError('routeSerializer() needs a schema the projection supports')
  return value => jsonBytes(project(value))
}
