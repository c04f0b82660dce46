// Passport service contracts (docs/upstream.md, Passport answers). Unknown upstream fields are tolerated:
// no object here forbids additional properties, and the front drops them when it serializes.
import { Type, type Static } from 'typebox'
import { CalendarDate, IsoDateTime, Login, Nullable, Uuid, VendorCode } from './common.ts'
import * as example from './fixtures.ts'

export const ClientDataReg = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  msg_code: Type.String({ examples: ['CLIENT_DATA_REG'] }),
  username: Type.String({ description: 'Equals the login in observation.' }),
  first_name: Type.String(),
  last_name: Type.String(),
  middle_name: Type.String({ description: 'May be empty.' }),
  gender: Nullable(Type.String()),
  email: Nullable(Type.String()),
  birth_date: Nullable(CalendarDate),
  country: Nullable(Type.String()),
  city: Nullable(Type.String()),
  language_code: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  agent: Nullable(Type.String()),
  agent_version: Nullable(Type.String())
}, {
  $id: 'ClientDataReg',
  description: 'Registration data the client gave the passport service (spec 2.3).',
  examples: [example.clientDataReg]
})

export const ClientDataDms = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  msg_code: Type.String({ examples: ['CLIENT_DATA_DMS'] }),
  fullname: Type.String(),
  type: Type.String({ description: 'Client kind, e.g. a private-person label.' }),
  gender: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  middle_name: Type.String({ description: 'May be empty.' })
}, {
  $id: 'ClientDataDms',
  description: 'The client as the dealer-management system (DMS) knows it (spec 2.4).',
  examples: [example.clientDataDms]
})

export const Client = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  msg_code: Type.String({ examples: ['USER_INFO'] }),
  uid_client: Uuid,
  login: Login,
  date_create: IsoDateTime,
  date_update: IsoDateTime,
  date_validate: IsoDateTime,
  is_active: Type.Boolean(),
  is_active_in_dms: Type.Boolean(),
  is_client_link_dms: Type.Boolean(),
  is_standing_user: Type.Boolean(),
  is_staff: Type.Boolean(),
  client_data: ClientDataReg,
  client_data_dms: ClientDataDms,
  is_suspended: Type.Boolean(),
  suspended_date: Nullable(IsoDateTime)
}, {
  $id: 'Client',
  description: 'The client account held by the passport service (spec 2.2).',
  examples: [example.client]
})

export const BreadcrumbData = Type.Object({
  car_guid: Type.String({ description: 'The car the event is about.' }),
  date: IsoDateTime,
  type: Type.Integer({ description: 'Event kind; 1, 2, 3 and 4 are observed, their meaning is not documented.' })
}, {
  $id: 'BreadcrumbData',
  description: 'The decoded `data` text of a breadcrumb.',
  examples: [example.breadcrumbData]
})

/** Fields a breadcrumb has whether its `data` is the raw text or the decoded object. */
export const breadcrumbFields = {
  id_user_breadcrumbs: Type.Integer({ description: 'Record id; lists are ordered by it, descending.' }),
  id_breadcrumbs: Type.Integer({ description: '6 for viewed cars, 7 for favourites.' }),
  key_breadcrumbs: Type.String({ description: 'A UUID, or a short numeric-like string for some cars.' }),
  date_add: IsoDateTime,
  date_update: IsoDateTime,
  vendor: Type.String({ description: 'Vendor display name.' }),
  id_vendor: Type.Integer(),
  is_my: Type.Boolean()
}

export const Breadcrumb = Type.Object({
  ...breadcrumbFields,
  data: Type.String({
    contentMediaType: 'application/json',
    description: 'JSON text of a BreadcrumbData, escaped inside the JSON payload.'
  })
}, {
  $id: 'Breadcrumb',
  description: 'A viewed or favourite car as the passport service sends it (spec 2.5).',
  examples: [example.breadcrumb]
})

export const PassportParams = Type.Object({
  vendor: VendorCode,
  login: Login,
  uid_client: Uuid
}, {
  $id: 'PassportParams',
  additionalProperties: false,
  description: 'Body of the passport get_client operation.',
  examples: [example.passportParams]
})

export const PassportClientFound = Type.Object({
  success: Type.Literal(true),
  message: Type.String(),
  msg_code: Type.Literal('CLIENT_INFO'),
  uid_client: Uuid,
  client: Client,
  cookies: Type.Array(Type.Unknown(), { description: 'Empty in observation; contents not documented.' }),
  catalog_cars_view: Type.Array(Breadcrumb),
  catalog_cars_favourites: Type.Array(Breadcrumb)
}, {
  $id: 'PassportClientFound',
  description: 'get_client answer (HTTP 200) for a known client (spec 2.1).',
  examples: [example.passportFound]
})

export const PassportClientNotFound = Type.Object({
  success: Type.Literal(false),
  message: Type.String(),
  msg_code: Type.Literal('CLIENT_NOT_FOUND')
}, {
  $id: 'PassportClientNotFound',
  description: 'get_client answer (HTTP 400) for an unknown client (spec 2.1, 7).',
  examples: [example.passportNotFound]
})

export type ClientDataReg = Static<typeof ClientDataReg>
export type ClientDataDms = Static<typeof ClientDataDms>
export type Client = Static<typeof Client>
export type BreadcrumbData = Static<typeof BreadcrumbData>
export type Breadcrumb = Static<typeof Breadcrumb>
export type PassportParams = Static<typeof PassportParams>
export type PassportClientFound = Static<typeof PassportClientFound>
export type PassportClientNotFound = Static<typeof PassportClientNotFound>
