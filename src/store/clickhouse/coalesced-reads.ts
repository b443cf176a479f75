/**
 * @module Plain range reads sent together (read-batcher.ts: those of one turn, and those that come
 * while the queries are in flight; a worker running many requests at once, a batch reading its
 * histories, a busy server) as one query: `PREWHERE (symbol = .. AND period = .. AND ts BETWEEN ..)
 * OR ...`, the rows split by series.
 */
import { allocBars, type Bars } from '../../domain/bars.js'
import { MINUTES_OF } from '../../domain/period.js'
import type { ChunkPeriod } from '../market-store.js'
import { sql, type Connection } from './connection.js'
import { PERIOD_CODE, READ_ROW, decodeInto, tsAt } from './row-binary.js'
import { hiddenBy, type Snapshot } from './snapshot.js'
import type { Tombstone } from './metadata.js'
import { firstOf, ReadBatcher } from './read-batcher.js'

/** Reads at most this many together: one query's text and answer stay modest. */
const MAX_TOGETHER = 64
/**
 * The settings of a small read: one thread (18.16 starts its threads per query, and a second one only
 * waits on a busy machine), and read buffers of 64 KiB rather than 1 MiB per column (a read of a few
 * granules otherwise copies a megabyte of each column it names).
 */
export const SMALL_READ = { max_threads: 1, max_read_buffer_size: 65_536 }
/** Reads together of at most this many rows are small; larger ones read with 1 MiB buffers, on one thread still. */
const SMALL_ROWS = 8192
const ONE_THREAD = { max_threads: 1 }
/** The value columns, as the single reads read them. */
const VALUE_COLUMNS = 'pscale, open, high, low, close, prev_close, vscale, volume, amount'

export interface RangeRead {
  readonly symbol: string
  readonly period: ChunkPeriod
  readonly lo: number
  readonly to: number
  /** The series' tombstones that meet [lo, to]. */
  readonly deletes: readonly Tombstone[]
  /**
   * The read may go with others of its period as one `symbol IN (...)` over the span of their ranges,
   * each symbol's bounds looked up per row (its range covers its series, or the series is short),
   * where a range of its own is an OR branch that ClickHouse tests on every row it reads (64 of them
   * cost five times the server's CPU of the lookup).
   */
  readonly bySymbol: boolean
  /** [lo, to] holds the whole series (no visible row of it lies outside). */
  readonly covers: boolean
}

/** A range read's answer: the rows of its series in its range (unsorted) and each row's volume scale. */
export interface RangeRows {
  readonly bars: Bars
  readonly vscales: Uint8Array
}

/** Range reads of one snapshot sent together, at most MAX_TOGETHER a query. */
export function coalescedReads(entry: Connection): ReadBatcher<Snapshot, RangeRead, RangeRows> {
  return new ReadBatcher<Snapshot, RangeRead, RangeRows>({
    take: firstOf(MAX_TOGETHER),
    send: (s, reads) => readTogether(entry, s, reads),
  })
}

/** One query for `reads`: each one's rows. */
async function readTogether(entry: Connection, s: Snapshot, reads: readonly RangeRead[]): Promise<RangeRows[]> {
  const hidden = reads.flatMap((r) => r.deletes.map((t) => ` AND NOT (${series(r)} AND ${hiddenBy(t, 'ts')})`))
  const symbols = [...new Set(reads.map((r) => r.symbol))]
  const one = symbols.length === 1 && reads.every((r) => r.period === reads[0].period)
  // Rows of several series carry their symbol's index in `symbols` (a byte) and their period's code,
  // so rows are of one size and split by two bytes; rows of one series need neither.
  const key = one
    ? ''
    : `transform(symbol, [${symbols.map((sym) => sql.str(sym)).join(', ')}], [${symbols.map((_, i) => i).join(', ')}], 255), toUInt8(period), `
  return entry.read(
    `SELECT ${key}ts, ${VALUE_COLUMNS} FROM bars PREWHERE ${wanted(reads)}
     WHERE ${s.visibleSql}${[...new Set(hidden)].join('')} FORMAT RowBinary`,
    reads.reduce((n, r) => n + rowsAtMost(r), 0) <= SMALL_ROWS ? SMALL_READ : ONE_THREAD,
    (buf) => split(buf, reads, one ? undefined : symbols),
  )
}

/**
 * Each read's bars (and their volume scales) from an answer: rows of one series, or rows keyed by
 * their symbol's index in `symbols` and their period's code.
 */
function split(buf: Buffer, reads: readonly RangeRead[], symbols: readonly string[] | undefined): RangeRows[] {
  const row = symbols ? KEYED_ROW : READ_ROW
  const runs = symbols ? seriesRuns(buf) : wholeRows(buf)
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  return reads.map((r) => {
    const own = runs.get(symbols ? seriesCode(symbols.indexOf(r.symbol), PERIOD_CODE[r.period]) : 0) ?? []
    // Two reads of one series share its rows: each keeps its own range.
    const inRange = (at: number) => {
      const ts = tsAt(dv, at)
      return ts >= r.lo && ts <= r.to
    }
    let n = 0
    for (let k = 0; k < own.length; k += 2) for (let at = own[k]; at < own[k + 1]; at += row) if (inRange(at)) n++
    const bars = allocBars(n)
    const vscales = new Uint8Array(n)
    let i = 0
    for (let k = 0; k < own.length; k += 2)
      for (let at = own[k]; at < own[k + 1]; at += row) if (inRange(at)) vscales[i] = decodeInto(dv, buf, at, bars, i++)
    return { bars, vscales }
  })
}

/** A read's series as SQL. */
const series = (r: RangeRead) => `symbol = ${sql.str(r.symbol)} AND period = ${sql.str(r.period)}`

/** The most rows a read can return: one a minute (a bucket, a day) of its range. */
function rowsAtMost(r: RangeRead): number {
  const ms = r.period === '1d' ? 86_400_000 : MINUTES_OF[r.period] * 60_000
  return (r.to - r.lo) / ms + 1
}

/**
 * Symbols of one period asked for by symbol at least: the lookups cost more than a few ranges' tests
 * (measured on 18.16: 4 daily reads 5.3 ms of server CPU against 4.0, 8 even, 16 13.4 against 18.3, 64
 * 38 against 188).
 */
const MIN_GROUP = 8

/** A symbol's bounds in a group read by symbol: the hull of its reads' ranges, and whether one covers its series. */
interface Bounds {
  readonly lo: number
  readonly to: number
  readonly covers: boolean
}

/**
 * The rows `reads` ask for: by symbol and period with each symbol's bounds looked up (transform), or
 * by series and range; reads of one series in a group share the bounds that hold them all.
 */
function wanted(reads: readonly RangeRead[]): string {
  const groups = new Map<ChunkPeriod, Map<string, Bounds>>()
  for (const r of reads) {
    if (!r.bySymbol) continue
    const group = groups.get(r.period) ?? new Map<string, Bounds>()
    groups.set(r.period, group)
    const held = group.get(r.symbol)
    const [lo, to] = [Math.ceil(r.lo), Math.floor(r.to)]
    group.set(
      r.symbol,
      held
        ? { lo: Math.min(held.lo, lo), to: Math.max(held.to, to), covers: held.covers || r.covers }
        : { lo, to, covers: r.covers },
    )
  }
  for (const [period, group] of groups) if (group.size < MIN_GROUP) groups.delete(period)
  const ranges = reads
    .filter((r) => !groups.get(r.period)?.has(r.symbol))
    .map((r) => `(${series(r)} AND ts >= ${sql.int(Math.ceil(r.lo))} AND ts <= ${sql.int(Math.floor(r.to))})`)
  for (const [period, bounds] of groups) {
    const symbols = [...bounds.keys()].map((sym) => sql.str(sym)).join(', ')
    // Whole series (a pull of histories): no bounds to test on each row (they cost the server a fifth
    // of such a read); split() keeps each read's own range.
    if ([...bounds.values()].every((b) => b.covers)) {
      ranges.push(`(symbol IN (${symbols}) AND period = ${sql.str(period)})`)
      continue
    }
    // Typed elements: a literal array of negative and large positive numbers has no common type in 18.16.
    const ints = (k: 'lo' | 'to') => [...bounds.values()].map((b) => `toInt64(${sql.int(b[k])})`).join(', ')
    const bound = (k: 'lo' | 'to') => `transform(symbol, [${symbols}], [${ints(k)}], toInt64(0))`
    // The span of the group's ranges, which the primary key narrows to (the newest bars of many symbols: their newest granules).
    const span = [...bounds.values()]
    const lo = Math.min(...span.map((b) => b.lo))
    const to = Math.max(...span.map((b) => b.to))
    ranges.push(
      `(symbol IN (${symbols}) AND period = ${sql.str(period)} AND ts >= ${sql.int(lo)} AND ts <= ${sql.int(to)} AND ts >= ${bound('lo')} AND ts <= ${bound('to')})`,
    )
  }
  return ranges.join(' OR ')
}

/** A row of an answer of several series: the symbol's index and the period's code (a byte each), then a bar as decodeInto reads it. */
const KEYED_ROW = 2 + READ_ROW

/** The key of a series in an answer: its symbol's index and its period's code. */
const seriesCode = (symbol: number, period: number) => symbol * 256 + period

/** The rows of an answer of one series, as one run (seriesRuns' shape, key 0). */
function wholeRows(buf: Buffer): Map<number, number[]> {
  if (buf.length % READ_ROW !== 0)
    throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows of ${READ_ROW}`)
  return new Map([[0, [0, buf.length]]])
}

/**
 * The runs of rows of each series (seriesCode), as [start, end) offsets of each run's first `ts` and
 * past its last: a series' rows come in runs (each part is sorted by series), so an answer of many
 * thousand rows has a handful of runs.
 */
function seriesRuns(buf: Buffer): Map<number, number[]> {
  if (buf.length % KEYED_ROW !== 0)
    throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows of ${KEYED_ROW}`)
  const out = new Map<number, number[]>()
  let runStart = 0
  for (let at = KEYED_ROW; at <= buf.length; at += KEYED_ROW) {
    if (at < buf.length && buf[at] === buf[runStart] && buf[at + 1] === buf[runStart + 1]) continue
    const code = seriesCode(buf[runStart], buf[runStart + 1])
    const runs = out.get(code) ?? []
    runs.push(runStart + 2, at + 2)
    out.set(code, runs)
    runStart = at
  }
  return out
}
