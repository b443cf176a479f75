/** @module The 1m chunks a write transaction wrote, kept decoded (bounded) so its rollup rebuild reads them back without decoding. */
import { allocBars, barCount, concatBars, copyBars, lowerBound, sliceBars, type Bars } from '../../domain/bars.js'
import { decodeChunkInto } from '../chunk-codec.js'
import type { ChunkStatements } from './chunk-statements.js'
import { CHUNK_SPAN_MS } from './schema.js'

/** Rows kept over all chunks (64 bytes each): a sorted file's flush and the chunk before it. */
const MAX_ROWS = 1 << 18

/**
 * What the transaction wrote to each 1m chunk, as written, newest last. Every 1m write of the
 * transaction passes through `set` (the writer holds the file's write lock), so a chunk held here
 * is the chunk in the transaction. The rollup rebuild that follows a flush reads the days it
 * touched: without this it decoded the chunks just encoded (a sixth of an import's main thread).
 */
export class WrittenChunks {
  readonly #parts = new Map<string, Bars>()
  #rows = 0

  /** The chunk at `start` now holds `bars` (none: it was deleted); `owned`: no one else holds the arrays (no copy needed). */
  set(symbol: string, start: number, bars: Bars | undefined, owned = false): void {
    const key = `${symbol}\0${start}`
    const old = this.#parts.get(key)
    if (old) {
      this.#rows -= barCount(old)
      this.#parts.delete(key)
    }
    if (!bars || barCount(bars) === 0) return
    // Else a copy: the caller's arrays are its own to reuse once the write returns.
    let own = bars
    if (!owned) {
      own = allocBars(barCount(bars))
      copyBars(bars, 0, barCount(bars), own, 0)
    }
    this.#parts.set(key, own)
    this.#rows += barCount(own)
    for (const [k, v] of this.#parts) {
      if (this.#rows <= MAX_ROWS) break
      this.#parts.delete(k)
      this.#rows -= barCount(v)
    }
  }

  get(symbol: string, start: number): Bars | undefined {
    return this.#parts.get(`${symbol}\0${start}`)
  }
}

/**
 * A symbol's 1m bars in [from, to] as the transaction holds them (readBarsWith's answer), kept chunks
 * not decoded. Read only: a range inside one kept chunk is a view of it (the rollup rebuild only reads).
 */
export function readMinuteBars(
  st: ChunkStatements,
  written: WrittenChunks,
  symbol: string,
  from: number,
  to: number,
): Bars {
  const parts: Bars[] = []
  for (const span of st.chunkSpans.iterate(symbol, '1m', to, from - CHUNK_SPAN_MS['1m'], from)) {
    let bars = written.get(symbol, span.start_ms)
    if (!bars) {
      const row = st.chunkAt.get(symbol, '1m', span.start_ms)
      if (!row) continue
      bars = allocBars(row.count)
      decodeChunkInto(row.data, bars, 0, 0, row.count)
    }
    const lo = span.first_ms < from ? lowerBound(bars.timestamp, from) : 0
    const hi = span.last_ms > to ? lowerBound(bars.timestamp, to + 1) : barCount(bars)
    if (hi > lo) parts.push(sliceBars(bars, lo, hi))
  }
  return concatBars(parts)
}
