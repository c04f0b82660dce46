// The bench's clients: the sandbox's seeded records under many identities. The profile shares the work
// of concurrent requests of one client (single-flight), so a bench with two clients would measure that
// sharing; with more clients than requests in flight, every profile costs its own three upstream calls,
// as with real traffic of many users.
import { ivanov, petrova, type SeededClient } from '../sandbox/seed.ts'

/** At least one per connection of the largest scenario (200), fewer than the service's 1000 cached tokens. */
export const BENCH_CLIENT_COUNT = 500

/** Client `i`: IVANOV's record for even i (no bonuses), PETROVA's for odd i (bonuses), with its own identity. */
export function benchClient (i: number): SeededClient {
  const base = i % 2 === 0 ? ivanov : petrova
  // Upper-case, as the upstream writes them; the prefix keeps clear of the fixtures' identities.
  const uid = `B0000000-0000-4000-8000-${i.toString(16).toUpperCase().padStart(12, '0')}`
  const login = `7900${String(i).padStart(7, '0')}`
  const { client } = base.passport
  return {
    label: `BENCH-${i}`,
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

export function benchClients (count = BENCH_CLIENT_COUNT): SeededClient[] {
  return Array.from({ length: count }, (_, i) => benchClient(i))
}
