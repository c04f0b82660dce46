// Compiled TypeBox validators for every registry schema, built once when the client is created.
import { Compile, type Validator } from 'typebox/compile'
import type { TSchema } from 'typebox'
import { useFastFormats } from './formats.ts'
import { operations, operationNames, type OperationName } from './operations.ts'

export interface ContractError { path: string, message: string }

/** A compiled check that lists what is wrong as JSON-pointer paths. */
export interface ContractCheck {
  check (value: unknown): boolean
  errors (value: unknown, limit?: number): ContractError[]
}

export function compileContract (schema: TSchema): ContractCheck {
  const validator: Validator = Compile(schema)
  return {
    check: value => validator.Check(value),
    errors (value, limit = 20) {
      // A failed anyOf reports once per branch and then itself; one line per path reads best.
      const seen = new Map<string, string>()
      for (const error of validator.Errors(value)) {
        const path = error.instancePath === '' ? '/' : error.instancePath
        if (!seen.has(path)) seen.set(path, error.message)
        if (seen.size >= limit) break
      }
      return [...seen].map(([path, message]) => ({ path, message }))
    }
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
      ...('notFound' in op ? { notFound: { status: op.notFound.status, contract: compileContract(op.notFound.schema) } } : {})
    }
  }
  return compiled
}
