/**
 * @module Decoded chunks a reading connection keeps (FORMAT.md "Connections"). Under a live feed
 * another connection commits many times a second, and each commit empties this connection's page
 * cache (SQLite resets its pager), so a symbol's answer computed again after a push read its chunk
 * BLOBs' overflow pages back and decoded them once more, the most of that answer's cost. A chunk of
 * 1m or 1d bars is known by its key and span while the store's generation stands: within one
 * generation such a chunk only grows (a fold appends the tail's bars after its last one), and every
 * other change of a chunk moves the generation (sqlite-writer.ts). Rollup chunks are rebuilt in
 * place by folds and are never kept here.
 */
import { LRUCache } from 'lru-cache'
import { BAR_FIELDS, barCount, type Bars } from '../../domain/bars.js'
import type { ChunkPeriod } from '../market-store.js'

/** Decoded bars a connection keeps: about 700 daily chunks (a symbol's 1,024 days each). */
export const CHUNK_CACHE_BYTES = 32 << 20
/**
 * Chunks missed once that a connection remembers: a chunk is kept at its second miss, so a sweep
 * over the market (every symbol's latest bar, once) reads as it did and churns nothing.
 */
export const CHUNK_SEEN_KEYS = 20_000

/** A chunk row without its BLOB, with the store's generation read by the same statement. */
export interface ChunkSpan {
  readonly start_ms: number
  readonly first_ms: number
  readonly last_ms: number
  readonly count: number
  readonly generation: number
}

const keyOf = (symbol: string, period: ChunkPeriod, span: ChunkSpan) => `${symbol}/${period}/${span.start_ms}`

interface Held {
  readonly first: number
  readonly last: number
  readonly count: number
  readonly bars: Bars
}

/**
 * Whether chunks of `period` are kept: daily ones, which only grow within a generation and which
 * most answers read again and again (daily bars, the prev_close of minute bars, weeks to years).
 * 1m chunks too grow only, but windows over them are mostly read once: decoding each whole to keep
 * it cost a load of distinct windows (the live bench's uncached reads) more than the reuse gave back.
 */
export const keptPeriod = (period: ChunkPeriod): boolean => period === '1d'

export class ChunkCache {
  readonly #lru: LRUCache<string, Held>
  readonly #seen = new LRUCache<string, true>({ max: CHUNK_SEEN_KEYS })
  #generation = -1
  hits = 0
  misses = 0

  constructor(maxBytes = CHUNK_CACHE_BYTES) {
    this.#lru = new LRUCache<string, Held>({
      maxSize: maxBytes,
      sizeCalculation: (held) => Math.max(1, barCount(held.bars) * 8 * BAR_FIELDS.length),
    })
  }

  /** The kept bars of the chunk `span` of (symbol, period), if kept as of its generation. Shared: the caller copies what it hands on. */
  get(symbol: string, period: ChunkPeriod, span: ChunkSpan): Bars | undefined {
    if (span.generation !== this.#generation) {
      this.#lru.clear()
      this.#generation = span.generation
    }
    const held = this.#lru.get(keyOf(symbol, period, span))
    if (held && held.first === span.first_ms && held.last === span.last_ms && held.count === span.count) {
      this.hits++
      return held.bars
    }
    this.misses++
    return undefined
  }

  /** Whether a chunk just missed is to be kept: it was missed before (else it is remembered as missed once). */
  admits(symbol: string, period: ChunkPeriod, span: ChunkSpan): boolean {
    const key = keyOf(symbol, period, span)
    if (this.#seen.has(key)) return true
    this.#seen.set(key, true)
    return false
  }

  /** Keeps `bars`, the whole chunk `span` of (symbol, period) as decoded from its BLOB. */
  set(symbol: string, period: ChunkPeriod, span: ChunkSpan, bars: Bars): void {
    if (span.generation !== this.#generation) return
    this.#lru.set(keyOf(symbol, period, span), { first: span.first_ms, last: span.last_ms, count: span.count, bars })
  }
}
