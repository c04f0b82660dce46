// Drift of the parts of upstream answers the schemas pass on undescribed (schemas/dealer.ts DiscountData,
// last_dealer, contact_persons; the passport's cookies): key paths never seen before are counted, so a rise
// means the upstream sends a field nobody has described, which reaches the app unchecked.
import type { Registry } from 'prom-client'
import { operationNames, operations, type OperationName } from '../../../schemas/operations.ts'
import type { PromClient } from '../../prom.ts'
import { passThroughPaths, passThroughValues, type SchemaPath } from './depth.ts'

/** At most this many distinct pass-through key paths are remembered per operation; later ones are not counted. */
export const MAX_PASSTHROUGH_PATHS = 200

/** Key paths seen so far under one pass-through part, as a tree: no string is built unless a path is new. */
interface SeenTree { children: Map<string, SeenTree> }

/** An answer's pass-through parts, each with the index of its path in the contract's `passThrough`. */
export type PassThroughParts = ReadonlyArray<readonly [number, unknown]>

/**
 * Counts key paths never seen before in the pass-through parts of an operation's answers.
 * The schemas' examples count as seen, so a rise means the upstream sends a field nobody has described.
 */
export function createDriftTracker (operation: OperationName, onNew: (path: string) => void) {
  const parts: SchemaPath[] = passThroughPaths(operations[operation].response)
  const roots = parts.map((): SeenTree => ({ children: new Map() }))
  let size = 0

  function walk (value: unknown, tree: SeenTree, path: string, report: boolean): void {
    if (typeof value !== 'object' || value === null) return
    if (Array.isArray(value)) {
      for (const item of value) visit(item, tree, '*', path, report)
      return
    }
    for (const key in value) visit((value as Record<string, unknown>)[key], tree, key, path, report)
  }

  function visit (value: unknown, tree: SeenTree, key: string, path: string, report: boolean): void {
    let child = tree.children.get(key)
    if (child === undefined) {
      if (size >= MAX_PASSTHROUGH_PATHS) return
      child = { children: new Map() }
      tree.children.set(key, child)
      size++
      if (report) onNew(`${path}/${key}`)
    }
    walk(value, child, `${path}/${key}`, report)
  }

  /** Records the key paths of an answer's pass-through parts; reports new ones when `report`. */
  function observe (found: PassThroughParts, report = true): void {
    for (const [index, value] of found) {
      const root = roots[index]
      if (root !== undefined) walk(value, root, `/${parts[index]!.join('/')}`, report)
    }
  }

  // The documented examples are known fields.
  const examples = (operations[operation].response as { examples?: unknown[] }).examples ?? []
  for (const example of examples) observe(passThroughValues(example, parts), false)
  return { observe }
}

/** The drift counter, one tracker per operation; returns what records an `ok` answer's pass-through parts. */
export function driftMetrics ({ Counter }: Pick<PromClient, 'Counter'>, registry: Registry) {
  const passThroughDrift = new Counter({
    name: 'bff_upstream_passthrough_new_paths_total',
    help: 'Key paths seen for the first time since start in the parts of upstream answers passed on undescribed ' +
      '(discount data, last_dealer, contact_persons, cookies), the schemas\' examples excepted; at most ' +
      `${MAX_PASSTHROUGH_PATHS} per operation. ` +
      'A rise means the upstream sends a field no schema describes, which reaches the app unchecked.',
    labelNames: ['operation'] as const,
    registers: [registry]
  })
  // Known series start at zero, so rate() and alerts see them before the first event.
  for (const operation of operationNames) passThroughDrift.labels(operation).inc(0)
  const drift = Object.fromEntries(operationNames.map(operation =>
    [operation, createDriftTracker(operation, () => passThroughDrift.inc({ operation }))])) as
    Record<OperationName, ReturnType<typeof createDriftTracker>>
  return function observeDrift (operation: OperationName, found: PassThroughParts): void {
    drift[operation].observe(found)
  }
}
