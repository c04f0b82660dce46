// Fastify serializes and documents with shared schemas: each resource with a `$id` is added once and
// referenced by `$ref` elsewhere, which keeps a nested resource used twice (a Breadcrumb in two lists)
// from clashing in fast-json-stringify, and names the OpenAPI components after the `$id`s.
import fp from 'fastify-plugin'
import type { TSchema } from 'typebox'
import { ErrorBody } from '../../../schemas/errors.ts'

/** Replaces every nested subschema that has a `$id` by a `$ref` to it; the top level keeps its own. */
export function toRefs<T> (schema: T, top = true): T {
  if (Array.isArray(schema)) return schema.map(item => toRefs(item, false)) as T
  if (typeof schema !== 'object' || schema === null) return schema
  const source = schema as Record<string, unknown>
  if (!top && typeof source.$id === 'string') return { $ref: source.$id } as T
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(source)) {
    // Values, not schemas: left as they are.
    out[key] = key === 'examples' || key === 'default' || key === 'const' || key === 'enum'
      ? value
      : toRefs(value, false)
  }
  return out as T
}

/**
 * A reference to a shared schema that keeps its static type, for route `response` schemas.
 * The schema must be one of `sharedSchemas`.
 */
export function ref<T extends TSchema> (schema: T): T {
  const id = (schema as { $id?: unknown }).$id
  if (typeof id !== 'string') throw new TypeError('ref() needs a schema with a $id')
  return { $ref: id } as unknown as T
}

/** Every schema with a `$id` that a route answers with, nested ones included. */
export function collectShared (roots: TSchema[]): TSchema[] {
  const found = new Map<string, TSchema>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) { node.forEach(walk); return }
    if (typeof node !== 'object' || node === null) return
    const id = (node as { $id?: unknown }).$id
    if (typeof id === 'string' && !found.has(id)) found.set(id, node as TSchema)
    for (const [key, value] of Object.entries(node)) {
      if (key !== 'examples' && key !== 'default' && key !== 'const' && key !== 'enum') walk(value)
    }
  }
  walk(roots)
  return [...found.values()]
}

export interface SharedSchemasOptions { roots: TSchema[] }

export default fp<SharedSchemasOptions>(async function sharedSchemas (fastify, { roots }) {
  for (const schema of collectShared([ErrorBody, ...roots])) fastify.addSchema(toRefs(schema))
}, { name: 'shared-schemas' })
