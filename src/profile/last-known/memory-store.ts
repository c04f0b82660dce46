// Copies in this process: compressed bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { hash } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import { LRUCache } from 'lru-cache'
import { profileExample } from '../../../schemas/profile.ts'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

// A held copy is one Buffer: the profile's digest, the length of the times, the times, the compressed profile.
const DIGEST_BYTES = 32
const TIMES_AT = DIGEST_BYTES + 2

/** Everything but the first chunk (the section times): the profile as answered. */
function profileOf (chunks: readonly Buffer[]): Buffer {
  return chunks.length === 2 ? chunks[1]! : Buffer.concat(chunks.slice(1))
}

function timesOf (held: Buffer): Buffer {
  return held.subarray(TIMES_AT, TIMES_AT + held.readUInt16BE(DIGEST_BYTES))
}

export function memoryStore (maxBytes: number, observer: LastKnownObserver): CopyStore {
  // Only this process reads what it compressed, so the dictionary may change with any release.
  const dictionary = Buffer.from(JSON.stringify(profileExample))
  const copies = new LRUCache<string, Buffer>({
    maxSize: maxBytes,
    // The key is a 64-character hex name; the Map's own overhead is not counted.
    sizeCalculation: (held, name) => held.length + name.length,
    dispose: (_held, _name, reason) => { if (reason === 'evict') observer.evicted() }
  })
  return {
    kind: 'memory',
    read (names) {
      for (const name of names) {
        const held = copies.get(name)
        if (held === undefined) continue
        const times = timesOf(held)
        try {
          // New memory, the caller's own: the held times are rewritten in place by the next write.
          const profile = inflateRawSync(held.subarray(TIMES_AT + times.length), { dictionary })
          return Promise.resolve(Buffer.concat([times, profile]))
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
      if (held !== undefined && held.readUInt16BE(DIGEST_BYTES) === times.length &&
        digest.equals(held.subarray(0, DIGEST_BYTES))) {
        // A profile seldom changes between requests: only its times are new, written over the held ones.
        times.copy(held, TIMES_AT)
      } else {
        // Deflate at level 1 primed with the documented profile: the field names and texts every profile shares
        // cost next to nothing, so a small profile keeps a tenth to a third of its bytes, for about 20 µs.
        const packed = deflateRawSync(profile, { level: 1, dictionary })
        // Its own memory of the exact size: a small Buffer is a slice of an 8 KiB pool that a kept copy would pin.
        const own = Buffer.allocUnsafeSlow(TIMES_AT + times.length + packed.length)
        digest.copy(own, 0)
        own.writeUInt16BE(times.length, DIGEST_BYTES)
        times.copy(own, TIMES_AT)
        packed.copy(own, TIMES_AT + times.length)
        copies.set(name, own)
      }
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize },
    clear () { copies.clear() }
  }
}
