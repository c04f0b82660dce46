// The one body every error answer has (docs/api.md, Error codes).
import { Type, type Static } from 'typebox'
import { AppVersion } from './app-version.ts'

export const ErrorBody = Type.Object({
  statusCode: Type.Integer({ minimum: 400, maximum: 599 }),
  code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'Stable upper-snake code; clients branch on it.' }),
  error: Type.String({ description: 'The HTTP reason phrase.' }),
  message: Type.String({ description: 'What went wrong, for people. Never internals.' }),
  // A field of its own, so an app compares versions and shows its own update screen without parsing the message.
  min_app_version: Type.Optional(Type.String({
    ...AppVersion,
    description: 'Only on 426 `APP_UPDATE_REQUIRED`: the oldest app version the service serves ' +
      '(`MIN_APP_VERSION`), to compare by semver precedence and to show on the app\'s update screen.'
  }))
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
