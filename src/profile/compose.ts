// The profile's composition, with no I/O: upstream answers in, the front Profile out (design.md section 4).
import { Compile } from 'typebox/compile'
import type { ContractorResult, DiscountResult, Contractor, DiscountData } from '../../schemas/dealer.ts'
import { BreadcrumbData, type Breadcrumb, type PassportClientFound } from '../../schemas/passport.ts'
import type { DegradedSection, Profile, ProfileBreadcrumb } from '../../schemas/profile.ts'

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

  function compose (found: PassportClientFound, sections: DealerSections): Profile {
    return {
      uid_client: found.uid_client,
      client: found.client,
      catalog_cars_view: decodeBreadcrumbs(found.catalog_cars_view),
      catalog_cars_favourites: decodeBreadcrumbs(found.catalog_cars_favourites),
      discount: sections.discount,
      contractor: sections.contractor,
      degraded: sections.degraded
    }
  }

  return { compose, decodeBreadcrumbData, decodeBreadcrumbs }
}

export type ProfileComposer = ReturnType<typeof createProfileComposer>
