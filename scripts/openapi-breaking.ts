// `npm run openapi:breaking [RELEASED] [CURRENT]` (two document paths): compares the current openapi.yaml with the
// released contract (contracts/released/openapi.yaml) and exits 1 naming each change that would break an
// installed app; additions pass. api-smart-diff classifies the changes; the few rules below cover what its
// OpenAPI 3.1 rules let through (docs/api.md, "The released contract").
import { readFile } from 'node:fs/promises'
import { apiDiff, type Diff } from 'api-smart-diff'
import { parse } from 'yaml'

export const RELEASED_FILE = new URL('../contracts/released/openapi.yaml', import.meta.url)
export const CURRENT_FILE = new URL('../openapi.yaml', import.meta.url)

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null

/**
 * `type: [x, 'null']` rewritten as `anyOf: [{ type: x }, { type: 'null' }]`, the form TypeBox writes: the
 * library classifies a null branch added to an anyOf, but reports nothing for a 'null' added to a type list.
 */
function normalized (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalized)
  if (!isObject(node)) return node
  const out: Json = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, normalized(value)]))
  const type = out.type
  if (Array.isArray(type) && type.includes('null') && type.length > 1) {
    const rest = type.filter(name => name !== 'null')
    const { type: _, ...others } = out
    return { anyOf: [{ ...others, type: rest.length === 1 ? rest[0] : rest }, { type: 'null' }] }
  }
  return out
}

/** `paths / <path> / <method> / responses / <status> / content / <type> / schema / ...` */
const inResponseSchema = (path: Diff['path']) => path[0] === 'paths' && path[3] === 'responses' && path[7] === 'schema'
const typeSet = (value: unknown) => new Set(Array.isArray(value) ? value : [value])

/** The library's verdict, or ours where its rules let a break through. */
function breaks (diff: Diff): string | undefined {
  const { path, action } = diff
  const last = path.at(-1)
  // A response type that now admits another type (boolean to string): the library reverses its request rule
  // for responses and calls every type change there non-breaking.
  if (inResponseSchema(path) && action === 'replace' && last === 'type') {
    const was = typeSet(diff.before)
    if ([...typeSet(diff.after)].some(name => !was.has(name))) {
      const change = `from ${String(diff.before)} to ${String(diff.after)}`
      return `[Changed] type of ${fieldOf(path)} ${change} in Response ${String(path[4])}`
    }
  }
  // An enum value a response no longer gives: an app that branches on it never sees it again.
  if (inResponseSchema(path) && action === 'remove' && path.at(-2) === 'enum') {
    return `[Removed] enum value ${JSON.stringify(diff.before)} of ${fieldOf(path)} in Response ${String(path[4])}`
  }
  // A parameters list added to an operation that had none: the library calls it an annotation.
  if (path[0] === 'paths' && path.length === 4 && last === 'parameters' && action === 'add') {
    const required = (Array.isArray(diff.after) ? diff.after : []).filter(p => isObject(p) && p.required === true)
    if (required.length > 0) {
      return `[Added] required ${required.map(p => `${String(p.in)} parameter \`${String(p.name)}\``).join(', ')}`
    }
  }
  if (diff.type !== 'breaking') return undefined
  // The library's wording where it says less than what the app meets.
  if (inResponseSchema(path) && action === 'add' && path.at(-2) === 'anyOf' && isObject(diff.after) &&
    diff.after.type === 'null') {
    return `[Made nullable] ${fieldOf(path)} in Response ${String(path[4])}`
  }
  if (path.at(-2) === 'required' && typeof (diff.before ?? diff.after) === 'string') {
    const field = fieldOf([...path.slice(0, -2), 'properties', String(diff.before ?? diff.after)])
    return inResponseSchema(path)
      ? `[Made optional] ${field} in Response ${String(path[4])}`
      : `[Made required] ${field} in the request`
  }
  const description = diff.description?.trim() ?? ''
  return description.startsWith('[') ? description : `[${action}] ${path.slice(3).join('.')}`
}

/** The response field a schema path points at: `client.is_staff`, `degraded[]`. */
function fieldOf (path: Diff['path']): string {
  const names: string[] = []
  const start = inResponseSchema(path) ? 8 : path.indexOf('schema') + 1
  for (let i = Math.max(start, 1); i < path.length; i++) {
    if (path[i - 1] === 'properties') names.push(String(path[i]))
    else if (path[i] === 'items' && names.length > 0) names[names.length - 1] += '[]'
  }
  return names.length > 0 ? `\`${names.join('.')}\`` : 'the body'
}

/** Every breaking change from `released` to `current`, one line each, prefixed by its operation. */
export function breakingChanges (released: unknown, current: unknown): string[] {
  const lines = new Set<string>()
  // Only the operations: the library reports a component's change again in every operation using it,
  // where it knows whether that is a request or a response.
  for (const diff of apiDiff(normalized(released), normalized(current))) {
    if (diff.path[0] !== 'paths') continue
    const text = breaks(diff)
    if (text === undefined) continue
    const operation = diff.path.length >= 3 ? `${String(diff.path[2]).toUpperCase()} ${String(diff.path[1])}` : 'paths'
    lines.add(text.includes(`operation ${operation}`) ? text : `${operation}: ${text}`)
  }
  return [...lines]
}

export async function readDocument (file: URL | string): Promise<unknown> {
  return parse(await readFile(file, 'utf8'))
}

if (import.meta.main) {
  const [releasedFile = RELEASED_FILE, currentFile = CURRENT_FILE] = process.argv.slice(2)
  const found = breakingChanges(await readDocument(releasedFile), await readDocument(currentFile))
  if (found.length > 0) {
    process.stderr.write(`openapi.yaml breaks the released contract in ${found.length} place(s):\n` +
      found.map(line => `  - ${line}\n`).join('') +
      'A deliberate break needs a new version of the route; see docs/api.md, "The released contract".\n')
    process.exitCode = 1
  } else {
    process.stdout.write('openapi.yaml keeps the released contract (contracts/released/openapi.yaml)\n')
  }
}
