// What several layers need to know of JSON Schema and JSON Pointer: which keywords hold data rather than
// subschemas (a walk over a schema leaves them as they are), and how a name is written as one pointer token.

/** The keywords whose value is data, not a subschema: a walk over a schema copies them untouched. */
export const VALUE_KEYWORDS: ReadonlySet<string> = new Set(['examples', 'default', 'const', 'enum'])

/** `name` as one token of a JSON Pointer (RFC 6901): `~` as `~0`, then `/` as `~1`. */
export const pointerToken = (name: string) => name.replaceAll('~', '~0').replaceAll('/', '~1')
