// What the app's callers are told: the oldest app version served and the language of error messages.
import { Type } from 'typebox'
import { AppVersion } from '../../schemas/app-version.ts'
import { languages } from '../errors.ts'

export const ClientsConfigSchema = Type.Object({
  MIN_APP_VERSION: Type.Optional(Type.String({
    ...AppVersion,
    description: 'Oldest app version served (semver, such as 2.14.0): a request whose x-app-version is older gets ' +
      '426 APP_UPDATE_REQUIRED; one without the header is served. Unset, every version is served.'
  })),
  DEFAULT_LANGUAGE: Type.Enum([...languages], {
    default: 'ru',
    description: 'Language of error messages (`ru` or `en`) for a caller whose Accept-Language names neither, ' +
      'or who sends none.'
  })
})
