// Compiled TypeBox validators for every registry schema, built once when the client is created.
import { Compile, type Validator } from 'typebox/compile'
import type { TSchema } from 'typebox'
import { passThroughPaths, type SchemaPath } from './depth.ts'
import { useFastFormats } from './formats.ts'
import { operations, operationNames, type OperationName } from '../../../schemas/operations.ts'
import { pointerToken } from '../../json-schema.ts'

export interface ContractError { path: string, message: string }

/** At most this many violations are reported per answer: enough to diagnose, bounded in work. */
const MAX_CONTRACT_ERRORS = 20

/** A compiled check that lists what is wrong as JSON-pointer paths. */
export interface ContractCheck {
  check (value: unknown): boolean
  errors (value: unknown, limit?: number): ContractError[]
  /** Where the schema passes values through undescribed (their depth is not bounded by the schema). */
  passThrough: readonly SchemaPath[]
}

type SchemaNode = Record<string, unknown>

/** The JSON kind of a value, as a schema's `type` names it. */
function kindOf (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value === 'object' ? 'object' : typeof value
}

function kindMatches (node: SchemaNode, value: unknown): boolean {
  const type = node.type
  if (typeof type !== 'string') return true
  const kind = kindOf(value)
  return type === kind || (type === 'integer' && kind === 'number')
}

/**
 * The first violations of `value`, found by descending the schema with compiled checks of each node:
 * the work is about one check of the value, whatever its size. TypeBox's own Errors() walks every item
 * of a wrong array (a 450,000-item one blocked the event loop for half a second) before any limit applies.
 * Recursion follows the schema, never the value, so it is bounded by the schema's depth.
 */
function createErrorWalker (schema: TSchema): (value: unknown, limit: number) => ContractError[] {
  // One compiled validator per schema node, compiled when first needed (only broken answers need any).
  const validators = new Map<SchemaNode, Validator>()
  const validatorOf = (node: SchemaNode): Validator => {
    let validator = validators.get(node)
    if (validator === undefined) {
      validator = Compile(node as TSchema)
      validators.set(node, validator)
    }
    return validator
  }

  /** The message of a node that fails here rather than below: TypeBox's, when the value is a scalar. */
  function leafMessage (node: SchemaNode, value: unknown): string {
    if (!kindMatches(node, value)) return `must be ${String(node.type)}`
    if (typeof value !== 'object' || value === null) return validatorOf(node).Errors(value)[0]?.message ?? 'is invalid'
    return 'does not match the schema'
  }

  function walk (node: SchemaNode, value: unknown, path: string, out: Map<string, string>, limit: number): void {
    if (out.size >= limit || validatorOf(node).Check(value)) return
    const before = out.size
    const branches = node.anyOf
    if (Array.isArray(branches)) {
      // The branch of the value's own kind is the one the upstream meant (Nullable(T): T for an object).
      const meant = (branches as SchemaNode[]).filter(branch => kindMatches(branch, value))
      if (meant.length === 1) walk(meant[0]!, value, path, out, limit)
    } else if (node.type === 'object' && kindOf(value) === 'object') {
      const object = value as Record<string, unknown>
      const properties = (node.properties ?? {}) as Record<string, SchemaNode>
      for (const name of (node.required ?? []) as string[]) {
        if (out.size >= limit) return
        if (!(name in object)) out.set(`${path}/${pointerToken(name)}`, 'is required')
      }
      for (const [name, child] of Object.entries(properties)) {
        if (out.size >= limit) return
        if (name in object) walk(child, object[name], `${path}/${pointerToken(name)}`, out, limit)
      }
      if (node.additionalProperties === false) {
        for (const name in object) {
          if (out.size >= limit) return
          if (!(name in properties)) out.set(`${path}/${pointerToken(name)}`, 'is not allowed')
        }
      }
    } else if (node.type === 'array' && Array.isArray(value) && typeof node.items === 'object' && node.items !== null) {
      const items = node.items as SchemaNode
      const list: unknown[] = value
      for (let i = 0; i < list.length && out.size < limit; i++) walk(items, list[i], `${path}/${i}`, out, limit)
    }
    if (out.size === before && out.size < limit) out.set(path === '' ? '/' : path, leafMessage(node, value))
  }

  return (value, limit) => {
    const out = new Map<string, string>()
    walk(schema as SchemaNode, value, '', out, limit)
    return [...out].map(([path, message]) => ({ path, message }))
  }
}

export function compileContract (schema: TSchema): ContractCheck {
  const validator: Validator = Compile(schema)
  const walkErrors = createErrorWalker(schema)
  return {
    check: value => validator.Check(value),
    errors: (value, limit = MAX_CONTRACT_ERRORS) => walkErrors(value, Math.min(limit, MAX_CONTRACT_ERRORS)),
    passThrough: passThroughPaths(schema)
  }
}

export interface OperationContracts {
  params: ContractCheck
  response: ContractCheck
  notFound?: { status: number, contract: ContractCheck }
}

export function compileOperationContracts (): Record<OperationName, OperationContracts> {
  useFastFormats()
  const compiled = {} as Record<OperationName, OperationContracts>
  for (const name of operationNames) {
    const op = operations[name]
    compiled[name] = {
      params: compileContract(op.params),
      response: compileContract(op.response),
      ...('notFound' in op
        ? { notFound: { status: op.notFound.status, contract: compileContract(op.notFound.schema) } }
        : {})
    }
  }
  return compiled
}
