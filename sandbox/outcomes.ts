// Test identities of the sandbox upstream, one for each state of the profile an app must handle (a card number that
// is always declined, in a payment sandbox's manner): the sandbox misbehaves by the `uid_client` a request names,
// so the service runs its ordinary code (docs/mobile.md, Every state on the sandbox). The faults are fault.ts's kinds.
import * as fixture from '../schemas/fixtures.ts'
import type { OperationName } from '../schemas/operations.ts'
import type { PassportClientFound } from '../schemas/passport.ts'
import type { DegradedSection, StaleSection } from '../schemas/profile.ts'
import type { Fault } from './fault.ts'
import type { SeededClient } from './seed.ts'

export type OutcomeState =
  | 'discount-missing' | 'contractor-missing' | 'stale' | 'passport-502' | 'passport-503' | 'passport-504'

/** What the app gets for an outcome client's GET /api/users/profile. */
interface OutcomeResponse {
  status: 200 | 502 | 503 | 504
  /** The error body's `code`; null for a 200. */
  code: 'UPSTREAM_BAD_RESPONSE' | 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_TIMEOUT' | null
  /** A 200's `degraded` (also the `x-degraded` header, comma-joined); [] otherwise. */
  degraded: readonly DegradedSection[]
  /** A 200's `stale` (also the `x-stale` header, comma-joined); [] otherwise. */
  stale: readonly StaleSection[]
  /** An `Age` header (seconds since the copy was loaded) comes with it. */
  age: boolean
}

export interface OutcomeClient {
  /** The label `npm run dev` prints. */
  name: string
  uid_client: string
  login: string
  vendor: string
  state: OutcomeState
  /** Requests before the state shows: `stale` needs one good load first (its copy); the others show it at once. */
  warmUpRequests: 0 | 1
  sees: OutcomeResponse
  /** What the app sees, for people: the banner, the docs, Swagger UI in dev. */
  about: string
}

/** The kinds of fault an outcome client meets (fault.ts's names and meanings, as the fault upstream's). */
export type OutcomeFault = Extract<Fault, { kind: 'status' | 'reset' | 'slow' | 'answer' | 'garbage_json' }>

const NONE = [] as const
const ok = (degraded: readonly DegradedSection[], stale: readonly StaleSection[] = NONE): OutcomeResponse =>
  ({ status: 200, code: null, degraded, stale, age: stale.length > 0 })
const failed = (status: 502 | 503 | 504, code: NonNullable<OutcomeResponse['code']>): OutcomeResponse =>
  ({ status, code, degraded: NONE, stale: NONE, age: false })

/** An identity of the series: uid_client and login end in the same three digits. */
const identity = (digits: string) =>
  ({ uid_client: `00000000-0000-4000-8000-000000000${digits}`, login: `79990000${digits}`, vendor: 'kia' })

export const OUTCOME_CLIENTS: readonly OutcomeClient[] = [
  {
    name: 'DISCOUNT_MISSING',
    ...identity('101'),
    state: 'discount-missing',
    warmUpRequests: 0,
    sees: ok(['discount']),
    about: '200 with discount null, degraded ["discount"], x-degraded: discount (the dealer\'s discount lookup fails)'
  },
  {
    name: 'CONTRACTOR_MISSING',
    ...identity('102'),
    state: 'contractor-missing',
    warmUpRequests: 0,
    sees: ok(['contractor']),
    about: '200 with contractor null, degraded ["contractor"], x-degraded: contractor (the dealer\'s contractor ' +
      'lookup answers outside its contract)'
  },
  {
    name: 'STALE',
    ...identity('103'),
    state: 'stale',
    warmUpRequests: 1,
    sees: ok(NONE, ['passport', 'discount', 'contractor']),
    about: 'the first request loads the profile; from the second on the passport fails and the copy answers: ' +
      '200 with stale ["passport","discount","contractor"], x-stale and Age'
  },
  {
    name: 'PASSPORT_502',
    ...identity('502'),
    state: 'passport-502',
    warmUpRequests: 0,
    sees: failed(502, 'UPSTREAM_BAD_RESPONSE'),
    about: '502 UPSTREAM_BAD_RESPONSE (the passport answers outside its contract; no copy exists)'
  },
  {
    name: 'PASSPORT_503',
    ...identity('503'),
    state: 'passport-503',
    warmUpRequests: 0,
    sees: failed(503, 'UPSTREAM_UNAVAILABLE'),
    about: '503 UPSTREAM_UNAVAILABLE without Retry-After (the passport drops the connection; no copy exists)'
  },
  {
    name: 'PASSPORT_504',
    ...identity('504'),
    state: 'passport-504',
    warmUpRequests: 0,
    sees: failed(504, 'UPSTREAM_TIMEOUT'),
    about: '504 UPSTREAM_TIMEOUT after UPSTREAM_TIMEOUT_MS, 5 s here (the passport never answers in time)'
  }
]

/** Longer than any deadline the service accepts (10 minutes at most): the service gives up first. */
const NEVER_IN_TIME_MS = 11 * 60_000

/**
 * The faults of each state, by operation, from the number of earlier requests of that operation for the identity.
 * Chosen so that no identity, nor all of them together, can open a circuit breaker for the healthy clients: the
 * breakers count a connection dropped, a full-deadline timeout and a 5xx, and at most a quarter of the calls that
 * could open one from any one caller (src/upstream/breaker.ts, callerShare), so only PASSPORT_503 and PASSPORT_504
 * (the passport's) and DISCOUNT_MISSING (the discount's) count there at all; an answer outside the contract or not
 * JSON counts as answered.
 */
const FAULTS: Record<OutcomeState, Partial<Record<OperationName, (earlier: number) => OutcomeFault | undefined>>> = {
  'discount-missing': { 'dealer.discount': () => ({ kind: 'status', status: 500 }) },
  'contractor-missing': {
    'dealer.client': () => ({
      kind: 'answer', status: 200, body: { success: true, data: 'Контрагент', http_code: 200 }
    })
  },
  // The first lookup answers, so the service keeps a copy (PROFILE_STALE_IF_ERROR_S, on by default).
  stale: { 'passport.get_client': earlier => earlier === 0 ? undefined : { kind: 'garbage_json' } },
  'passport-502': { 'passport.get_client': () => ({ kind: 'answer', status: 200, body: withoutViews }) },
  // The service sends a lookup once more after a dropped connection; that one is dropped too.
  'passport-503': { 'passport.get_client': () => ({ kind: 'reset' }) },
  'passport-504': { 'passport.get_client': () => ({ kind: 'slow', ms: NEVER_IN_TIME_MS }) }
}

/** IVANOV's record under another identity: the test identities differ only in how the sandbox fails them. */
function passportOf (client: OutcomeClient): PassportClientFound {
  const { uid_client: uid, login } = client
  return {
    ...fixture.passportFound,
    uid_client: uid,
    client: {
      ...fixture.client,
      uid_client: uid,
      login,
      client_data: { ...fixture.clientDataReg, username: login }
    }
  }
}

// PASSPORT_502's answer: its record without a required field.
const passport502 = OUTCOME_CLIENTS.find(c => c.state === 'passport-502')!
const { catalog_cars_view: _views, ...withoutViews } = passportOf(passport502)

/** The outcome clients as the sandbox's seed: what each operation answers when it does not fail. */
export const outcomeSeeds: readonly SeededClient[] = OUTCOME_CLIENTS.map(client => ({
  label: client.name,
  identity: { uid_client: client.uid_client, login: client.login, vendor: client.vendor },
  passport: passportOf(client),
  discount: fixture.discountWithBonuses,
  contractor: fixture.contractorResult
}))

const stateByUid = new Map(OUTCOME_CLIENTS.map(client => [client.uid_client, client.state]))

/** A sandbox's choice of faults: its own count of each identity's earlier requests. */
export function outcomeFaults (): (operation: OperationName, uid: string) => OutcomeFault | undefined {
  const earlier = new Map<string, number>()
  return (operation, uid) => {
    const state = stateByUid.get(uid.toUpperCase())
    const choose = state === undefined ? undefined : FAULTS[state][operation]
    if (choose === undefined) return undefined
    const key = `${operation}\n${uid.toUpperCase()}`
    const seen = earlier.get(key) ?? 0
    earlier.set(key, seen + 1)
    return choose(seen)
  }
}
