// What the last-known store reports to metrics, and those metrics; every value comes from a small known set.
import type { Registry } from 'prom-client'
import type { PromClient } from '../../prom.ts'

type CopyStoreOperation = 'read' | 'write' | 'delete'

export interface LastKnownObserver {
  written (): void
  /** A copy pushed out of the memory store by its byte bound. */
  evicted (): void
  /** A Redis value no configured key opens: a wrong or retired key, or tampering. */
  decryptFailed (): void
  /** A Redis command of the store failed or timed out (the request went on without it; a delete is retried). */
  storeFailed (operation: CopyStoreOperation): void
}

export const NO_OBSERVER: LastKnownObserver = {
  written () {},
  evicted () {},
  decryptFailed () {},
  storeFailed () {}
}

/** The store's counters; returns the observer the store reports to. */
export function lastKnownMetrics ({ Counter }: Pick<PromClient, 'Counter'>, registry: Registry): LastKnownObserver {
  const registers = [registry]
  const copiesWritten = new Counter({
    name: 'bff_profile_copies_written_total',
    help: 'Last-known profile copies written (after fresh answers).',
    registers
  })
  const copiesEvicted = new Counter({
    name: 'bff_profile_copies_evicted_total',
    help: 'Last-known profile copies pushed out of the in-process store by PROFILE_CACHE_MAX_BYTES ' +
      '(least recently used first).',
    registers
  })
  const copyDecryptFailures = new Counter({
    name: 'bff_profile_copy_decrypt_failures_total',
    help: 'Last-known copies in Redis that no PROFILE_CACHE_KEY opened (a removed key, or tampering); each was a miss.',
    registers
  })
  const copyStoreFailures = new Counter({
    name: 'bff_profile_copy_store_failures_total',
    help: 'Redis commands of the last-known store that failed or timed out, by operation (read, write, delete); ' +
      'the request went on without them, and a failed delete is sent again until Redis confirms it ' +
      '(each attempt counted).',
    labelNames: ['operation'] as const,
    registers
  })
  return {
    written () { copiesWritten.inc() },
    evicted () { copiesEvicted.inc() },
    decryptFailed () { copyDecryptFailures.inc() },
    storeFailed (operation) { copyStoreFailures.inc({ operation }) }
  }
}
