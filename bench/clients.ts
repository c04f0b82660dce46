// The bench's clients: the sandbox's seeded records under many identities. The profile shares the work
// of concurrent requests of one client (single-flight), so a bench with two clients would measure that
// sharing; with more clients than requests in flight, every profile costs its own three upstream calls,
// as with real traffic of many users.
import * as fixture from '../schemas/fixtures.ts'
import { ivanov, petrova, type SeededClient } from '../sandbox/seed.ts'

/** At least one per connection of the largest scenario (200), fewer than a key set's 1000 cached tokens. */
const BENCH_CLIENT_COUNT = 500
/** More active clients than a key set's verified-token cache holds (1000): a real deployment's (scenario m). */
const MANY_CLIENT_COUNT = 5000
/** Heavy users of the marketplace app: this many viewed cars in the passport answer (about 106 KB). */
const LARGE_VIEWED_CARS = 300
/** Two per connection of the large-profile scenario (50): the sandbox holds each one's answer. */
const LARGE_CLIENT_COUNT = 100

/**
 * The clients each profile scenario sends: `default` BENCH_CLIENT_COUNT clients of 1 or 3 viewed cars (they would fit
 * a key set's verified-token cache), `many` MANY_CLIENT_COUNT of them (more than it holds), `large`
 * LARGE_CLIENT_COUNT clients of LARGE_VIEWED_CARS viewed cars each.
 */
export type ClientSetName = 'default' | 'many' | 'large'

/** Upper-case, as the upstream writes them; the prefix keeps clear of the fixtures' identities. */
const uidOf = (prefix: string, i: number) =>
  `${prefix}-0000-4000-8000-${i.toString(16).toUpperCase().padStart(12, '0')}`

function underIdentity (base: SeededClient, label: string, uid: string, login: string): SeededClient {
  const { client } = base.passport
  return {
    label,
    identity: { vendor: base.identity.vendor, login, uid_client: uid },
    passport: {
      ...base.passport,
      uid_client: uid,
      client: { ...client, uid_client: uid, login, client_data: { ...client.client_data, username: login } }
    },
    discount: base.discount,
    contractor: base.contractor
  }
}

/** Client `i`: IVANOV's record for even i (no bonuses), PETROVA's for odd i (bonuses), with its own identity. */
function benchClient (i: number): SeededClient {
  return underIdentity(i % 2 === 0 ? ivanov : petrova, `BENCH-${i}`, uidOf('B0000000', i),
    `7900${String(i).padStart(7, '0')}`)
}

/** Heavy client `i`: IVANOV's record with `viewedCars` viewed cars (the fixture's, cycled, each its own id). */
export function benchLargeClient (i: number, viewedCars = LARGE_VIEWED_CARS): SeededClient {
  const client = underIdentity(ivanov, `BENCH-LARGE-${i}`, uidOf('B0000300', i), `7930${String(i).padStart(7, '0')}`)
  const viewed = fixture.catalogCarsView
  client.passport.catalog_cars_view = Array.from({ length: viewedCars }, (_, car) => ({
    ...viewed[car % viewed.length]!, id_user_breadcrumbs: 60_000 + car
  }))
  return client
}

function benchClients (count = BENCH_CLIENT_COUNT): SeededClient[] {
  return Array.from({ length: count }, (_, i) => benchClient(i))
}

/** The clients of one set, in the order connections take them. */
export function clientSet (name: ClientSetName): SeededClient[] {
  if (name === 'large') return Array.from({ length: LARGE_CLIENT_COUNT }, (_, i) => benchLargeClient(i))
  return benchClients(name === 'many' ? MANY_CLIENT_COUNT : BENCH_CLIENT_COUNT)
}

/** Every client the sandbox must know: the default set is the first of the many. */
export function sandboxClients (): SeededClient[] {
  return [...clientSet('many'), ...clientSet('large')]
}
