// Copies in this process: compressed bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { hash } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { LRUCache } from 'lru-cache'
import { profileExample } from '../../../schemas/profile.ts'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

// A held copy: the profile's digest, the length of the times, the times, the compressed profile.
const DIGEST_BYTES = 32
const TIMES_AT = DIGEST_BYTES + 2
/**
 * What a copy costs beyond its bytes and its name: the string's header, the name's, and the LRU's slots
 * (measured with test/profile/memory-bound.test.ts; docs/performance.md), so the bound is the store's footprint.
 */
export const ENTRY_OVERHEAD_BYTES = 200

/** Everything but the first chunk (the section times): the profile as answered. */
function profileOf (chunks: readonly Buffer[]): Buffer {
  return chunks.length === 2 ? chunks[1]! : Buffer.concat(chunks.slice(1))
}

export function memoryStore (maxBytes: number, observer: LastKnownObserver): CopyStore {
  // Only this process reads what it compressed, so the dictionary may change with any release.
  const dictionary = Buffer.from(JSON.stringify(profileExample))
  // Held as one-byte strings in the JS heap, not Buffers: a Buffer costs an ArrayBuffer, a backing store and a
  // malloc of its own, more than a small copy's bytes, and scatters the C heap; strings are packed by the GC.
  const copies = new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (held, name) => held.length + name.length + ENTRY_OVERHEAD_BYTES,
    dispose: (_held, _name, reason) => { if (reason === 'evict') observer.evicted() }
  })
  return {
    kind: 'memory',
    read (names) {
      for (const name of names) {
        const held = copies.get(name)
        if (held === undefined) continue
        const bytes = Buffer.from(held, 'latin1')
        const timesEnd = TIMES_AT + bytes.readUInt16BE(DIGEST_BYTES)
        try {
          const profile = inflateRawSync(bytes.subarray(timesEnd), { dictionary })
          return Promise.resolve(Buffer.concat([bytes.subarray(TIMES_AT, timesEnd), profile]))
        } catch {
          // Never expected of bytes this process compressed; a read still never fails a request.
          copies.delete(name)
        }
      }
      return Promise.resolve(undefined)
    },
    write (name, chunks) {
      const times = chunks[0] ?? Buffer.alloc(0)
      const profile = profileOf(chunks)
      const digest = hash('sha256', profile, 'buffer')
      const held = copies.get(name)
      let packed: Buffer
      if (held !== undefined && held.startsWith(digest.toString('latin1'))) {
        // A profile seldom changes between requests: only its times are new, the compressed bytes kept.
        const timesEnd = TIMES_AT + (held.charCodeAt(DIGEST_BYTES) << 8 | held.charCodeAt(DIGEST_BYTES + 1))
        packed = Buffer.from(held.slice(timesEnd), 'latin1')
      } else {
        // Deflate at level 1 primed with the documented profile: the field names and texts every profile shares
        // cost next to nothing, so a small profile keeps a tenth to a third of its bytes, for about 20 µs.
        packed = deflateRawSync(profile, { level: 1, dictionary })
      }
      const own = Buffer.allocUnsafe(TIMES_AT + times.length + packed.length)
      digest.copy(own, 0)
      own.writeUInt16BE(times.length, DIGEST_BYTES)
      times.copy(own, TIMES_AT)
      packed.copy(own, TIMES_AT + times.length)
      // A flat string of its own: nothing of the previous copy or the temporary Buffer is retained.
      copies.set(name, own.toString('latin1'))
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize },
    clear () { copies.clear() }
  }
}
