// Bounded nesting of upstream answers: JSON.stringify and the console's redaction recurse, so a deep body would
// throw RangeError (a 500). The contract check descends only where the schema does, so on the hot path only the
// schema's pass-through nodes (Type.Unknown, open objects) are scanned; the console scans the whole body.
import type { TSchema } from 'typebox'

/** Deepest nesting of objects and arrays accepted in an upstream answer; real answers nest about 6 deep. */
export const MAX_DEPTH = 64

/** A path from the answer's root to a pass-through node: property names, `*` for every array item. */
export type SchemaPath = readonly string[]

type SchemaNode = Record<string, unknown>

const STRUCTURAL = ['type', 'anyOf', 'allOf', 'oneOf', 'properties', 'items', '$ref', 'const', 'enum', 'not']

/** True for a node whose contents the schema does not describe: any value passes it whole. */
function isPassThrough (node: SchemaNode): boolean {
  if (node.type === 'object' && node.additionalProperties === true) return true
  return STRUCTURAL.every(keyword => !(keyword in node))
}

/** Every path at which `schema` passes a value through undescribed, computed once per schema. */
export function passThroughPaths (schema: TSchema): SchemaPath[] {
  const paths: SchemaPath[] = []
  const visit = (node: SchemaNode, path: string[]) => {
    if (isPassThrough(node)) {
      paths.push(path)
      return
    }
    for (const keyword of ['anyOf', 'allOf', 'oneOf'] as const) {
      const branches = node[keyword]
      if (Array.isArray(branches)) for (const branch of branches) visit(branch as SchemaNode, path)
    }
    const properties = node.properties as Record<string, SchemaNode> | undefined
    if (properties !== undefined) for (const [name, child] of Object.entries(properties)) visit(child, [...path, name])
    const items = node.items as SchemaNode | undefined
    if (items !== undefined && !Array.isArray(items)) visit(items, [...path, '*'])
  }
  visit(schema as SchemaNode, [])
  // anyOf branches may name one path twice.
  return [...new Map(paths.map(path => [path.join('/'), path])).values()]
}

/** True when `value` nests objects and arrays at most `limit` levels deep. Recursion is bounded by `limit`. */
export function withinDepth (value: unknown, limit: number = MAX_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (limit <= 0) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!withinDepth(value[i], limit - 1)) return false
    return true
  }
  for (const key in value) if (!withinDepth((value as Record<string, unknown>)[key], limit - 1)) return false
  return true
}

/**
 * True when every pass-through subtree of a value that passed its schema's check is within the limit,
 * counting the levels above it. The check has vouched for the structure along each path.
 */
export function passThroughWithinDepth (
  value: unknown, paths: readonly SchemaPath[], limit: number = MAX_DEPTH
): boolean {
  for (const path of paths) if (!alongWithin(value, path, 0, limit)) return false
  return true
}

function alongWithin (value: unknown, path: SchemaPath, at: number, limit: number): boolean {
  if (at === path.length) return withinDepth(value, limit - at)
  if (typeof value !== 'object' || value === null) return true
  const segment = path[at]!
  if (segment === '*') {
    if (!Array.isArray(value)) return true
    for (let i = 0; i < value.length; i++) if (!alongWithin(value[i], path, at + 1, limit)) return false
    return true
  }
  return alongWithin((value as Record<string, unknown>)[segment], path, at + 1, limit)
}

/** The values at the pass-through paths of a checked answer, each with the index of its path. */
export function passThroughValues (value: unknown, paths: readonly SchemaPath[]): Array<[number, unknown]> {
  const found: Array<[number, unknown]> = []
  const along = (node: unknown, index: number, at: number): void => {
    const path = paths[index]!
    if (at === path.length) {
      found.push([index, node])
      return
    }
    if (typeof node !== 'object' || node === null) return
    if (path[at] === '*') {
      if (Array.isArray(node)) for (const item of node) along(item, index, at + 1)
      return
    }
    along((node as Record<string, unknown>)[path[at]!], index, at + 1)
  }
  for (let i = 0; i < paths.length; i++) along(value, i, 0)
  return found
}
