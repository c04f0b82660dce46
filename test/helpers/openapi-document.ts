// The committed openapi.yaml read alongside values it describes: its component schemas, the schema of each place in
// a value (references followed, the branch of a `T | null` the value takes), and the kind of date a string schema
// states (schemas/common.ts: IsoDateTime's format, CalendarDate's and LocalDateTime's descriptions).
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { CalendarDate, LocalDateTime } from '../../schemas/common.ts'

export type Json = Record<string, any>

export const components: Record<string, Json> =
  parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')).components.schemas

/** The schema itself, or the component a `$ref` names. */
export function resolve (node: Json): Json {
  return typeof node.$ref === 'string' ? components[node.$ref.replace('#/components/schemas/', '')]! : node
}

/** The schema `value` meets at `node`: through references and into the non-null branch of a `T | null`. */
export function schemaOf (node: Json, value: unknown): Json | null {
  const resolved = resolve(node)
  if (!Array.isArray(resolved.anyOf)) return resolved
  const branches = resolved.anyOf.filter((branch: Json) => branch.type !== 'null')
  if (branches.length !== 1) throw new Error(`an anyOf that is not T | null: ${JSON.stringify(resolved)}`)
  return value === null ? null : schemaOf(branches[0], value)
}

/**
 * Calls `visit` with every place of `value` (a JSON Pointer) and the schema it meets there, down through
 * properties and items; not into what the document gives no shape.
 */
export function walk (node: Json, value: unknown, visit: (path: string, schema: Json, value: unknown) => void,
  path = ''): void {
  const schema = schemaOf(node, value)
  if (schema === null) return
  visit(path, schema, value)
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => walk(schema.items, item, visit, `${path}/${i}`))
  } else if (typeof value === 'object' && value !== null && schema.properties !== undefined) {
    for (const [name, property] of Object.entries(schema.properties as Json)) {
      if (name in value) walk(property, (value as Json)[name], visit, `${path}/${name}`)
    }
  }
}

/** The kinds of date the document names, as docs/mobile.md's Dates section parses them. */
export type DateKind = 'date' | 'date-time' | 'local-date-time'

/** The kind of date a string schema states, if any. */
export function dateKind (schema: Json): DateKind | undefined {
  if (schema.format === 'date-time') return 'date-time'
  if (schema.description === (CalendarDate as Json).description) return 'date'
  if (schema.description === (LocalDateTime as Json).description) return 'local-date-time'
  return undefined
}

/** Looks like a date: how a test finds the date strings of an answer without trusting the document. */
export const DATE_LIKE = /^\d{4}-\d{2}-\d{2}/
