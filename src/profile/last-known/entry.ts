// A client's last good profile, per section, each with the time it was fetched. Kept as bytes, never as
// object graphs: the memory store's bound counts bytes, and Redis stores bytes anyway. The bytes are a line of
// section times, then the profile exactly as it was answered: it is serialized once, for the answer and the copy.
import type { Contractor, DiscountData } from '../../../schemas/dealer.ts'
import type { Profile, StaleSection } from '../../../schemas/profile.ts'

/** The passport's part of a profile: the client and its decoded cars. */
export type PassportPart = Pick<Profile, 'uid_client' | 'client' | 'catalog_cars_view' | 'catalog_cars_favourites'>

/** One section as it was, and when it was fetched (epoch milliseconds). */
interface SectionCopy<T> { at: number, value: T }

export interface LastKnownEntry {
  passport?: SectionCopy<PassportPart>
  discount?: SectionCopy<DiscountData | null>
  contractor?: SectionCopy<Contractor | null>
}

/** When each section kept in a copy was fetched (epoch milliseconds); a section absent is not kept. */
export type SectionTimes = Partial<Record<StaleSection, number>>

const NEWLINE = 0x0a

/**
 * The copy of an answered profile in two chunks, as the times change on every write and the profile seldom.
 * `body` is the serialized JSON (never a raw newline in it); `times` names the sections kept, each with the
 * value the answer carried.
 */
export function encodeEntry (times: SectionTimes, body: Buffer): Buffer[] {
  return [Buffer.from(JSON.stringify(times) + '\n'), body]
}

/** The entry, or undefined when the bytes are not one (a copy of an older layout is a miss). */
export function decodeEntry (bytes: Buffer): LastKnownEntry | undefined {
  const end = bytes.indexOf(NEWLINE)
  if (end === -1) return undefined
  let times: unknown, profile: unknown
  try {
    times = JSON.parse(bytes.toString('utf8', 0, end))
    profile = JSON.parse(bytes.toString('utf8', end + 1))
  } catch {
    return undefined
  }
  if (!isObject(times) || !isObject(profile)) return undefined
  const entry: LastKnownEntry = {}
  const { passport, discount, contractor } = times
  if (passport !== undefined) {
    if (typeof passport !== 'number' || typeof profile.uid_client !== 'string') return undefined
    const whole = profile as Profile
    entry.passport = {
      at: passport,
      value: {
        uid_client: whole.uid_client,
        client: whole.client,
        catalog_cars_view: whole.catalog_cars_view,
        catalog_cars_favourites: whole.catalog_cars_favourites
      }
    }
  }
  if (discount !== undefined) {
    if (typeof discount !== 'number' || !('discount' in profile)) return undefined
    entry.discount = { at: discount, value: profile.discount as DiscountData | null }
  }
  if (contractor !== undefined) {
    if (typeof contractor !== 'number' || !('contractor' in profile)) return undefined
    entry.contractor = { at: contractor, value: profile.contractor as Contractor | null }
  }
  return entry
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
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
