// Primitives every contract builds on: one definition of a UUID, each kind of date, a login.
import { Type, type TSchema, type TSchemaOptions } from 'typebox'

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

// The two kinds below carry no format or pattern on purpose: the same schemas check the upstream's answers, and an
// odd value from it must reach the app as it is rather than fail the whole answer (a 502). Their descriptions
// start with the kind, which docs/mobile.md names with the parser for it.

/** A date without a time: `birth_date` (docs/mobile.md, Dates). */
export const CalendarDate = Type.String({
  description: 'A calendar date, ISO 8601 `YYYY-MM-DD` as observed: no time, no offset. The upstream documents no ' +
    'form for it and the service passes it on unchecked.',
  examples: ['1985-04-12']
})

/** A date-time without an offset: the dealer's dates (docs/mobile.md, Dates). */
export const LocalDateTime = Type.String({
  description: 'A local date-time, ISO 8601 `YYYY-MM-DDThh:mm:ss` as observed: no offset, and the upstream names ' +
    'no time zone for it. The service passes it on unchecked.',
  examples: ['2021-09-03T10:20:00']
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

/** `T | null`, written as anyOf so OpenAPI 3.1 and every validator read it the same way; `options` (a property's
 * own description) go on the union. */
export function Nullable<T extends TSchema> (schema: T, options?: TSchemaOptions) {
  return Type.Union([schema, Type.Null()], options)
}
