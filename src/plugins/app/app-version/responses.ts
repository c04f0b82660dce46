// What a route that declares x-app-version answers besides its own (plugins/app/app-version/ checks the header):
// the message of a malformed one, and the documented 400 and 426.
import { APP_VERSION_HEADER } from '../../../../schemas/app-version.ts'
import { AppUpdateRequiredError, BadRequestError, MALFORMED_APP_VERSION } from '../../../errors.ts'
import { errorResponse } from '../errors/error-response.ts'

/** The answers a route that declares x-app-version adds to its documented responses. */
export const appVersionResponses = {
  400: errorResponse(`A malformed \`${APP_VERSION_HEADER}\` header.`, [new BadRequestError(MALFORMED_APP_VERSION)]),
  426: errorResponse(`The app named in \`${APP_VERSION_HEADER}\` is older than the oldest version the service ` +
    'serves (`MIN_APP_VERSION`): the message, for the app\'s user, asks to update it. Never sent without the header.',
  [new AppUpdateRequiredError('2.14.0')])
}
