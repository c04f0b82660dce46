// Copies in this process: serialized bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { LRUCache } from 'lru-cache'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

export function memoryStore (maxBytes: number, observer: LastKnownObserver): CopyStore {
  const copies = new LRUCache<string, readonly Buffer[]>({
    maxSize: maxBytes,
    // The key is a 64-character hex name; the Map's own overhead is not counted.
    sizeCalculation: (chunks, name) => chunks.reduce((sum, chunk) => sum + chunk.length, name.length),
    dispose: (_bytes, _name, reason) => { if (reason === 'evict') observer.evicted() }
  })
  return {
    kind: 'memory',
    read (names) {
      for (const name of names) {
        const chunks = copies.get(name)
        if (chunks !== undefined) return Promise.resolve(Buffer.concat(chunks))
      }
      return Promise.resolve(undefined)
    },
    write (name, chunks) {
      // A profile seldom changes between requests: a chunk equal to the one held keeps the held bytes, so
      // the new ones die young instead of the held ones waiting in the old generation for a full collection.
      const held = copies.peek(name)
      const same = (chunk: Buffer, i: number) => held?.[i]?.equals(chunk) === true ? held[i]! : chunk
      copies.set(name, held === undefined ? chunks : chunks.map(same))
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize }
  }
}
