/** @module Answers kept by ETag (data version + request) as UTF-8 bytes: an LRU bounded in bytes, one computation per tag at a time. */
import { LRUCache } from 'lru-cache'

type Produce = () => Promise<string>

export class ResponseCache {
  readonly #lru: LRUCache<string, Buffer, Produce> | undefined
  hits = 0
  misses = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(readonly maxBytes: number) {
    this.#lru =
      maxBytes > 0
        ? new LRUCache<string, Buffer, Produce>({
            maxSize: maxBytes,
            sizeCalculation: (body) => Math.max(1, body.length),
            maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)), // one answer never takes more than a quarter
            // Concurrent misses of one tag share this one call (lru-cache's fetch is single-flight).
            fetchMethod: async (_tag, _stale, { context }) => Buffer.from(await context(), 'utf8'),
          })
        : undefined
  }

  /** Whether the answer of `tag` is held (it was a success: only successful answers are kept). */
  has(tag: string): boolean {
    return this.#lru?.has(tag) ?? false
  }

  /** The answer of `tag`: held, being computed by another request, or computed now by `produce`. */
  async answer(tag: string, produce: Produce): Promise<Buffer> {
    if (!this.#lru) {
      this.misses++
      return Buffer.from(await produce(), 'utf8')
    }
    const held = this.#lru.get(tag)
    if (held !== undefined) {
      this.hits++
      return held
    }
    const status: LRUCache.Status<string, Buffer, Produce> = {}
    const body = await this.#lru.fetch(tag, { context: produce, status })
    if (status.fetch === 'inflight') this.hits++
    else this.misses++
    if (body === undefined) throw new Error('response cache: fetch returned nothing') // not reached: fetchMethod always returns
    return body
  }

  /** Bytes held (lru-cache's own accounting of what it holds). */
  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0
  }
}
