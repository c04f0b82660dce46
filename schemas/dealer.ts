// Dealer web-service contracts (docs/upstream.md, Dealer answers).
import { Type, type Static, type TSchema } from 'typebox'
import { LocalDateTime, Nullable, Uuid } from './common.ts'
import * as example from './fixtures.ts'

/** The dealer envelope (docs/upstream.md, Dealer answers) around a given `data` schema. */
function DealerEnvelope<T extends TSchema> (data: T) {
  return {
    success: Type.Boolean(),
    message: Nullable(Type.String()),
    data
  }
}

export const TypeContactInfo = Type.Object({
  id: Uuid,
  code: Nullable(Type.String()),
  article: Nullable(Type.String()),
  deletion: Type.Boolean(),
  name: Type.String(),
  name_full: Nullable(Type.String())
}, {
  $id: 'TypeContactInfo',
  description: 'The kind of a contact (phone, e-mail, ...).',
  examples: [example.contact.type_contact_info]
})

export const Contact = Type.Object({
  num: Type.Integer(),
  is_main: Type.Boolean(),
  type_contact: Type.String(),
  type_contact_info: TypeContactInfo,
  view: Type.String({ description: 'Formatted representation, e.g. of a phone number.' }),
  value: Type.String({ description: 'XML text describing the contact information.' }),
  social_media: Nullable(Type.String()),
  confirmed: Nullable(Type.Boolean())
}, {
  $id: 'Contact',
  description: 'One contact of a contractor (spec 2.7).',
  examples: [example.contact]
})

export const Contractor = Type.Object({
  id: Uuid,
  code: Type.String(),
  article: Nullable(Type.String()),
  deletion: Type.Boolean(),
  name: Type.String(),
  name_full: Type.String(),
  last_name: Type.String(),
  first_name: Type.String(),
  middle_name: Type.String(),
  gender: Type.String(),
  date_birth: Nullable(LocalDateTime, {
    description: 'The birth date as a local date-time, at midnight in observation (`1985-04-12T00:00:00`): its date ' +
      'part is the date.'
  }),
  form_ownership: Type.String(),
  view_contractor: Type.String(),
  not_active: Type.Boolean(),
  consent_personal_data: Type.String(),
  consent_personal_data_date: Nullable(LocalDateTime),
  consent_sms: Type.String(),
  consent_sms_date: Nullable(LocalDateTime),
  consent_email: Type.String(),
  consent_email_date: Nullable(LocalDateTime),
  contacts: Type.Array(Contact),
  // Its fields are not documented: passed on whole rather than emptied by the serializer.
  last_dealer: Nullable(Type.Object({}, {
    additionalProperties: true, description: 'The dealer last seen; fields not documented.'
  })),
  contact_persons: Type.Array(Type.Unknown(), { description: 'Empty in observation; items not documented.' })
}, {
  $id: 'Contractor',
  description: "The dealer's contractor record of the client (spec 2.7).",
  examples: [example.contractor]
})

/** Bonus data: its shape is not documented, so any object is accepted and passed on. */
export const DiscountData = Type.Object({}, {
  $id: 'DiscountData',
  additionalProperties: true,
  description: 'Bonus/discount data as the dealer sends it; its fields are not documented upstream.',
  examples: [example.discountWithBonuses.data]
})

export const DiscountResult = Type.Object(DealerEnvelope(Nullable(DiscountData)), {
  $id: 'DiscountResult',
  description: 'discount answer (spec 2.9): HTTP 200, `success: false` and `data: null` when the client has no ' +
    'bonuses.',
  examples: [example.discountWithBonuses, example.discountNone]
})

export const ContractorResult = Type.Object({
  ...DealerEnvelope(Nullable(Contractor)),
  http_code: Type.Integer({ examples: [200] })
}, {
  $id: 'ContractorResult',
  description: 'client answer (spec 2.6, 2.7): the contractor record in `data`, `http_code` 200.',
  examples: [example.contractorResult]
})

export const DealerParams = Type.Object({
  uid_client: Uuid
}, {
  $id: 'DealerParams',
  additionalProperties: false,
  description: 'Body of the dealer discount and client operations.',
  examples: [example.dealerParams]
})

export type TypeContactInfo = Static<typeof TypeContactInfo>
export type Contact = Static<typeof Contact>
export type Contractor = Static<typeof Contractor>
export type DiscountData = Static<typeof DiscountData>
export type DiscountResult = Static<typeof DiscountResult>
export type ContractorResult = Static<typeof ContractorResult>
export type DealerParams = Static<typeof DealerParams>
