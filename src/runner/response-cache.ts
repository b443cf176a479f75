/** @module Answers kept by ETag (data version + request) as UTF-8 bytes: an LRU bounded in the memory they hold, one computation per tag at a time. */
import { LRUCache } from 'lru-cache'
import type { ServerResponse } from 'node:http'
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

/**
 * The memory an answer holds: its length when it is a slice of Node's shared pool slab, else its
 * whole ArrayBuffer (a worker's answer may sit in memory a quarter larger than it, or in a spare up
 * to twice its size; a zlib output may be a slice of a larger chunk).
 */
export const memoryHeld = (body: Buffer): number =>
  body.buffer.byteLength === Buffer.poolSize ? body.length : body.buffer.byteLength

/** The cached answer a response writes (ResponseCache's `writing`). */
const BODY = Symbol('mdq.cachedBody')
type Writing = ServerResponse & { [BODY]?: Buffer }

export interface ResponseCacheOptions {
  /**
   * Where an answer's memory goes once it has left the cache and no response is writing it (the
   * runner's `written`: its workers write later answers there), so a cache under misses makes no new
   * memory for the main thread's GC to find. An answer whose response closed before it finished is
   * never handed back (its socket may still have held it).
   */
  readonly handBack?: (body: Buffer) => void
}

export class ResponseCache {
  readonly #lru: LRUCache<string, Buffer, Flight> | undefined
  readonly #handBack: ((body: Buffer) => void) | undefined
  /** Responses writing each answer (`writing`), until they finish or close. */
  readonly #writes = new Map<Buffer, number>()
  /** Answers out of the cache, handed back on the next turn (by then whoever got one before it left has said it is writing it). */
  #left: Buffer[] = []
  /** Answers out of the cache and still being written: handed back when the last write finishes. */
  readonly #leftWriting = new Set<Buffer>()
  /** Answers a response closed on before it finished: never handed back. */
  readonly #unfinished = new WeakSet<Buffer>()
  /** A writing response's 'close' listener: after 'finish' (its socket no longer reads the body), or when the client left first. */
  readonly #closed: (this: Writing) => void
  hits = 0
  misses = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(
    readonly maxBytes: number,
    { handBack }: ResponseCacheOptions = {},
  ) {
    this.#handBack = handBack
    const written = (body: Buffer, finished: boolean) => this.#written(body, finished)
    this.#closed = function (this: Writing) {
      written(this[BODY]!, this.writableFinished)
    }
    this.#lru =
      maxBytes > 0
        ? new LRUCache<string, Buffer, Flight>({
            maxSize: maxBytes,
            sizeCalculation: (body) => Math.max(1, memoryHeld(body)),
            ...(handBack && { dispose: (body: Buffer) => this.#leave(body) }),
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

  /**
   * Says that `res` writes `body` (an answer this cache gave out): its memory is not handed back
   * before that response has closed, and never if it closed unfinished. Called before the write
   * starts, in the turn the answer was got. (One listener shared by all responses, the body on the
   * response: no closure a request, on the fast path's hits too.)
   */
  writing(body: Buffer, res: ServerResponse): void {
    if (this.#handBack === undefined) return
    this.#writes.set(body, (this.#writes.get(body) ?? 0) + 1)
    ;(res as Writing)[BODY] = body
    res.on('close', this.#closed)
  }

  /**
   * An answer this cache does not keep (it is off), for `res` alone: handed back once that response
   * has written it (never if it closed unfinished), as an evicted answer is.
   */
  passing(body: Buffer, res: ServerResponse): void {
    if (this.#handBack === undefined) return
    this.writing(body, res)
    this.#leave(body)
  }

  #written(body: Buffer, finished: boolean): void {
    if (!finished) this.#unfinished.add(body)
    const writes = this.#writes.get(body)! - 1
    if (writes > 0) return void this.#writes.set(body, writes)
    this.#writes.delete(body)
    if (this.#leftWriting.delete(body)) this.#giveBack(body)
  }

  #leave(body: Buffer): void {
    if (this.#left.push(body) === 1) setImmediate(() => this.#handBackLeft())
  }

  #handBackLeft(): void {
    const left = this.#left
    this.#left = []
    for (const body of left) {
      if (this.#writes.has(body)) this.#leftWriting.add(body)
      else this.#giveBack(body)
    }
  }

  #giveBack(body: Buffer): void {
    if (!this.#unfinished.has(body)) this.#handBack!(body)
  }

  /** Memory held by the answers (lru-cache's own accounting, by memoryHeld). */
  get bytes(): number {
    return this.#lru?.calculatedSize ?? 0
  }
}
