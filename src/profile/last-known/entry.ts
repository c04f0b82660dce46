// A client's last good profile, per section, each with the time it was fetched. Kept as serialized bytes
// (JSON), never as object graphs: the memory store's bound counts bytes, and Redis stores bytes anyway.
import type { Contractor, DiscountData } from '../../../schemas/dealer.ts'
import type { Profile, StaleSection } from '../../../schemas/profile.ts'

/** The passport's part of a profile: the client and its decoded cars. */
export type PassportPart = Pick<Profile, 'uid_client' | 'client' | 'catalog_cars_view' | 'catalog_cars_favourites'>

/** One section as it was, and when it was fetched (epoch milliseconds). */
export interface SectionCopy<T> { at: number, value: T }

export interface LastKnownEntry {
  passport?: SectionCopy<PassportPart>
  discount?: SectionCopy<DiscountData | null>
  contractor?: SectionCopy<Contractor | null>
}

export function encodeEntry (entry: LastKnownEntry): Buffer {
  return Buffer.from(JSON.stringify(entry), 'utf8')
}

/** The entry, or undefined when the bytes are not one (a copy of an older layout is a miss). */
export function decodeEntry (bytes: Buffer): LastKnownEntry | undefined {
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  const entry = value as Record<string, unknown>
  for (const section of ['passport', 'discount', 'contractor'] as const) {
    const copy = entry[section]
    if (copy === undefined) continue
    if (typeof copy !== 'object' || copy === null || typeof (copy as { at?: unknown }).at !== 'number' || !('value' in copy)) return undefined
  }
  return entry as LastKnownEntry
}

/** The sections of `entry` fetched after `since`, the others dropped. */
export function sectionsSince (entry: LastKnownEntry, since: number): LastKnownEntry {
  const kept: LastKnownEntry = {}
  if (entry.passport !== undefined && entry.passport.at > since) kept.passport = entry.passport
  if (entry.discount !== undefined && entry.discount.at > since) kept.discount = entry.discount
  if (entry.contractor !== undefined && entry.contractor.at > since) kept.contractor = entry.contractor
  return kept
}

/** When the oldest of `sections` was fetched. */
export function oldestOf (entry: LastKnownEntry, sections: readonly StaleSection[]): number {
  let oldest = Infinity
  for (const section of sections) {
    const at = entry[section]?.at
    if (at !== undefined && at < oldest) oldest = at
  }
  return oldest
}
