// Copies in this process: serialized bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { LRUCache } from 'lru-cache'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

/** Whether `held` is the concatenation of `chunks` (`length` bytes) but for the first chunk (the section times). */
function sameBeyondFirst (held: Buffer, chunks: readonly Buffer[], length: number): boolean {
  if (length !== held.length) return false
  let at = chunks[0]?.length ?? 0
  for (let i = 1; i < chunks.length; i++) {
    const chunk = chunks[i]!
    if (!held.subarray(at, at + chunk.length).equals(chunk)) return false
    at += chunk.length
  }
  return true
}

export function memoryStore (maxBytes: number, observer: LastKnownObserver): CopyStore {
  const copies = new LRUCache<string, Buffer>({
    maxSize: maxBytes,
    // The key is a 64-character hex name; the Map's own overhead is not counted.
    sizeCalculation: (bytes, name) => bytes.length + name.length,
    dispose: (_bytes, _name, reason) => { if (reason === 'evict') observer.evicted() }
  })
  return {
    kind: 'memory',
    read (names) {
      for (const name of names) {
        const bytes = copies.get(name)
        // A copy: the held bytes are rewritten in place by the next write.
        if (bytes !== undefined) return Promise.resolve(Buffer.from(bytes))
      }
      return Promise.resolve(undefined)
    },
    write (name, chunks) {
      const held = copies.get(name)
      let length = 0
      for (const chunk of chunks) length += chunk.length
      if (held !== undefined && sameBeyondFirst(held, chunks, length)) {
        // A profile seldom changes between requests: only its times are new, written over the held ones.
        chunks[0]!.copy(held, 0)
      } else {
        // Its own memory of the exact size: a small Buffer is a slice of an 8 KiB pool that a kept copy would
        // pin whole, and the answer's bytes would otherwise be kept (and promoted) with it.
        const own = Buffer.allocUnsafeSlow(length)
        let at = 0
        for (const chunk of chunks) at += chunk.copy(own, at)
        copies.set(name, own)
      }
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize }
  }
}
