// x-app-version on the routes whose schema declares it (AppVersionHeaders of schemas/app-version.ts): a malformed
// value is 400 BAD_REQUEST, a version older than MIN_APP_VERSION is 426 APP_UPDATE_REQUIRED, and a well-formed one
// becomes request.appVersion (the access log's appVersion) and a count of bff_app_version_requests_total. Checked
// before the route's own hooks: an app too old to be served is told so whatever its token.
import fp from 'fastify-plugin'
import type { onRequestHookHandler, RouteOptions } from 'fastify'
import { lt } from 'semver'
import { Compile } from 'typebox/compile'
import { APP_VERSION_HEADER, AppVersion } from '../../../schemas/app-version.ts'
import type { Config } from '../../config.ts'
import { AppUpdateRequiredError, BadRequestError } from '../../errors.ts'
import { MALFORMED_APP_VERSION } from '../../http/app-version.ts'
import { appVersionMetrics, createAppVersionCounts, type AppVersionCounts } from '../../metrics/app-versions.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's well-formed x-app-version; null without one, or on a route that does not declare it. */
    appVersion: string | null
  }
  interface FastifyInstance {
    /** The requests counted by app version; null when metrics are off. */
    appVersions: AppVersionCounts | null
  }
}

/** Whether a route's schema declares the header. */
function declaresAppVersion (schema: RouteOptions['schema']): boolean {
  const headers = schema?.headers as { properties?: Record<string, unknown> } | undefined
  return headers?.properties?.[APP_VERSION_HEADER] !== undefined
}

const asArray = <T>(hooks: T | T[] | undefined): T[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]

export default fp<{ config: Pick<Config, 'MIN_APP_VERSION'> }>(async function appVersion (fastify, { config }) {
  const minimum = config.MIN_APP_VERSION
  const wellFormed = Compile(AppVersion)
  const counts = fastify.metrics === null ? null : createAppVersionCounts()
  if (fastify.metrics !== null && counts !== null) {
    appVersionMetrics(await import('prom-client'), fastify.metrics.registry, counts)
  }
  fastify.decorate('appVersions', counts)
  fastify.decorateRequest('appVersion', null)

  const checkAppVersion: onRequestHookHandler = function checkAppVersion (request, _reply, done) {
    const header = request.headers[APP_VERSION_HEADER]
    if (header === undefined) {
      counts?.record(undefined)
      done()
      return
    }
    if (typeof header !== 'string' || !wellFormed.Check(header)) {
      done(new BadRequestError(MALFORMED_APP_VERSION))
      return
    }
    request.appVersion = header
    counts?.record(header)
    done(minimum !== undefined && lt(header, minimum) ? new AppUpdateRequiredError(minimum) : undefined)
  }

  // A new array, not the one passed: Fastify copies a GET route's options for its HEAD route before this runs.
  fastify.addHook('onRoute', function addAppVersionCheck (route) {
    if (declaresAppVersion(route.schema)) route.onRequest = [checkAppVersion, ...asArray(route.onRequest)]
  })
}, { name: 'app-version', dependencies: ['errors', 'metrics'] })
