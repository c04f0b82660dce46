// The one body every error answer has (docs/api.md, Error codes).
import { Type, type Static } from 'typebox'

export const ErrorBody = Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'Stable upper-snake code; clients branch on it.' }),
  error: Type.String({ description: 'The HTTP reason phrase.' }),
  message: Type.String({ description: 'What went wrong, for people. Never internals.' })
}, {
  $id: 'ErrorBody',
  additionalProperties: false,
  description: 'Every error answer. An `x-request-id` header comes with it.',
  examples: [{
    statusCode: 404,
    code: 'CLIENT_NOT_FOUND',
    error: 'Not Found',
    message: 'The client is not known to the passport service'
  }]
})

export type ErrorBody = Static<typeof ErrorBody>
