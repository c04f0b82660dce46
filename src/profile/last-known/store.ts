// Where copies live: in the process (memory-store.ts) or in Redis (redis-store.ts), behind one shape.

export interface CopyStore {
  readonly kind: 'memory' | 'redis'
  /**
   * The plain bytes under the first of `names` that holds a copy; undefined on a miss, and on any
   * failure or after `timeoutMs`: a read never fails a request.
   */
  read (names: readonly string[], timeoutMs: number): Promise<Buffer | undefined>
  /**
   * Best-effort, never awaited: the answer has already gone. The copy is the chunks' concatenation; `digest`, when
   * given, is the SHA-256 of the profile (every chunk but the first).
   */
  write (name: string, chunks: readonly Buffer[], digest?: Buffer): void
  /**
   * Deletes the copy under every name. Redis: retried until Redis confirms it (within bounds), and no copy under
   * a name whose delete is pending is read meanwhile.
   */
  delete (names: readonly string[]): void
  /** Bytes held in the process (memory), 0 for Redis. */
  readonly size: number
  /** Drops what the process holds (memory); Redis keeps its copies. */
  clear (): void
}
