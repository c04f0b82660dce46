// x-app-version on the routes whose schema declares it (AppVersionHeaders of schemas/app-version.ts): a malformed
// value is 400 BAD_REQUEST, a version older than MIN_APP_VERSION is 426 APP_UPDATE_REQUIRED, and a well-formed one
// becomes request.appVersion (the access log's appVersion). Checked before the route's own hooks: an app too old to
// be served is told so whatever its token. bff_app_version_requests_total counts a request once it has answered, and
// only when its token was verified (request.caller) and it was not refused (a 4xx, a 429 included): a caller without
// credentials moves no dashboard, and an account's flood past its limit counts no more than its limit.
import fp from 'fastify-plugin'
import type { onRequestHookHandler, onResponseHookHandler, RouteOptions } from 'fastify'
import { parse, type SemVer } from 'semver'
import { Compile } from 'typebox/compile'
import { APP_VERSION_HEADER, AppVersion } from '../../../../schemas/app-version.ts'
import type { Config } from '../../../config.ts'
import { AppUpdateRequiredError, BadRequestError, MALFORMED_APP_VERSION } from '../../../errors.ts'
import {
  appVersionMetrics, createAppVersionCounts, refused, type AppVersionCounts
} from './metrics.ts'
import { metricsOf } from '../../../metrics/registry.ts'
import { hooksOf } from '../../../route-hooks.ts'

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

/** Whether a version is below the minimum (none: nothing is); compares parsed versions, which never throws. */
const olderThan = (version: SemVer, minimum: SemVer | undefined): boolean =>
  minimum !== undefined && version.compare(minimum) < 0

/** Whether a route's schema declares the header. */
function declaresAppVersion (schema: RouteOptions['schema']): boolean {
  const headers = schema?.headers as { properties?: Record<string, unknown> } | undefined
  return headers?.properties?.[APP_VERSION_HEADER] !== undefined
}

export default fp<{ config: Pick<Config, 'MIN_APP_VERSION'> }>(async function appVersion (fastify, { config }) {
  // Parsed once, throwing at start-up rather than switching the 426 off (the config's pattern already holds it).
  const minimum = config.MIN_APP_VERSION === undefined ? undefined : parse(config.MIN_APP_VERSION, {}, true)!
  const wellFormed = Compile(AppVersion)
  const metrics = metricsOf(fastify)
  const counts = metrics === null ? null : createAppVersionCounts()
  if (metrics !== null && counts !== null) appVersionMetrics(metrics.prom, metrics.registry, counts)
  fastify.decorate('appVersions', counts)
  fastify.decorateRequest('appVersion', null)

  const checkAppVersion: onRequestHookHandler = function checkAppVersion (request, _reply, done) {
    const header = request.headers[APP_VERSION_HEADER]
    if (header === undefined) {
      done()
      return
    }
    const version = typeof header === 'string' && wellFormed.Check(header) ? parse(header) : null
    if (typeof header !== 'string' || version === null) {
      done(new BadRequestError(MALFORMED_APP_VERSION))
      return
    }
    request.appVersion = header
    done(olderThan(version, minimum) ? new AppUpdateRequiredError(config.MIN_APP_VERSION!) : undefined)
  }

  const countAppVersion: onResponseHookHandler = function countAppVersion (request, reply, done) {
    const subject = request.caller?.uid_client
    if (subject !== undefined && !refused(reply.statusCode)) counts?.record(request.appVersion ?? undefined, subject)
    done()
  }

  // A new array, not the one passed: Fastify copies a GET route's options for its HEAD route before this runs.
  fastify.addHook('onRoute', function addAppVersionCheck (route) {
    if (!declaresAppVersion(route.schema)) return
    route.onRequest = [checkAppVersion, ...hooksOf(route.onRequest)]
    if (counts !== null) route.onResponse = [countAppVersion, ...hooksOf(route.onResponse)]
  })
}, { name: 'app-version', dependencies: ['errors', 'metrics'] })
