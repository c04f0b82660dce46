// The app's version as it names itself in the x-app-version header: one definition for the route schemas (their
// validation and the OpenAPI header parameter), the start-up check of MIN_APP_VERSION and the version check.
import { Type } from 'typebox'

export const APP_VERSION_HEADER = 'x-app-version'

// Semantic Versioning 2.0.0's own grammar (semver.org), without a leading `v` or spaces, each of MAJOR, MINOR and PATCH
// at most 9 digits: a safe integer, which semver's comparisons require (they throw at 2^53 and above).
const CORE_NUMBER = '(?:0|[1-9]\\d{0,8})'
const SEMVER = `^${CORE_NUMBER}\\.${CORE_NUMBER}\\.${CORE_NUMBER}` +
  '(?:-(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?' +
  '(?:\\+[0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*)?$'

export const AppVersion = Type.String({
  maxLength: 64,
  pattern: SEMVER,
  description: 'A semantic version (semver.org 2.0.0): `MAJOR.MINOR.PATCH`, optionally `-prerelease` and ' +
    '`+build`, without a leading `v`; MAJOR, MINOR and PATCH have at most 9 digits each.',
  examples: ['2.14.0']
})

/** The request headers of a route the app calls: x-app-version, optional. */
export const AppVersionHeaders = Type.Object({
  [APP_VERSION_HEADER]: Type.Optional(Type.String({
    ...AppVersion,
    description: 'The calling app\'s version (semver.org 2.0.0, such as `2.14.0`; MAJOR, MINOR and PATCH at most 9 ' +
      'digits each), for version checks and statistics. Optional: without it the request is served as any other. ' +
      'A malformed value is 400 `BAD_REQUEST`; a version below the service\'s minimum is 426 `APP_UPDATE_REQUIRED`.'
  }))
})
