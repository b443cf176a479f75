/**
 * @module Answers kept by ETag (data version + request) as UTF-8 bytes: an LRU bounded in the memory
 * they hold, one computation per tag at a time; optionally, a request's previous answer sent while
 * its new one is computed in the background (stale-while-revalidate, bounded in age).
 */
import { LRUCache } from 'lru-cache'
import type { Readable } from 'node:stream'
import { performance } from 'node:perf_hooks'
import pLimit, { type LimitFunction } from 'p-limit'
import { AnswerMemory } from './answer-memory.js'

/** An answer as produced: text or bytes (kept), or a stream for answers too large to hold (never kept). */
export type Produced = string | Buffer | Readable
/** How the cache asks for an answer: `background` when no request waits on it (a stand-in was sent). */
export interface Production {
  readonly background?: true
}
type Produce = (how?: Production) => Promise<Produced>
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
  /**
   * How long after a request's answer was last known current it may still be sent while the answer
   * of the data's newer version is computed in the background (ms; 0, the default: never, every
   * answer waits on its own data's). Bounds how far behind the store such an answer can be.
   */
  readonly staleMs?: number
  /** Background computations of newer answers at a time (default 1): they queue behind each other, not before other requests' work. */
  readonly refreshesAtOnce?: number
  /** Milliseconds on a monotonic clock (default performance.now): tests move it by hand. */
  readonly clock?: () => number
}

/** The newest answer known of one request (whatever its version): its tag, and when it was last known current. */
export interface Latest {
  tag: string
  confirmedMs: number
  /** Newer answers of the request being computed in the background: while any is, `tag`'s stands in. */
  refreshes: number
  /** The newest of those: an older one still queued is skipped. */
  newest?: string
}

/** Background computations queued at most: past it a request computes its own answer, as without stand-ins (each queued one holds its request). */
const MAX_QUEUED = 4096

/** A request's previous answer, sent while its new one is computed. */
export interface StandIn {
  readonly tag: string
  readonly body: Buffer
}

export class ResponseCache {
  readonly #lru: LRUCache<string, Buffer, Flight> | undefined
  /** The app's answer memory: whoever sends an answer this cache gave out tells it (`writing`). */
  readonly memory: AnswerMemory
  /** The newest answer of each request (by its digest), for stand-ins: bounded in entries, each a few dozen bytes. */
  readonly #latest = new LRUCache<string, Latest>({ max: 1 << 16 })
  /** Tags whose answers are being computed in the background. */
  readonly #refreshing = new Set<string>()
  readonly #refresh: LimitFunction
  readonly #staleMs: number
  readonly #clock: () => number
  #closed = false
  hits = 0
  misses = 0
  /** Answers sent in place of a newer one being computed (stand-ins), each also a hit. */
  stale = 0

  /** @param maxBytes 0 disables the cache. */
  constructor(
    readonly maxBytes: number,
    {
      memory = new AnswerMemory(),
      staleMs = 0,
      refreshesAtOnce = 1,
      clock = () => performance.now(),
    }: ResponseCacheOptions = {},
  ) {
    this.memory = memory
    this.#staleMs = maxBytes > 0 ? staleMs : 0
    this.#clock = clock
    this.#refresh = pLimit(refreshesAtOnce)
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

  /**
   * `request`'s previous answer, when `tag` (its answer at the data's newer version) is not held and
   * that answer was known current at most `staleMs` ago: `tag`'s is then computed in the background
   * (once, and queued behind other such computations). Undefined when stand-ins are off or none
   * qualifies: the caller computes `tag`'s answer, or waits on it.
   */
  standIn(request: string, tag: string, produce: Produce): StandIn | undefined {
    if (this.#staleMs <= 0 || this.#closed || this.#lru === undefined || this.#lru.has(tag)) return undefined
    const latest = this.#latest.get(request)
    if (latest === undefined || latest.tag === tag || this.#clock() - latest.confirmedMs > this.#staleMs)
      return undefined
    const body = this.#lru.get(latest.tag)
    if (body === undefined) return undefined
    if (!this.#refreshing.has(tag)) {
      if (this.#refresh.pendingCount >= MAX_QUEUED) return undefined
      this.#refreshing.add(tag)
      latest.refreshes++
      latest.newest = tag
      const knownMs = this.#clock()
      void this.#refresh(() => this.#compute(latest, request, tag, knownMs, produce)).finally(() => {
        this.#refreshing.delete(tag)
        latest.refreshes--
      })
    }
    this.stale++
    return { tag: latest.tag, body }
  }

  /**
   * Whether `latest`'s answer, held by the fast path, may stand in for its request now: a newer one
   * is being computed and it was known current within the bound. The full path started that
   * computation (standIn); the fast path then sends the stand-in itself (and counts it in `stale`).
   */
  standsIn(latest: Latest): boolean {
    return latest.refreshes > 0 && !this.#closed && this.#clock() - latest.confirmedMs <= this.#staleMs
  }

  /** No more stand-ins, and the background computations not yet started are dropped: the app is closing. */
  close(): void {
    this.#closed = true
    this.#refresh.clearQueue()
  }

  /**
   * Computes `tag`'s answer into the cache (as a request would, single-flight), known current at
   * `knownMs`; nothing when a later version's answer was queued or known current since. A failure is
   * left for the requests after the stand-ins to meet.
   */
  async #compute(latest: Latest, request: string, tag: string, knownMs: number, produce: Produce): Promise<void> {
    if (latest.newest !== tag || (latest.tag !== tag && latest.confirmedMs > knownMs)) return
    const flight: Flight = { produce: () => produce({ background: true }) }
    const status: LRUCache.Status<string, Buffer, Flight> = {}
    try {
      const body = await this.#lru!.fetch(tag, { context: flight, status })
      if (status.fetch === 'miss') this.misses++ // not when a request had computed it meanwhile
      if (body !== undefined) this.confirm(request, tag, knownMs)
      else flight.stream?.destroy() // too large to hold: no one asked for this one
    } catch {
      // The next request past the stand-ins' age computes it again and answers the error.
    }
  }

  /**
   * Records `tag` as `request`'s answer, current at `knownMs` (default now: sent at the data version
   * it is of), unless another was known current later. The record, for a path that confirms it
   * again itself (fast-answers.ts); undefined when stand-ins are off.
   */
  confirm(request: string, tag: string, knownMs = this.#clock()): Latest | undefined {
    if (this.#staleMs <= 0) return undefined
    const latest = this.#latest.get(request)
    if (latest === undefined) {
      const fresh = { tag, confirmedMs: knownMs, refreshes: 0 }
      this.#latest.set(request, fresh)
      return fresh
    }
    if (knownMs >= latest.confirmedMs) {
      latest.tag = tag
      latest.confirmedMs = knownMs
    }
    return latest
  }

  /** The clock stand-ins are aged by: the fast path confirms its answers with it. */
  now(): number {
    return this.#clock()
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
