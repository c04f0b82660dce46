// The console's body validation: the body against the union of console requests, and when it fails, explained
// against the one variant the operator meant (by `operation`), so that the message names the bad field.
import type { FastifySchemaValidationError } from 'fastify'
import { Compile } from 'typebox/compile'
import { ConsoleRequest, consoleRequestVariants } from '../../../schemas/console.ts'
import { operationNames } from '../../../schemas/operations.ts'
import { pointerToken } from '../../json-schema.ts'

type ValidationResult = { value: unknown } | { error: FastifySchemaValidationError[] }

/**
 * Validates the body against the union, and when it fails explains it against the one variant the
 * caller meant (by `operation`), so the message names the bad field instead of every variant's misses.
 */
export function consoleRequestValidator (): (value: unknown) => ValidationResult {
  const whole = Compile(ConsoleRequest)
  const byOperation = new Map(operationNames.map((name, i) => [name as string, Compile(consoleRequestVariants[i]!)]))
  return value => {
    if (whole.Check(value)) return { value }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return { error: [problem('', 'type', 'must be an object with operation and params')] }
    }
    const operation = (value as { operation?: unknown }).operation
    const variant = typeof operation === 'string' ? byOperation.get(operation) : undefined
    if (variant === undefined) {
      return { error: [problem('/operation', 'enum', `must be one of ${operationNames.join(', ')}`)] }
    }
    return { error: readable(variant.Errors(value)) }
  }
}

function problem (instancePath: string, keyword: string, message: string): FastifySchemaValidationError {
  return { instancePath, keyword, message, schemaPath: '#', params: {} }
}

/** One error per extra property, at its own path, instead of TypeBox's pair of generic ones. */
function readable (errors: FastifySchemaValidationError[]): FastifySchemaValidationError[] {
  const out: FastifySchemaValidationError[] = []
  for (const error of errors) {
    if (error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')) continue
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperties?: string[] }).additionalProperties ?? []
      for (const name of extra) {
        out.push(problem(`${error.instancePath}/${pointerToken(name)}`, 'additionalProperties', 'is not allowed'))
      }
      continue
    }
    out.push(error)
  }
  return out
}
