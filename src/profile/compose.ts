// The profile's composition, with no I/O: upstream answers in, the front Profile out (docs/api.md, the profile).
import { Compile } from 'typebox/compile'
import type { ContractorResult, DiscountResult, Contractor, DiscountData } from '../../schemas/dealer.ts'
import { BreadcrumbData, type Breadcrumb, type PassportClientFound } from '../../schemas/passport.ts'
import type { DegradedSection, Profile, ProfileBreadcrumb, StaleSection } from '../../schemas/profile.ts'
import type { PassportPart } from './last-known/entry.ts'

/** The dealer sections of a profile; null in a section named in `degraded` means it failed to load. */
export interface DealerSections {
  discount: DiscountData | null
  contractor: Contractor | null
  degraded: DegradedSection[]
}

/** The bonuses, or null when the dealer says there are none (`success: false, data: null`). */
export function discountSection (result: DiscountResult): DiscountData | null {
  return result.success ? result.data : null
}

/** The contractor record, or null when the dealer answers without one (`success: false` or `data: null`). */
export function contractorSection (result: ContractorResult): Contractor | null {
  return result.success ? result.data : null
}

/** A profile from its parts; `stale` names those that come from the last-known copy. */
export function assemble (part: PassportPart, sections: DealerSections, stale: StaleSection[]): Profile {
  return {
    uid_client: part.uid_client,
    client: part.client,
    catalog_cars_view: part.catalog_cars_view,
    catalog_cars_favourites: part.catalog_cars_favourites,
    discount: sections.discount,
    contractor: sections.contractor,
    degraded: sections.degraded,
    stale
  }
}

export function createProfileComposer () {
  // Compiled once per app, not per request.
  const isBreadcrumbData = Compile(BreadcrumbData)

  /** The decoded `data` text of a breadcrumb, or null when it is not JSON of a BreadcrumbData. */
  function decodeBreadcrumbData (text: string): BreadcrumbData | null {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return null
    }
    return isBreadcrumbData.Check(value) ? value : null
  }

  /** Every item kept, in the upstream order; only `data` changes. */
  function decodeBreadcrumbs (list: Breadcrumb[]): ProfileBreadcrumb[] {
    const out = new Array<ProfileBreadcrumb>(list.length)
    for (let i = 0; i < list.length; i++) {
      const crumb = list[i]!
      out[i] = { ...crumb, data: decodeBreadcrumbData(crumb.data) }
    }
    return out
  }

  /** The passport's part of the profile, as the front sends it and as a last-known copy keeps it. */
  function passportPart (found: PassportClientFound): PassportPart {
    return {
      uid_client: found.uid_client,
      client: found.client,
      catalog_cars_view: decodeBreadcrumbs(found.catalog_cars_view),
      catalog_cars_favourites: decodeBreadcrumbs(found.catalog_cars_favourites)
    }
  }

  function compose (found: PassportClientFound, sections: DealerSections, stale: StaleSection[] = []): Profile {
    return assemble(passportPart(found), sections, stale)
  }

  return { compose, assemble, passportPart, decodeBreadcrumbData, decodeBreadcrumbs }
}

export type ProfileComposer = ReturnType<typeof createProfileComposer>
