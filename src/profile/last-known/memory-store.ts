// Copies in this process: serialized bytes under a byte bound, the least recently used out first, so
// memory stays inside the service's RSS target whatever the number of clients.
import { LRUCache } from 'lru-cache'
import type { LastKnownObserver } from './observer.ts'
import type { CopyStore } from './store.ts'

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
        if (bytes !== undefined) return Promise.resolve(bytes)
      }
      return Promise.resolve(undefined)
    },
    write (name, plain) {
      copies.set(name, plain)
      observer.written()
    },
    delete (names) { for (const name of names) copies.delete(name) },
    get size () { return copies.calculatedSize }
  }
}
