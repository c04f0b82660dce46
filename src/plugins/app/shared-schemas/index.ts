// Fastify serializes and documents with shared schemas: each resource with a `$id` is added once and
// referenced by `$ref` elsewhere, which keeps a nested resource used twice (a Breadcrumb in two lists)
// from clashing in fast-json-stringify, and names the OpenAPI components after the `$id`s.
import fp from 'fastify-plugin'
import type { TSchema } from 'typebox'
import { ErrorBody } from '../../../../schemas/errors.ts'
import { collectShared, toRefs } from './refs.ts'

interface SharedSchemasOptions { roots: TSchema[] }

export default fp<SharedSchemasOptions>(async function sharedSchemas (fastify, { roots }) {
  for (const schema of collectShared([ErrorBody, ...roots])) fastify.addSchema(toRefs(schema))
}, { name: 'shared-schemas' })
