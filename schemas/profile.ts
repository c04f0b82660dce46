// The front Profile (docs/api.md), built from the upstream contracts so no field is stated twice.
// Fastify serializes the answer with this schema: a field the upstream adds and the contract does not
// name never reaches the app.
import { Type, type Static } from 'typebox'
import { Nullable, Uuid } from './common.ts'
import { Contractor, DiscountData } from './dealer.ts'
import * as example from './fixtures.ts'
import { BreadcrumbData, breadcrumbFields, Client } from './passport.ts'

/** The fixture breadcrumb as the front sends it: its `data` text decoded. */
function decoded ({ data, ...fields }: typeof example.breadcrumb) {
  return { ...fields, data: JSON.parse(data) as typeof example.breadcrumbData }
}

export const ProfileBreadcrumb = Type.Object({
  ...breadcrumbFields,
  data: Nullable(BreadcrumbData)
}, {
  $id: 'ProfileBreadcrumb',
  description: 'A viewed or favourite car with its `data` decoded. `data` is null when the upstream text is ' +
    'not valid JSON or not a BreadcrumbData; the item itself is always kept.',
  examples: [decoded(example.breadcrumb)]
})

/** The sections that can be missing from a profile, in the order `degraded` lists them. */
export const degradableSections = ['discount', 'contractor'] as const

export const DegradedSection = Type.Enum(degradableSections, {
  description: 'A profile section that could not be loaded.'
})

/** The sections a last-known copy can stand in for, in the order `stale` lists them. */
const staleSections = ['passport', 'discount', 'contractor'] as const

export const StaleSection = Type.Enum(staleSections, {
  description: 'A profile section answered from the client\'s last good copy: `passport` is the client and its cars.'
})

/** The documented profile: the OpenAPI example, and what the in-process copies are compressed against. */
export const profileExample = {
  uid_client: example.IVANOV.uid_client,
  client: example.client,
  catalog_cars_view: example.catalogCarsView.map(decoded),
  catalog_cars_favourites: example.catalogCarsFavourites.map(decoded),
  discount: example.discountWithBonuses.data,
  contractor: example.contractor,
  degraded: [],
  stale: []
}

export const Profile = Type.Object({
  uid_client: Uuid,
  client: Client,
  catalog_cars_view: Type.Array(ProfileBreadcrumb, {
    description: 'Viewed cars, in the upstream order (newest record first).'
  }),
  catalog_cars_favourites: Type.Array(ProfileBreadcrumb, {
    description: 'Favourite cars, in the upstream order (newest record first).'
  }),
  discount: Nullable(DiscountData),
  contractor: Nullable(Contractor),
  degraded: Type.Array(DegradedSection, {
    uniqueItems: true,
    description: 'Sections whose dealer lookup failed (error, timeout or a broken answer); each is null. ' +
      'The same names come in the `x-degraded` header as a comma list; the header is absent when this list is empty. ' +
      'A null section that is not listed here is an answer, not a failure: `discount` is null when the client ' +
      'has no bonuses, `contractor` when the dealer has no contractor record of the client.'
  }),
  stale: Type.Array(StaleSection, {
    uniqueItems: true,
    description: 'Sections answered from the client\'s last good copy because fresh data could not be had (the ' +
      'passport or a dealer lookup failed); empty when everything is fresh. The same names come in the `x-stale` ' +
      'header as a comma list (absent when empty), and `Age` gives the seconds since the oldest of them was fetched.'
  })
}, {
  $id: 'Profile',
  additionalProperties: false,
  description: "The caller's profile: the passport client and its cars, with the dealer's discount and contractor " +
    'record.',
  examples: [
    profileExample,
    { ...profileExample, contractor: null, degraded: ['contractor'], stale: ['discount'] }
  ]
})

export type ProfileBreadcrumb = Static<typeof ProfileBreadcrumb>
export type DegradedSection = Static<typeof DegradedSection>
export type StaleSection = Static<typeof StaleSection>
export type Profile = Static<typeof Profile>
