/** @module Bars as chunk rows: the range read, the merge-on-write and the range delete over (symbol, period, start_ms). */
import {
  allocBars,
  barCount,
  copyBars,
  lowerBound,
  mergeBars,
  sliceBars,
  withoutRange,
  type Bars,
} from '../../domain/bars.js'
import type { BarQuery, BarRange, ChunkPeriod } from '../market-store.js'
import { ChunkCorruptError, chunkTimestamps, decodeChunk, decodeChunkInto, encodeChunk } from '../chunk-codec.js'
import { keptPeriod, type ChunkCache } from './chunk-cache.js'
import { CHUNK_SPAN_MS } from './schema.js'
import type { ChunkStatements } from './chunk-statements.js'
import type { WrittenChunks } from './written-chunks.js'

export const MAX_MS = 8.64e15

/** A read of more bars than this (a pull, an export) goes past the chunk cache: it would only churn it. */
export const CACHED_READ_MAX_BARS = 10_000

/**
 * Plans newest-first until `limit` bars are covered (chunk counts need no decoding; a chunk cut by
 * the range decodes its timestamps only, to count), then decodes each chunk's wanted bars straight
 * into one allocation, oldest first. With `cache` (a reading connection's), a windowed read of a
 * period it keeps (daily bars) takes decoded chunks from it instead.
 */
export function readBarsWith(st: ChunkStatements, q: BarQuery, cache?: ChunkCache): Bars {
  const from = q.fromMs ?? -MAX_MS
  const to = q.toMs ?? MAX_MS
  if (cache && keptPeriod(q.period) && q.limit <= CACHED_READ_MAX_BARS && q.limit > 0 && from <= to) {
    const read = readKeptBars(st, q, from, to, cache)
    if (read) return read
  }
  // Bars [lo, lo + count) of each chunk's `total`.
  const parts: { blob: Uint8Array; total: number; lo: number; count: number; ts?: Float64Array }[] = []
  let have = 0
  if (q.limit > 0 && from <= to) {
    for (const row of st.chunksDesc.iterate(q.symbol, q.period, to, from - CHUNK_SPAN_MS[q.period], from)) {
      let lo = 0
      let count = row.count
      let ts: Float64Array | undefined
      if (row.first_ms < from || row.last_ms > to) {
        ts = chunkTimestamps(row.data)
        lo = lowerBound(ts, from)
        count = lowerBound(ts, to + 1) - lo
      }
      parts.push({ blob: row.data, total: row.count, lo, count, ts })
      have += count
      if (have >= q.limit) break
    }
  }
  const out = allocBars(Math.min(have, q.limit))
  let skip = have - barCount(out) // leading bars of the oldest part that fall outside `limit`
  let at = 0
  for (let k = parts.length - 1; k >= 0; k--) {
    const { blob, total, lo, count, ts } = parts[k]
    const s = Math.min(skip, count)
    decodeChunkInto(blob, out, at, lo + s, total, lo + count, ts)
    at += count - s
    skip -= s
  }
  return out
}

/**
 * readBarsWith through the chunk cache: the chunks' spans newest first (no BLOB read), each chunk's
 * bars kept, or read and decoded whole and kept when the cache admits it, the wanted ones copied out
 * (the answer never shares the cache's arrays). Undefined when a chunk is neither kept nor admitted
 * (its first miss), or its row is not found: the read is then done the plain way.
 */
function readKeptBars(st: ChunkStatements, q: BarQuery, from: number, to: number, cache: ChunkCache): Bars | undefined {
  const parts: Bars[] = []
  let have = 0
  for (const span of st.chunkSpansDesc.iterate(q.symbol, q.period, to, from - CHUNK_SPAN_MS[q.period], from)) {
    let bars = cache.get(q.symbol, q.period, span)
    if (bars === undefined) {
      if (!cache.admits(q.symbol, q.period, span)) return undefined
      // The same read transaction as the spans' (the iteration holds it): the row is there as listed.
      const row = st.chunkAt.get(q.symbol, q.period, span.start_ms)
      if (row === undefined) return undefined
      bars = decodeChunk(row.data)
      if (barCount(bars) !== span.count)
        throw new ChunkCorruptError(
          `chunk ${q.symbol} ${q.period} ${span.start_ms}: ${barCount(bars)} bars, the row says ${span.count}`,
        )
      cache.set(q.symbol, q.period, span, bars)
    }
    const ts = bars.timestamp
    const lo = span.first_ms < from ? lowerBound(ts, from) : 0
    const hi = span.last_ms > to ? lowerBound(ts, to + 1) : ts.length
    parts.push(sliceBars(bars, lo, hi))
    have += hi - lo
    if (have >= q.limit) break
  }
  const out = allocBars(Math.min(have, q.limit))
  let skip = have - barCount(out) // leading bars of the oldest part that fall outside `limit`
  let at = 0
  for (let k = parts.length - 1; k >= 0; k--) {
    const n = barCount(parts[k])
    const s = Math.min(skip, n)
    copyBars(parts[k], s, n, out, at)
    at += n - s
    skip -= s
  }
  return out
}

/** `owned`: `part` is a fresh array of this module's (a merge), kept without a copy. */
function writeChunk(
  st: ChunkStatements,
  symbol: string,
  period: ChunkPeriod,
  start: number,
  part: Bars,
  written?: WrittenChunks,
  owned = false,
): void {
  const n = barCount(part)
  if (period === '1m') written?.set(symbol, start, part, owned)
  if (n === 0) st.deleteChunk.run(symbol, period, start)
  else st.putChunk.run(symbol, period, start, part.timestamp[0], part.timestamp[n - 1], n, encodeChunk(part))
}

/** `written`: where the transaction's 1m chunks are kept for its rollup rebuild (written-chunks.ts). */
export function putBarsWith(
  st: ChunkStatements,
  symbol: string,
  period: ChunkPeriod,
  bars: Bars,
  written?: WrittenChunks,
): void {
  const ts = bars.timestamp
  for (let i = 1; i < ts.length; i++)
    if (!(ts[i] > ts[i - 1]))
      throw new Error(`putBars ${symbol} ${period}: timestamps must be strictly ascending (index ${i})`)
  const span = CHUNK_SPAN_MS[period]
  let from = 0
  while (from < ts.length) {
    const start = Math.floor(ts[from] / span) * span
    const to = lowerBound(ts, start + span, from)
    let part = sliceBars(bars, from, to)
    // A chunk this transaction wrote is merged as kept, not read and decoded again.
    const kept = period === '1m' ? written?.get(symbol, start) : undefined
    const existing = kept ? undefined : st.chunkAt.get(symbol, period, start)
    if (kept) part = mergeBars(kept, part)
    else if (existing) part = mergeBars(decodeChunk(existing.data), part)
    writeChunk(st, symbol, period, start, part, written, part.timestamp.buffer !== bars.timestamp.buffer)
    from = to
  }
}

/** Chunks inside the range go whole; the (at most two) chunks it cuts are rewritten without it. */
export function deleteBarsWith(
  st: ChunkStatements,
  range: Omit<BarRange, 'period'> & { readonly period: ChunkPeriod },
  written?: WrittenChunks,
): void {
  const from = range.fromMs ?? -MAX_MS
  const to = range.toMs ?? MAX_MS
  if (from > to) return
  const rows = [...st.chunksDesc.iterate(range.symbol, range.period, to, from - CHUNK_SPAN_MS[range.period], from)]
  for (const row of rows) {
    if (row.first_ms >= from && row.last_ms <= to) {
      st.deleteChunk.run(range.symbol, range.period, row.start_ms)
      if (range.period === '1m') written?.set(range.symbol, row.start_ms, undefined)
    } else {
      const kept = withoutRange(decodeChunk(row.data), from, to)
      if (barCount(kept) !== row.count) writeChunk(st, range.symbol, range.period, row.start_ms, kept, written)
    }
  }
}
