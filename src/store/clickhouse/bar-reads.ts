/**
 * @module Reading bars: one query per read, its time range from the series' positions held in memory
 * (series-index.ts), so it scans little more than the bars it returns; from the blobs where the
 * series' puts wrote them (blob-reads.ts), else from the bars table; rollups from the partials
 * each 1m put stored, folded here (clickhouse-rollups.ts), or rolled up from the 1m bars where puts
 * overlap, a live put stored none or a delete hides some of them (FORMAT.md "Reads").
 */
import { allocBars, barCount, concatBars, lowerBound, sliceBars, type Bars } from '../../domain/bars.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import { MINUTES_OF, basePeriodOf, type StoredPeriod } from '../../domain/period.js'
import { buildRollups, type RollupPeriod } from '../../domain/rollups.js'
import type { ChunkPeriod } from '../market-store.js'
import { newest, sortedByTime } from './bar-window.js'
import { foldPartials } from './clickhouse-rollups.js'
import { blobReads, type BlobRead } from './blob-reads.js'
import { coalescedReads, SMALL_READ, type RangeRead, type RangeRows } from './coalesced-reads.js'
import type { ReadBatcher } from './read-batcher.js'
import { sql, type Connection } from './connection.js'
import { tombstoneKey } from './metadata.js'
import { decodeBars } from './row-binary.js'
import type { SeriesState } from './series-index.js'
import { OPEN_FROM, OPEN_TO, seriesKey, tombstoneFilter, type Snapshot } from './snapshot.js'

/** Upper bounds of milliseconds per stored bar: a window for `limit` bars where positions are not known. */
const MS_PER_BAR: Record<StoredPeriod, number> = { '1m': 576_000, '1d': 140_000_000 }
const SLACK_MS = 10 * 86_400_000
/** The value columns of a bar as read (the newest import's, per timestamp, where puts overlap). */
const VALUE_COLUMNS = 'pscale, open, high, low, close, prev_close, vscale, volume, amount'
/**
 * A series of at most this many bars (a daily history of 65 years) is read by symbol when read with
 * others (coalesced-reads.ts): each symbol's bounds looked up per row, the granules read those of the
 * group's time span, rather than an OR of ranges that the server tests on every row it reads. At
 * worst (symbols whose ranges lie far apart in time) that reads each such series whole, eight
 * granules where its own range would read one or two.
 */
const SHORT_SERIES_ROWS = 16_384
/** A read of at least this many bars takes the blobs and the bars table where its range needs both; a smaller one, the bars table. */
const SPLIT_READ_BARS = 2048
/** Reads of up to this many rows are small (SMALL_READ): latency, not throughput. */
const ONE_THREAD_ROWS = 200_000

export interface ReadRange {
  readonly symbol: string
  readonly fromMs?: number
  readonly toMs?: number
  readonly limit: number
}

export class BarReads {
  readonly #together: ReadBatcher<Snapshot, RangeRead, RangeRows>
  readonly #blobs: ReadBatcher<Snapshot, BlobRead, Bars | undefined>

  constructor(private readonly entry: Connection) {
    this.#together = coalescedReads(entry)
    this.#blobs = blobReads(entry)
  }

  /** The newest `limit` visible, not deleted bars of a stored period in [fromMs, toMs], ascending. */
  async series(s: Snapshot, period: StoredPeriod, q: ReadRange): Promise<Bars> {
    const series = s.series.get(seriesKey(q.symbol, period))
    if (!series || q.limit <= 0) return allocBars(0)
    const from = Math.max(q.fromMs ?? OPEN_FROM, series.first)
    const to = Math.min(q.toMs ?? OPEN_TO, series.last)
    if (from > to) return allocBars(0)
    // From the blobs where the range holds no put without them (a live day, an append, a put from
    // before blobs): a blob read costs the server one row a few KB long where the bars table scans
    // granules of ten columns. Otherwise the range is three parts, newest first: the blobs after the
    // last such put, the bars table from the first to the last, the blobs before the first. A small
    // read that the first part does not answer takes the bars table alone (one query, not three).
    const first = series.unblobbedFrom(from, to)
    const last = series.unblobbedTo(from, to)
    const big = Math.min(q.limit, series.bars) >= SPLIT_READ_BARS
    if (first > to || (last < to && !big)) {
      const lo = first > to ? from : last + 1
      const bars = await this.#newestBlobs(s, series, q.symbol, lo, to, q.limit)
      if (bars && (barCount(bars) >= q.limit || lo === from)) return bars
    } else if (big) {
      const parts = await this.#parts(s, series, q.symbol, from, to, q.limit, first, last)
      if (parts) return parts
    }
    return this.#newest(s, series, q.symbol, from, to, q.limit)
  }

  /**
   * The newest `limit` bars of [from, to] as blobs after `last`, the bars table over [first, last] and
   * blobs before `first`, read newest first until `limit` are in hand; undefined where the blobs cannot
   * stand for the bars table.
   */
  async #parts(
    s: Snapshot,
    series: SeriesState,
    symbol: string,
    from: number,
    to: number,
    limit: number,
    first: number,
    last: number,
  ): Promise<Bars | undefined> {
    const held: Bars[] = []
    let n = 0
    const newestFirst: [number, number, 'blobs' | 'bars'][] = [
      [last + 1, to, 'blobs'],
      [first, last, 'bars'],
      [from, first - 1, 'blobs'],
    ]
    for (const [lo, hi, where] of newestFirst) {
      if (lo > hi || n >= limit) continue
      const part =
        where === 'bars'
          ? await this.#newest(s, series, symbol, lo, hi, limit - n)
          : await this.#newestBlobs(s, series, symbol, lo, hi, limit - n)
      if (!part) return undefined
      held.unshift(part)
      n += barCount(part)
    }
    return newest(concatBars(held), limit)
  }

  /**
   * The newest `limit` bars of [from, to] from the blobs (those that meet the range the series'
   * positions give for them, the whole range if the positions promised more than there are), or
   * undefined where the blobs cannot stand for the bars table.
   */
  async #newestBlobs(
    s: Snapshot,
    series: SeriesState,
    symbol: string,
    from: number,
    to: number,
    limit: number,
  ): Promise<Bars | undefined> {
    const { period } = series
    const deletes = s.meta.tombstones.get(tombstoneKey('bars', symbol, period)) ?? []
    const read = (lo: number) => this.#blobs.read(s, { symbol, period, lo, to, deletes })
    const lo = Math.max(from, series.startFor(to, limit) ?? from)
    let bars = await read(lo)
    if (bars && barCount(bars) < limit && lo > from) bars = await read(from)
    return bars && newest(bars, limit)
  }

  /** The newest `limit` bars of [from, to] from the bars table, as few rows read as the series' positions allow. */
  async #newest(
    s: Snapshot,
    series: SeriesState,
    symbol: string,
    from: number,
    to: number,
    limit: number,
  ): Promise<Bars> {
    const { period } = series
    let start = series.startFor(to, limit) ?? to - (limit * MS_PER_BAR[period] + SLACK_MS)
    for (;;) {
      const lo = Math.max(from, start)
      const bars = await this.range(s, symbol, period, lo, to, limit)
      if (barCount(bars) >= limit || lo <= from) return newest(bars, limit)
      // Fewer than the positions promised (deleted bars) or than the time estimate held: look further back.
      start = lo - 8 * Math.max(to - lo, MS_PER_BAR[period] * limit)
    }
  }

  /** The newest `limit` rollups of `period` stamped in [fromMs, toMs]: what stored rollups of every 1m bar give. */
  async rollups(s: Snapshot, period: RollupPeriod, q: ReadRange): Promise<Bars> {
    const minute = s.series.get(seriesKey(q.symbol, '1m'))
    if (!minute || q.limit <= 0) return allocBars(0)
    const market = MARKETS[parseSymbol(q.symbol).exchange]
    const { zone } = market
    const dayStart = (t: number) => zone.midnightUtc(zone.localDay(t))
    const from = Math.max(q.fromMs ?? OPEN_FROM, minute.first)
    const to = Math.min(q.toMs ?? OPEN_TO, minute.last)
    if (from > to) return allocBars(0)
    // Whole local days: a bucket never spans two, so its partials are all read or none.
    const end = zone.midnightUtc(zone.localDay(to) + 1) - 1
    const perBar = MINUTES_OF[period]
    let start = minute.startFor(to, q.limit * perBar) ?? to - (q.limit * perBar * MS_PER_BAR['1m'] + SLACK_MS)
    for (;;) {
      const lo = dayStart(Math.max(from, start))
      const rolled = await this.#rolled(s, q.symbol, period, lo, end)
      const hi = lowerBound(rolled.timestamp, to + 1)
      const first = lowerBound(rolled.timestamp, from, 0, hi)
      if (hi - first >= q.limit || lo <= dayStart(from)) return sliceBars(rolled, Math.max(first, hi - q.limit), hi)
      start = lo - 8 * Math.max(end - lo, 86_400_000)
    }
  }

  /** Rollups of whole local days [lo, end]: the stored partials folded, or the 1m bars rolled up. */
  async #rolled(s: Snapshot, symbol: string, period: RollupPeriod, lo: number, end: number): Promise<Bars> {
    const market = MARKETS[parseSymbol(symbol).exchange]
    const minute = s.series.get(seriesKey(symbol, '1m'))!
    const deletes = s.meta.tombstones.get(tombstoneKey('bars', symbol, '1m')) ?? []
    const stored = !minute.overlapsIn(lo, end) && !minute.legacyIn(lo, end)
    if (stored && !deletes.some((t) => t.fromTs <= end && lo <= t.toTs)) {
      let scales: Uint8Array = new Uint8Array(0)
      const partials = await this.#query(s, symbol, period, lo, end, false, (v) => (scales = v))
      const folded = foldPartials(sortedByTimeWith(partials, scales), scales, period, market)
      if (folded) return folded
    }
    return buildRollups(await this.range(s, symbol, '1m', lo, end, Infinity), period, market)
  }

  /** Every visible, not deleted bar of [lo, to], ascending (the newest import's where puts overlap). */
  async range(s: Snapshot, symbol: string, period: StoredPeriod, lo: number, to: number, limit: number): Promise<Bars> {
    const series = s.series.get(seriesKey(symbol, period))
    const grouped = series?.overlapsIn(lo, to) ?? false
    // At most one bar a minute (a day): the rows the range can hold, whatever `limit` says.
    const most = Math.min(limit, (to - lo) / (period === '1d' ? 86_400_000 : 60_000) + 1)
    return sortedByTime(await this.#query(s, symbol, period, lo, to, grouped, undefined, most))
  }

  /**
   * A series' rows in [lo, to], unsorted; `grouped`: the newest row per timestamp (puts overlap
   * there), in a query of its own. Plain reads of modest size go through coalescedReads.
   */
  async #query(
    s: Snapshot,
    symbol: string,
    period: ChunkPeriod,
    lo: number,
    to: number,
    grouped: boolean,
    vscales?: (v: Uint8Array) => void,
    expectedRows = 0,
  ): Promise<Bars> {
    const deletes = s.meta.tombstones.get(tombstoneKey('bars', symbol, period)) ?? []
    if (!grouped && expectedRows <= ONE_THREAD_ROWS) {
      const meeting = deletes.filter((t) => t.fromTs <= to && lo <= t.toTs)
      // With others, by symbol (SHORT_SERIES_ROWS) when the range covers the series or the series is
      // short (a rollup has fewer rows than its 1m series).
      const stored = s.series.get(seriesKey(symbol, basePeriodOf(period)))
      const covers = stored !== undefined && lo <= stored.first && to >= stored.last
      const bySymbol = covers || (stored !== undefined && stored.bars <= SHORT_SERIES_ROWS)
      const read = await this.#together.read(s, { symbol, period, lo, to, deletes: meeting, bySymbol, covers })
      vscales?.(read.vscales)
      return read.bars
    }
    const prewhere = `symbol = ${sql.str(symbol)} AND period = ${sql.str(period)} AND ts >= ${sql.int(Math.ceil(lo))} AND ts <= ${sql.int(Math.floor(to))}`
    const where = `${s.visibleSql}${tombstoneFilter(deletes, 'ts', lo, to)}`
    const query = grouped
      ? `SELECT ts, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8, r.9 FROM (
           SELECT ts, argMax((${VALUE_COLUMNS}), (import_id, seq)) AS r FROM bars PREWHERE ${prewhere} WHERE ${where} GROUP BY ts)`
      : `SELECT ts, ${VALUE_COLUMNS} FROM bars PREWHERE ${prewhere} WHERE ${where}`
    const settings: Record<string, number> = expectedRows <= ONE_THREAD_ROWS ? SMALL_READ : {}
    return this.entry.read(`${query} FORMAT RowBinary`, settings, (answer) => decodeBars(answer, vscales))
  }
}

/** Bars and a per-row column put in time order together. */
function sortedByTimeWith(bars: Bars, column: Uint8Array): Bars {
  const sorted = sortedByTime(bars)
  if (sorted === bars) return bars
  const ts = bars.timestamp
  const order = Array.from({ length: ts.length }, (_, i) => i).sort((a, b) => ts[a] - ts[b])
  const copy = column.slice()
  order.forEach((from, to) => (column[to] = copy[from]))
  return sorted
}
