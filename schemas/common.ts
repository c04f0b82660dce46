// Primitives every contract builds on: one definition of a UUID, a dated instant, a login.
import { Type, type TSchema } from 'typebox'

export const Uuid = Type.String({
  format: 'uuid',
  description: 'A UUID. The upstream writes them upper-case; any case is accepted.',
  examples: ['9F1C3B2A-6D4E-4C1B-8A7F-2E5D6C7B8A90']
})

// RFC 3339 already demands an offset; the pattern states it so no other validator can relax it.
export const IsoDateTime = Type.String({
  format: 'date-time',
  pattern: '(?:[Zz]|[+-]\\d{2}:\\d{2})$',
  description: 'ISO 8601 date-time with a UTC offset.',
  examples: ['2024-05-17T14:03:27.512345+03:00']
})

export const Login = Type.String({
  pattern: '^[0-9]{1,32}$',
  description: 'Phone-number-like login, digits only.',
  examples: ['79161234567']
})

export const VendorCode = Type.String({
  pattern: '^[A-Za-z0-9_.-]{1,64}$',
  description: 'Vendor (dealer brand) code the client is registered under.',
  examples: ['kia']
})

/** `T | null`, written as anyOf so OpenAPI 3.1 and every validator read it the same way. */
export function Nullable<T extends TSchema> (schema: T) {
  return Type.Union([schema, Type.Null()])
}
