/**
 * @module Reads from the `blobs` table (FORMAT.md, "Blobs"): where a series' puts wrote their bars as
 * chunk BLOBs too, a read takes the few rows that hold its range rather than a row per bar, the reads
 * of one turn (a batch's symbols, the requests a worker runs at once) in one query. The blobs stand
 * for the bars only where the bars table would give the same answer: where puts overlap the newer
 * put's bar is taken at each timestamp, as there; a blob that a tombstone hides in part sends the read
 * back to the bars table.
 */
import { allocBars, lowerBound, mergeBars, sliceBars, type Bars } from '../../domain/bars.js'
import type { StoredPeriod } from '../../domain/period.js'
import { ChunkCorruptError, decodeChunkInto } from '../chunk-codec.js'
import { sql, type Connection } from './connection.js'
import { newer, type Tombstone } from './metadata.js'
import { decodeBlobRows, type BlobRow } from './row-binary.js'
import { ReadBatcher } from './read-batcher.js'
import type { Snapshot } from './snapshot.js'

/** Symbols in one query at most. */
const MAX_TOGETHER = 64
/** One thread a query: the rows are few, and a second thread only waits on a busy machine. */
const ONE_THREAD = { max_threads: 1 }

export interface BlobRead {
  readonly symbol: string
  readonly period: StoredPeriod
  readonly lo: number
  readonly to: number
  /** The series' tombstones. */
  readonly deletes: readonly Tombstone[]
}

/**
 * Blob reads of one snapshot sent together (read-batcher.ts), at most MAX_TOGETHER symbols of one
 * period a query: each read's bars of [lo, to], ascending, as the blobs hold them; undefined when they
 * cannot stand for the bars table there.
 */
export function blobReads(entry: Connection): ReadBatcher<Snapshot, BlobRead, Bars | undefined> {
  return new ReadBatcher({ take: together, send: (s, reads) => readBlobs(entry, s, reads) })
}

/** One query for `reads` (of one period). */
async function readBlobs(entry: Connection, s: Snapshot, reads: readonly BlobRead[]): Promise<(Bars | undefined)[]> {
  // A term per group of reads whose ranges meet: its symbols and the span of their ranges. Reads of
  // the newest bars, or of whole histories, are one group (one `symbol IN`, which costs the server far
  // less than a term per read); reads far apart in time (random windows) keep their own, so no query
  // takes the blobs between them.
  const terms = groups(reads).map(
    (g) =>
      `(symbol IN (${sql.list([...g.symbols].map((sym) => sql.str(sym)))}) AND last_ts >= ${sql.int(Math.ceil(g.lo))} AND first_ts <= ${sql.int(Math.floor(g.to))})`,
  )
  const rows = await entry.read(
    `SELECT symbol, first_ts, last_ts, bars, import_id, seq, data FROM blobs
     PREWHERE period = ${sql.str(reads[0].period)} AND (${terms.join(' OR ')})
     WHERE ${s.visibleSql} FORMAT RowBinary`,
    ONE_THREAD,
    decodeBlobRows,
  )
  const bySymbol = new Map<string, BlobRow[]>()
  for (const row of rows) {
    const own = bySymbol.get(row.symbol) ?? []
    own.push(row)
    bySymbol.set(row.symbol, own)
  }
  return reads.map((r) => barsOf(bySymbol.get(r.symbol) ?? [], r))
}

/** Reads grouped where their ranges meet (sorted by start, a group's span grown as they join). */
function groups(reads: readonly BlobRead[]): { symbols: Set<string>; lo: number; to: number }[] {
  const out: { symbols: Set<string>; lo: number; to: number }[] = []
  for (const r of [...reads].sort((a, b) => a.lo - b.lo)) {
    const g = out.at(-1)
    if (g && r.lo <= g.to) {
      g.symbols.add(r.symbol)
      g.to = Math.max(g.to, r.to)
    } else out.push({ symbols: new Set([r.symbol]), lo: r.lo, to: r.to })
  }
  return out
}

/** The positions of up to MAX_TOGETHER symbols' reads of the first read's period (reads of one query share a period). */
function together(waiting: readonly BlobRead[]): number[] {
  const period = waiting[0].period
  const symbols = new Set<string>()
  const taken: number[] = []
  waiting.forEach((r, i) => {
    if (r.period !== period || !(symbols.has(r.symbol) || symbols.size < MAX_TOGETHER)) return
    symbols.add(r.symbol)
    taken.push(i)
  })
  return taken
}

/**
 * The bars of [r.lo, r.to] from the series' blob rows that meet it (where two overlap, the newer put's
 * bar at each timestamp, as the bars table's reads take); undefined unless each row is either hidden
 * whole by a newer tombstone or by none, and every row whole (its checksum).
 */
export function barsOf(rows: readonly BlobRow[], r: BlobRead): Bars | undefined {
  const kept: BlobRow[] = []
  for (const row of rows) {
    if (row.last < r.lo || row.first > r.to) continue
    const hiding = r.deletes.filter((t) => t.fromTs <= row.last && row.first <= t.toTs && newer(t, row))
    if (hiding.some((t) => t.fromTs <= row.first && row.last <= t.toTs)) continue
    if (hiding.length > 0) return undefined
    kept.push(row)
  }
  kept.sort((a, b) => a.first - b.first)
  let overlap = false
  for (let i = 1; i < kept.length; i++) if (kept[i].first <= kept[i - 1].last) overlap = true
  let bars: Bars
  try {
    bars = overlap ? newestPerTimestamp(kept) : decodeAll(kept)
  } catch (err) {
    // A damaged blob: the bars table holds the same bars.
    if (err instanceof ChunkCorruptError) return undefined
    throw err
  }
  const ts = bars.timestamp
  return sliceBars(bars, lowerBound(ts, r.lo), lowerBound(ts, r.to + 1))
}

/** The bars of rows apart in time, in their order, decoded into one allocation. */
function decodeAll(rows: readonly BlobRow[]): Bars {
  const bars = allocBars(rows.reduce((n, row) => n + row.bars, 0))
  let at = 0
  for (const row of rows) {
    decodeChunkInto(row.data, bars, at, 0, row.bars)
    at += row.bars
  }
  return bars
}

/** Where rows overlap: at each timestamp the bar of the row with the greatest (import, seq). */
function newestPerTimestamp(rows: readonly BlobRow[]): Bars {
  const byVersion = [...rows].sort((a, b) => (newer(a, b) ? 1 : newer(b, a) ? -1 : 0))
  return byVersion.reduce((held, row) => mergeBars(held, decodeAll([row])), allocBars(0))
}
