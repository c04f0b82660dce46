// Fastify serializes and documents with shared schemas (plugins/app/shared-schemas/ adds them): each resource
// with a `$id` is added once and referenced by `$ref` elsewhere. These are the $id/$ref helpers routes, the plugins
// and the document share.
import type { TSchema } from 'typebox'
import { VALUE_KEYWORDS } from '../../../json-schema.ts'

/** Replaces every nested subschema that has a `$id` by a `$ref` to it; the top level keeps its own. */
export function toRefs<T> (schema: T, top = true): T {
  if (Array.isArray(schema)) return schema.map(item => toRefs(item, false)) as T
  if (typeof schema !== 'object' || schema === null) return schema
  const source = schema as Record<string, unknown>
  if (!top && typeof source.$id === 'string') return { $ref: source.$id } as T
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(source)) {
    out[key] = VALUE_KEYWORDS.has(key) ? value : toRefs(value, false)
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
      if (!VALUE_KEYWORDS.has(key)) walk(value)
    }
  }
  walk(roots)
  return [...found.values()]
}
