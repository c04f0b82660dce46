// The operation registry: one entry per upstream operation. The profile flow, the console allowlist,
// the sandbox upstream, the docs and the tests all read these entries; adding an operation is one entry.
import type { Static, TSchema } from 'typebox'
import { DealerParams, DiscountResult, ContractorResult } from './dealer.ts'
import { PassportClientFound, PassportClientNotFound, PassportParams } from './passport.ts'

/** Which configured key an operation sends as `x-authorization`. */
export type KeyName = 'passport' | 'dealer'

export interface OperationSpec<P extends TSchema = TSchema, R extends TSchema = TSchema, N extends TSchema = TSchema> {
  /** Documented path, without the trailing slash the upstream redirects to. */
  path: string
  key: KeyName
  summary: string
  params: P
  response: R
  /** A non-2xx status that is an answer, not a failure (the passport's 400 CLIENT_NOT_FOUND). */
  notFound?: { status: number, schema: N }
  /**
   * Whether sending the request twice changes nothing upstream (a lookup). Only such an operation is sent
   * again after a dropped connection, which the upstream may have received in full; a write never is.
   */
  safeToRepeat: boolean
}

export const operations = {
  'passport.get_client': {
    path: '/bc_passport/get_client',
    key: 'passport',
    summary: 'Passport lookup of a client by vendor, login and uid_client.',
    params: PassportParams,
    response: PassportClientFound,
    notFound: { status: 400, schema: PassportClientNotFound },
    safeToRepeat: true
  },
  'dealer.discount': {
    path: '/bc_api_web_service/discount',
    key: 'dealer',
    summary: "The client's bonuses; `success: false, data: null` when there are none.",
    params: DealerParams,
    response: DiscountResult,
    safeToRepeat: true
  },
  'dealer.client': {
    path: '/bc_api_web_service/client',
    key: 'dealer',
    summary: "The dealer's contractor record of the client.",
    params: DealerParams,
    response: ContractorResult,
    safeToRepeat: true
  }
} as const satisfies Record<string, OperationSpec>

export type Operations = typeof operations
export type OperationName = keyof Operations
export const operationNames = Object.keys(operations) as OperationName[]

export type ParamsOf<N extends OperationName> = Static<Operations[N]['params']>
export type ResponseOf<N extends OperationName> = Static<Operations[N]['response']>
export type NotFoundOf<N extends OperationName> =
  Operations[N] extends { notFound: { schema: infer S extends TSchema } } ? Static<S> : never
