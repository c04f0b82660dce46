// Who is calling: what a verified token names, and all the profile flow and the last-known store key on.
// Below the plugins, so the domain code that needs it never imports the auth plugin.
import { Type, type Static } from 'typebox'
import { Login, Uuid, VendorCode } from '../../schemas/common.ts'
import type { PassportParams } from '../../schemas/passport.ts'
import { UnauthorizedError } from '../errors.ts'

/** Who is calling: exactly what the passport lookup needs, `uid_client` upper-cased as the upstream writes it. */
export type Caller = Readonly<PassportParams>

/** The claims a caller's token must carry; others are ignored. */
export const CallerClaims = Type.Object({
  sub: Uuid,
  login: Login,
  vendor: VendorCode,
  exp: Type.Number()
}, { description: "Claims of a caller's bearer token: `sub` is the client's uid_client." })
export type CallerClaims = Static<typeof CallerClaims>

/**
 * The caller of a request that went through `fastify.authenticate` (plugins/app/auth.ts sets `request.caller`); a
 * route that forgot it fails closed.
 */
export function callerOf (request: { readonly caller: Caller | null }): Caller {
  if (request.caller === null) throw new UnauthorizedError('This endpoint needs an Authorization: Bearer token')
  return request.caller
}
