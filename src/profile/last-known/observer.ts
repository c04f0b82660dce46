// What the last-known store reports to metrics; every value comes from a small known set.
import type { StaleSection } from '../../../schemas/profile.ts'

export type CopyStoreOperation = 'read' | 'write' | 'delete'

export interface LastKnownObserver {
  /** A section answered from a copy, and why: the failure's reason, or `fresh_window` (PROFILE_FRESH_S). */
  served (section: StaleSection, reason: string): void
  written (): void
  /** A copy pushed out of the memory store by its byte bound. */
  evicted (): void
  /** A Redis value no configured key opens: a wrong or retired key, or tampering. */
  decryptFailed (): void
  /** A Redis command of the store failed or timed out (best-effort: the request went on without it). */
  storeFailed (operation: CopyStoreOperation): void
}

export const NO_OBSERVER: LastKnownObserver = {
  served () {},
  written () {},
  evicted () {},
  decryptFailed () {},
  storeFailed () {}
}
