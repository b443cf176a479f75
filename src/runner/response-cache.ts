/** @module Answers kept by ETag (data version + request) as UTF-8 bytes: an LRU bounded in the memory they hold, one computation per tag at a time. */
import { LRUCache } from 'lru-cache'
import type { Readable } from 'node:stream'
import { AnswerMemory } from './answer-memory.js'

/** An answer as produced: text or bytes (kept), or a stream for answers too large to hold (never kept). */
export type Produced = string | Buffer | Readable
type Produce = () => Promise<Produced>
/** What a computation hands back besides the cached value: the stream, to the request that produced it. */
interface Flight {
  readonly produce: Produce
  stream?: Readable
}

const bytesOf = (produced: string | Buffer) => (typeof produced === 'string' ? Buffer.from(produced, 'utf8') : produced)

/**
 * The memory an answer holds: its length when it is a slice of Node's shared pool slab, else its
 * whole ArrayBuffer (a worker's answer may sit in memory a quarter larger than it, or in a spare up
 * to twice its size; a zlib output may be a slice of a larger chunk).
 */
export const memoryHeld = (body: Buffer): number =>
  body.buffer.byteLength === Buffer.poolSize ? body.length : body.buffer.byteLength

export interface ResponseCacheOptions {
  /** Where an evicted answer's memory goes back to the workers once no response is writing it; default: nowhere. */
  readonly memory?: AnswerMemory
}

export class ResponseCache {
  readonly #lru: LRUCache<string, Buffer, Flight> | undefined
  /** The app's answer memory: whoever sends an answer this cache gave out tells it (`writing`). */
  readonly memory: AnswerMemory
  hits = 0
  misses = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(
    readonly maxBytes: number,
    { memory = new AnswerMemory() }: ResponseCacheOptions = {},
  ) {
    this.memory = memory
    this.#lru =
      maxBytes > 0
        ? new LRUCache<string, Buffer, Flight>({
            maxSize: maxBytes,
            sizeCalculation: (body) => Math.max(1, memoryHeld(body)),
            ...(memory.recycles && { dispose: (body: Buffer) => memory.release(body) }),
            maxEntrySize: Math.max(1, Math.floor(maxBytes / 4)), // one answer never takes more than a quarter
            // Concurrent misses of one tag share this one call (lru-cache's fetch is single-flight).
            // A call still running when its entry is evicted (its placeholder is older than the
            // answers that arrived meanwhile: a small cache under many misses) still answers its
            // requests, uncached; by default lru-cache would reject them ('evicted': a 500).
            ignoreFetchAbort: true,
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

  /** Memory held by the answers (lru-cache's own accounting, by memoryHeld). */
  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0
  }
}
