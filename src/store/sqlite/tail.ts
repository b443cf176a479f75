/**
 * @module The tail (FORMAT.md "Tail"): bars appended after a series' last chunk, a row each, so that a
 * live minute costs a row and not a chunk rewrite; read merged with the chunks, folded into them later.
 */
import { allocBars, barCount, concatBars, lowerBound, sliceBars, type BarRow, type Bars } from '../../domain/bars.js'
import { minuteBucketStarts } from '../../domain/buckets.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import { STORED_PERIODS, type StoredPeriod } from '../../domain/period.js'
import { buildRollups, isRollupPeriod, type RollupPeriod } from '../../domain/rollups.js'
import type { BarQuery } from '../market-store.js'
import type { ChunkCache } from './chunk-cache.js'
import type { ChunkStatements } from './chunk-statements.js'
import { MAX_MS, readBarsWith } from './chunks.js'
import type { Db } from './sqlite-db.js'

/** A putBars of at most this many bars, all after the series' last chunk, goes to the tail (a live minute, a day's EOD bar). */
export const TAIL_APPEND_MAX = 64
/** Background folding takes a series once its tail holds this many rows (all but the newest, which is still forming). */
export const TAIL_FOLD_ROWS = 16
/** A write folds a series' tail at commit once it holds more than this (a long import of small appends). */
export const TAIL_MAX_ROWS = 1024

const COLUMNS = 'ts, open, high, low, close, volume, amount, prev_close'
type TailRow = [number, number, number, number, number, number, number, number | null]

export function tailStatements(db: Db) {
  return {
    tailRange: db
      .prepare<[string, string, number, number], TailRow>(
        `SELECT ${COLUMNS} FROM tail WHERE symbol = ? AND period = ? AND ts >= ? AND ts <= ? ORDER BY ts`,
      )
      .raw(),
    tailFirst: db
      .prepare<[string, string], number>('SELECT ts FROM tail WHERE symbol = ? AND period = ? ORDER BY ts LIMIT 1')
      .pluck(),
    tailLast: db
      .prepare<[string, string], number>('SELECT ts FROM tail WHERE symbol = ? AND period = ? ORDER BY ts DESC LIMIT 1')
      .pluck(),
    tailSpan: db
      .prepare<[string, string], [number | null, number | null, number]>(
        'SELECT min(ts), max(ts), count(*) FROM tail WHERE symbol = ? AND period = ?',
      )
      .raw(),
    putTail: db.prepare<[string, string, number, number, number, number, number, number, number, number | null]>(
      `INSERT OR REPLACE INTO tail (symbol, period, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    deleteTail: db.prepare<[string, string, number]>('DELETE FROM tail WHERE symbol = ? AND period = ? AND ts <= ?'),
    /** The series' newest chunked bar (chunks do not overlap: the newest chunk holds it). */
    lastChunkedMs: db
      .prepare<[string, string], number>(
        'SELECT last_ms FROM chunks WHERE symbol = ? AND period = ? ORDER BY start_ms DESC LIMIT 1',
      )
      .pluck(),
    /**
     * Tail series in key order after (symbol, period), with their row counts: the background fold's
     * walk. A row value, so that the search starts in the key there (an OR of the two columns scanned
     * the whole table each step).
     */
    tailSeries: db
      .prepare<[string, string, number], [string, string, number]>(
        'SELECT symbol, period, count(*) FROM tail WHERE (symbol, period) > (?, ?) GROUP BY symbol, period ORDER BY symbol, period LIMIT ?',
      )
      .raw(),
  }
}
export type TailStatements = ReturnType<typeof tailStatements>
type Statements = ChunkStatements & TailStatements

/** The series' tail rows with from <= ts <= to, ascending, as Bars (a NULL prev_close is NaN). */
export function readTail(st: TailStatements, symbol: string, period: StoredPeriod, from: number, to: number): Bars {
  const rows = st.tailRange.all(symbol, period, from, to)
  const bars = allocBars(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    bars.timestamp[i] = r[0]
    bars.open[i] = r[1]
    bars.high[i] = r[2]
    bars.low[i] = r[3]
    bars.close[i] = r[4]
    bars.volume[i] = r[5]
    bars.amount[i] = r[6]
    bars.prevClose[i] = r[7] ?? NaN
  }
  return bars
}

/**
 * readBarsWith over chunks and tail: every tail row of a series is later than every chunked bar of
 * it (appends go to the tail only past the last chunk; anything else folds the tail first), so the
 * answer is the chunks' bars before the tail's. A rollup period adds the rollups of the tail's days
 * from the 1m bars (rollup chunks are rebuilt only when the tail is folded). `cache`: the reading
 * connection's decoded chunks.
 */
export function readBarsLive(st: Statements, q: BarQuery, cache?: ChunkCache): Bars {
  const from = q.fromMs ?? -MAX_MS
  const to = q.toMs ?? MAX_MS
  if (q.limit <= 0 || from > to) return readBarsWith(st, q)
  if (isRollupPeriod(q.period)) return readRollupsLive(st, q, q.period, from, to)
  const tail = readTail(st, q.symbol, q.period as StoredPeriod, from, to)
  const k = barCount(tail)
  if (k === 0) return readBarsWith(st, q, cache)
  if (k >= q.limit) return sliceBars(tail, k - q.limit, k)
  const chunked = readBarsWith(st, { ...q, toMs: Math.min(to, tail.timestamp[0] - 1), limit: q.limit - k }, cache)
  return concatBars([chunked, tail])
}

/**
 * Rollups as the stored ones would be with the tail folded: the rollup chunks up to the hour bucket
 * (the largest rollup, which every smaller one nests in) holding the tail's first 1m bar, whose bars
 * are whole there; from that bucket on, rollups of the 1m bars (chunked and tail), stamped as stored
 * rollups are (with their first 1m bar).
 */
function readRollupsLive(st: Statements, q: BarQuery, period: RollupPeriod, from: number, to: number): Bars {
  const first = st.tailFirst.get(q.symbol, '1m')
  if (first === undefined) return readBarsWith(st, q)
  const market = MARKETS[parseSymbol(q.symbol).exchange]
  const hour = minuteBucketStarts(new Float64Array([first]), 60, market)[0]
  const minutes = readBarsLive(st, { symbol: q.symbol, period: '1m', fromMs: hour, limit: Number.MAX_SAFE_INTEGER })
  const built = buildRollups(minutes, period, market)
  const derived = sliceBars(built, lowerBound(built.timestamp, from), lowerBound(built.timestamp, to + 1))
  const chunked = from < hour ? readBarsWith(st, { ...q, toMs: Math.min(to, hour - 1) }) : allocBars(0)
  const all = barCount(derived) ? concatBars([chunked, derived]) : chunked
  const n = barCount(all)
  return n > q.limit ? sliceBars(all, n - q.limit, n) : all
}

/** A series' tail as the writer last saw it: its first and last timestamps and its row count. */
interface TailSpan {
  readonly first: number
  readonly last: number
  readonly rows: number
}
const NO_TAIL: TailSpan = { first: Infinity, last: -Infinity, rows: 0 }

/**
 * What the writer connection knows of each series' tail as of its last commit, so that an append to a
 * series it has seen needs no look at the tail or the chunks (one row written, nothing read). What a
 * transaction learns counts once it commits; everything is forgotten when another connection (another
 * process's import, a vacuum) has committed since, as `PRAGMA data_version` tells.
 */
export class KnownTails {
  readonly #spans = new Map<StoredPeriod, Map<string, TailSpan>>()
  /** What the open transaction replaced, to put back if it rolls back. */
  readonly #undo: [Map<string, TailSpan>, string, TailSpan | undefined][] = []
  #dataVersion = -1

  /** At the start of a write transaction (the write lock held): forgets all if another connection has committed. */
  begin(dataVersion: number): void {
    if (dataVersion !== this.#dataVersion) this.#spans.clear()
    this.#dataVersion = dataVersion
    this.#undo.length = 0
  }

  get(symbol: string, period: StoredPeriod): TailSpan | undefined {
    return this.#spans.get(period)?.get(symbol)
  }

  /** What the open transaction made of a series' tail (undefined: not known, read again when next needed). */
  set(symbol: string, period: StoredPeriod, span: TailSpan | undefined): void {
    let spans = this.#spans.get(period)
    if (!spans) this.#spans.set(period, (spans = new Map()))
    this.#undo.push([spans, symbol, spans.get(symbol)])
    if (span) spans.set(symbol, span)
    else spans.delete(symbol)
  }

  commit(): void {
    this.#undo.length = 0
  }

  rollback(): void {
    for (let i = this.#undo.length - 1; i >= 0; i--) {
      const [spans, symbol, span] = this.#undo[i]
      if (span) spans.set(symbol, span)
      else spans.delete(symbol)
    }
    this.#undo.length = 0
  }
}

/**
 * What one write transaction does with the tail: appends small writes past a series' last chunk,
 * folds a series' tail into its chunks (through `putChunks`, which keeps rollups in step) before
 * anything else touches its chunks, and remembers the symbols whose answers the appends changed.
 */
export class TailWriter {
  /** Symbols with appends in this transaction: their versions move at commit. */
  readonly liveSymbols = new Set<string>()
  /** Series this transaction appended to that may now hold more than TAIL_MAX_ROWS (their rows known above it, or not known). */
  readonly #overgrown: Record<StoredPeriod, Set<string>> = { '1m': new Set(), '1d': new Set() }

  constructor(
    private readonly st: Statements,
    private readonly known: KnownTails,
    private readonly putChunks: (symbol: string, period: StoredPeriod, bars: Bars) => void,
  ) {}

  /** The series' tail: as known, or read (and then known). */
  #span(symbol: string, period: StoredPeriod): TailSpan {
    const held = this.known.get(symbol, period)
    if (held) return held
    const [first, last, rows] = this.st.tailSpan.get(symbol, period)!
    const span = rows === 0 ? NO_TAIL : { first: first!, last: last!, rows }
    this.known.set(symbol, period, span)
    return span
  }

  /** Appends `bars` (ascending) to the tail when they are few and all after the series' chunks; false when they belong in chunks. */
  tryAppend(symbol: string, period: StoredPeriod, bars: Bars): boolean {
    const n = barCount(bars)
    if (n === 0 || n > TAIL_APPEND_MAX) return false
    const { timestamp, open, high, low, close, volume, amount, prevClose } = bars
    const span = this.#appendable(symbol, period, timestamp[0])
    if (span === undefined) return false
    for (let i = 0; i < n; i++)
      this.#put(symbol, period, timestamp[i], open[i], high[i], low[i], close[i], volume[i], amount[i], prevClose[i])
    this.#appended(symbol, period, span, timestamp[0], timestamp[n - 1], n)
    return true
  }

  /** tryAppend of one bar as a row (a live write's, made without Bars). */
  tryAppendRow(symbol: string, period: StoredPeriod, r: BarRow): boolean {
    const span = this.#appendable(symbol, period, r.timestamp)
    if (span === undefined) return false
    this.#put(symbol, period, r.timestamp, r.open, r.high, r.low, r.close, r.volume, r.amount, r.prevClose)
    this.#appended(symbol, period, span, r.timestamp, r.timestamp, 1)
    return true
  }

  /** One tail row (a NaN prev_close as NULL). */
  #put(
    symbol: string,
    period: StoredPeriod,
    ts: number,
    open: number,
    high: number,
    low: number,
    close: number,
    volume: number,
    amount: number,
    prevClose: number,
  ): void {
    const pc = Number.isNaN(prevClose) ? null : prevClose
    this.st.putTail.run(symbol, period, ts, open, high, low, close, volume, amount, pc)
  }

  /** The series' tail when bars from `first` on may go there (all after its chunks); undefined when they belong in chunks. */
  #appendable(symbol: string, period: StoredPeriod, first: number): TailSpan | undefined {
    const span = this.#span(symbol, period)
    // Every chunked bar of a series is older than its tail's first row, so bars from the tail's
    // first on need no look at its chunks (a seek there reads rows laden with blobs).
    if (first < span.first) {
      const chunked = this.st.lastChunkedMs.get(symbol, period)
      if (chunked !== undefined && first <= chunked) return undefined
    }
    return span
  }

  /** What appending `n` rows from `first` to `last` made of the series' tail (`span` before them). */
  #appended(symbol: string, period: StoredPeriod, span: TailSpan, first: number, last: number, n: number): void {
    // Rows past the last are new; the last written again replaces it (a live write puts its symbol's
    // forming minute again with the next); anything else is read again when needed.
    const from = Math.min(span.first, first)
    const to = Math.max(span.last, last)
    let rows: number | undefined = span.rows
    if (first > span.last) this.known.set(symbol, period, { first: from, last: to, rows: (rows += n) })
    else if (first === span.last) this.known.set(symbol, period, { first: from, last: to, rows: (rows += n - 1) })
    else this.known.set(symbol, period, (rows = undefined))
    this.liveSymbols.add(symbol)
    if (rows === undefined || rows > TAIL_MAX_ROWS) this.#overgrown[period].add(symbol)
  }

  /** Moves the series' tail rows into its chunks: all of them, or all but the newest (a forming bar stays appendable). */
  fold(symbol: string, period: StoredPeriod, keepNewest = false): number {
    let upTo = MAX_MS
    if (keepNewest) {
      const newest = this.known.get(symbol, period)?.last ?? this.st.tailLast.get(symbol, period)
      if (newest === undefined || newest === -Infinity) return 0
      upTo = newest - 1
    }
    const rows = readTail(this.st, symbol, period, -MAX_MS, upTo)
    const n = barCount(rows)
    if (n === 0) return 0
    this.putChunks(symbol, period, rows)
    this.st.deleteTail.run(symbol, period, rows.timestamp[n - 1])
    this.known.set(symbol, period, keepNewest ? { first: upTo + 1, last: upTo + 1, rows: 1 } : NO_TAIL)
    return n
  }

  /** Before the commit: every series this transaction appended to that now holds more than TAIL_MAX_ROWS is folded. */
  foldOversized(): void {
    for (const period of STORED_PERIODS) {
      for (const symbol of this.#overgrown[period])
        if (this.#span(symbol, period).rows > TAIL_MAX_ROWS) this.fold(symbol, period, true)
      this.#overgrown[period].clear()
    }
  }
}
