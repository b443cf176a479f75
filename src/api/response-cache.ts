/** @module Answers kept by ETag (data version + request) as UTF-8 bytes: an LRU bounded in bytes, one computation per tag at a time. */
import { LRUCache } from 'lru-cache'
import type { Readable } from 'node:stream'

/** An answer as produced: text or bytes (kept), or a stream for answers too large to hold (never kept). */
export type Produced = string | Buffer | Readable
type Produce = () => Promise<Produced>
/** What a computation hands back besides the cached value: the stream, to the request that produced it. */
interface Flight {
  readonly produce: Produce
  stream?: Readable
}

const bytesOf = (produced: string | Buffer) => (typeof produced === 'string' ? Buffer.from(produced, 'utf8') : produced)

export class ResponseCache {
  readonly #lru: LRUCache<string, Buffer, Flight> | undefined
  hits = 0
  misses = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(readonly maxBytes: number) {
    this.#lru =
      maxBytes > 0
        ? new LRUCache<string, Buffer, Flight>({
            maxSize: maxBytes,
            sizeCalculation: (body) => Math.max(1, body.length),
            maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)), // one answer never takes more than a quarter
            // Concurrent misses of one tag share this one call (lru-cache's fetch is single-flight).
            fetchMethod: async (_tag, _stale, { context }) => {
              const produced = await context.produce()
              if (typeof produced === 'string' || Buffer.isBuffer(produced)) return bytesOf(produced)
              context.stream = produced // not kept: it goes to this request alone
              return undefined
            },
          })
        : undefined
  }

  /** Whether the answer of `tag` is held (it was a success: only successful answers are kept). */
  has(tag: string): boolean {
    return this.#lru?.has(tag) ?? false
  }

  /** The answer of `tag`: held, being computed by another request, or computed now by `produce`. */
  async answer(tag: string, produce: Produce): Promise<Buffer | Readable> {
    const held = this.#lru?.get(tag)
    if (held !== undefined) {
      this.hits++
      return held
    }
    if (this.#lru) {
      const flight: Flight = { produce }
      const status: LRUCache.Status<string, Buffer, Flight> = {}
      const body = await this.#lru.fetch(tag, { context: flight, status })
      if (body !== undefined) {
        if (status.fetch === 'inflight') this.hits++
        else this.misses++
        return body
      }
      if (flight.stream) {
        this.misses++
        return flight.stream
      }
      // Waited on a computation whose answer was a stream (not shareable): produce one of our own.
    }
    this.misses++
    const produced = await produce()
    return typeof produced === 'string' || Buffer.isBuffer(produced) ? bytesOf(produced) : produced
  }

  /** The answer of `tag` if held (a hit, as `answer` counts it), computing nothing: the fast path's read. */
  held(tag: string): Buffer | undefined {
    const body = this.#lru?.get(tag)
    if (body !== undefined) this.hits++
    return body
  }

  /** A second form of an answer already counted (its compressed copy), without counting a hit or miss. */
  peek(key: string): Buffer | undefined {
    return this.#lru?.get(key)
  }

  /** Keeps a second form of an answer (its compressed copy) under its own key; lru-cache bounds it with the rest. */
  set(key: string, body: Buffer): void {
    this.#lru?.set(key, body)
  }

  /** Bytes held (lru-cache's own accounting of what it holds). */
  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0
  }
}
