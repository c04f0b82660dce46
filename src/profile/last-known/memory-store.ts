// Copies in this process: compressed bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { hash } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { LRUCache } from 'lru-cache'
import { profileExample } from '../../../schemas/profile.ts'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

// A held copy: the profile's digest and its compressed bytes in one string, and the section times in another, so
// that a write of an unchanged profile replaces only the times (the large string is neither copied nor promoted again).
const DIGEST_BYTES = 32
/**
 * What a copy costs beyond its bytes and its name: the entry and its strings' headers, the name's, and the LRU's
 * slots (measured with test/profile/memory-bound.test.ts; docs/performance.md), so the bound is the store's footprint.
 */
export const ENTRY_OVERHEAD_BYTES = 300

/** One copy: digest and compressed profile (latin1), and the times chunk as it was written (latin1). */
interface Held { readonly packed: string, readonly times: string }

/** Whether the held bytes start with this digest: compared in place, no string made of the digest. */
function sameDigest (packed: string, digest: Buffer): boolean {
  for (let i = 0; i < DIGEST_BYTES; i++) if (packed.charCodeAt(i) !== digest[i]) return false
  return true
}

/** Everything but the first chunk (the section times): the profile as answered. */
function profileOf (chunks: readonly Buffer[]): Buffer {
  return chunks.length === 2 ? chunks[1]! : Buffer.concat(chunks.slice(1))
}

export function memoryStore (maxBytes: number, observer: LastKnownObserver): CopyStore {
  // Only this process reads what it compressed, so the dictionary may change with any release.
  const dictionary = Buffer.from(JSON.stringify(profileExample))
  // Held as one-byte strings in the JS heap, not Buffers: a Buffer costs an ArrayBuffer, a backing store and a
  // malloc of its own, more than a small copy's bytes, and scatters the C heap; strings are packed by the GC.
  const copies = new LRUCache<string, Held>({
    maxSize: maxBytes,
    sizeCalculation: (held, name) => held.packed.length + held.times.length + name.length + ENTRY_OVERHEAD_BYTES,
    dispose: (_held, _name, reason) => { if (reason === 'evict') observer.evicted() }
  })
  return {
    kind: 'memory',
    read (names) {
      for (const name of names) {
        const held = copies.get(name)
        if (held === undefined) continue
        try {
          const profile = inflateRawSync(Buffer.from(held.packed, 'latin1').subarray(DIGEST_BYTES), { dictionary })
          return Promise.resolve(Buffer.concat([Buffer.from(held.times, 'latin1'), profile]))
        } catch {
          // Never expected of bytes this process compressed; a read still never fails a request.
          copies.delete(name)
        }
      }
      return Promise.resolve(undefined)
    },
    write (name, chunks, known) {
      const times = chunks[0] ?? Buffer.alloc(0)
      const profile = profileOf(chunks)
      const digest = known ?? hash('sha256', profile, 'buffer')
      const held = copies.get(name)
      // A profile seldom changes between requests: then only its times are new, the compressed string is kept.
      let packed = held !== undefined && sameDigest(held.packed, digest) ? held.packed : undefined
      if (packed === undefined) {
        // Deflate at level 1 primed with the documented profile: the field names and texts every profile shares
        // cost next to nothing, so a small profile keeps a tenth to a third of its bytes, for about 20 µs.
        const deflated = deflateRawSync(profile, { level: 1, dictionary })
        const own = Buffer.allocUnsafe(DIGEST_BYTES + deflated.length)
        digest.copy(own, 0)
        deflated.copy(own, DIGEST_BYTES)
        // A flat string of its own: nothing of the previous copy or the temporary Buffers is retained.
        packed = own.toString('latin1')
      }
      copies.set(name, { packed, times: times.toString('latin1') })
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize },
    clear () { copies.clear() }
  }
}
