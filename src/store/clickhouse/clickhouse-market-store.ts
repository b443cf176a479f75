/** @module MarketStore on ClickHouse: versioned rows, visible once their import's commit row exists (FORMAT.md). */
import { allocBars, barCount, type Bars } from '../../domain/bars.js'
import { cutWindow, newest, sortedByTime } from './bar-window.js'
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import type { Instrument, SecurityType } from '../../domain/instrument.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import type { StoredPeriod } from '../../domain/period.js'
import type { PeriodRange, Statement, StatementRecord } from '../../domain/financials.js'
import { universeOfRows, type StoredUniverse } from '../../domain/universe.js'
import type { MarketDepth } from '../../domain/depth.js'
import type { BarQuery, DataVersions, LiveQuote, MarketStore, StoreCapabilities, WriteBatch } from '../market-store.js'
import { readDepth, readLiveQuotes } from './live-tables.js'
import { Connection, WRITE_TIMEOUT_MS, sql } from './connection.js'
import { decodeBars } from './row-binary.js'
import { META_VERSIONED_TABLES, closeTopology, type Topology } from './schema.js'
import { LRUCache } from 'lru-cache'
import {
  OPEN_FROM,
  OPEN_TO,
  loadIntervals,
  loadSnapshot,
  overlapping,
  tombstoneFilter,
  tombstoneKey,
  type Interval,
  type Snapshot,
} from './snapshot.js'
import { Poller } from './poller.js'
import { ClickHouseWriter, newImportId } from './clickhouse-writer.js'
import { compact, type CompactionReport } from './compaction.js'
import { FinancialReads, readUniverseDates, spellsOf } from './financials-reads.js'
import { claimDeadImports, recordState } from './import-states.js'

/** How often the committed state is polled: imports of other processes show within this (+ one query). */
export const POLL_MS = 250
/** An import with no sign of life for this long is dead; a later import (or vacuum) removes its rows. */
export const DEFAULT_GRACE_MS = 120_000

/** Upper bounds of milliseconds per stored bar, so a window of `limit` bars rarely needs widening. */
const MS_PER_BAR: Record<StoredPeriod, number> = { '1m': 576_000, '1d': 140_000_000 }
const SLACK_MS = 10 * 86_400_000
/**
 * Between these many bars a read ships its whole window (a few more rows) instead of having the server
 * sort and cut it; bigger reads come in several blocks read in parallel, out of order, so the server sorts.
 */
const WHOLE_WINDOW_LIMITS = [1000, 50_000] as const
/** The value columns of a bar as read (the newest import's, per timestamp, when imports overlap). */
const VALUE_COLUMNS = 'pscale, open, high, low, close, prev_close, vscale, volume, amount'
const READ_COLUMNS = `ts, ${VALUE_COLUMNS}`
/**
 * Daily histories held in memory per data version: a minute read is followed by two daily reads (the
 * days' prev_close and the day before), each a round trip of several ms, while a whole daily history
 * is one granule on the server (a few thousand rows, 64 bytes each here).
 */
const DAILY_CACHE_BYTES = 64 * 1024 * 1024
const BYTES_PER_BAR = 8 * 8

type InstrumentTuple = [
  string,
  string,
  string | null,
  string | null,
  string | null,
  number | null,
  number | null,
  number | null,
  number | null,
  number | null,
  string | null,
  number | null,
]

export class ClickHouseMarketStore implements MarketStore {
  readonly capabilities: StoreCapabilities
  readonly #t: Topology
  readonly #snapshot: Poller<Snapshot>
  readonly #background = new Set<Promise<unknown>>()
  /** Spans per `${version}|${symbol}|${period}`: a new version simply misses. */
  readonly #intervals = new LRUCache<string, Promise<Interval[]>>({ max: 20_000 })
  /** Whole daily histories per `${version}|${symbol}`; concurrent misses share one query. */
  readonly #daily: LRUCache<string, Bars, { s: Snapshot; symbol: string }> | undefined
  readonly #financials: FinancialReads

  private constructor(t: Topology, dailyCacheBytes: number) {
    this.#t = t
    this.#financials = new FinancialReads(t.meta)
    this.#daily =
      dailyCacheBytes > 0
        ? new LRUCache({
            maxSize: dailyCacheBytes,
            sizeCalculation: (b) => Math.max(1, barCount(b) * BYTES_PER_BAR),
            fetchMethod: (_key, _stale, { context }) =>
              this.#query(context.s, { symbol: context.symbol, period: '1d', limit: Number.MAX_SAFE_INTEGER }),
          })
        : undefined
    this.capabilities = {
      liveImport: true,
      distributed: t.cluster !== undefined,
      storedRollups: false,
      snapshotReads: false,
      blockingReads: false,
      symbolVersions: false,
    }
    this.#snapshot = new Poller((prev) => loadSnapshot(t.meta, prev), POLL_MS)
  }

  static async open(t: Topology, dailyCacheBytes = DAILY_CACHE_BYTES): Promise<ClickHouseMarketStore> {
    const store = new ClickHouseMarketStore(t, dailyCacheBytes)
    await store.#snapshot.start()
    t.health.start()
    return store
  }

  /** The committed state for one read (every query of one call uses the same one); fails at once during an outage. */
  async #snap(): Promise<Snapshot> {
    this.#t.health.signal()
    return this.#snapshot.current()
  }

  async readBars(q: BarQuery): Promise<Bars> {
    // No rollups here (storedRollups false): the query layer aggregates 1m bars on read.
    const period = q.period
    if (period !== '1m' && period !== '1d') throw new Error(`readBars ${period}: this backend stores no rollups`)
    const s = await this.#snap()
    if (period === '1d' && this.#daily) {
      const all = (await this.#daily.fetch(`${s.version}|${q.symbol}`, { context: { s, symbol: q.symbol } }))!
      return cutWindow(all, q.fromMs ?? OPEN_FROM, q.toMs ?? OPEN_TO, q.limit)
    }
    return this.#query(s, { ...q, period })
  }

  /** The newest `limit` committed, not deleted bars in the query's range, ascending. */
  async #query(s: Snapshot, q: BarQuery & { period: StoredPeriod }): Promise<Bars> {
    const period = q.period
    const spans = await this.#spans(s, q.symbol, period)
    const from = Math.max(q.fromMs ?? OPEN_FROM, Math.min(...spans.map((i) => i.first)))
    const to = Math.min(q.toMs ?? OPEN_TO, Math.max(...spans.map((i) => i.last)))
    if (spans.length === 0 || q.limit <= 0 || from > to) return allocBars(0)
    const where = `symbol = ${sql.str(q.symbol)} AND period = ${sql.str(period)}${tombstoneFilter(s.tombstones.get(tombstoneKey('bars', q.symbol, period)), 'ts')}`
    // The newest `limit` bars: a window back from `to` that widens until it holds them or covers `from`.
    let window = q.limit * MS_PER_BAR[period] + SLACK_MS
    for (;;) {
      const start = Math.max(from, to - window)
      const hit = spans.filter((i) => i.last >= start && i.first <= to)
      let bars = allocBars(0)
      if (hit.length) {
        // Only the imports whose spans meet the window can have rows in it; when their spans do not
        // overlap there, every timestamp has one row and the newest-wins grouping is not needed.
        const ids = `import_id IN (${sql.list([...new Set(hit.map((i) => i.importId))])})`
        const range = `${where} AND ${ids} AND ts >= ${sql.int(start)} AND ts <= ${sql.int(to)}`
        if (overlapping(hit, start, to)) {
          bars = decodeBars(
            await this.#t.entry.bytes(`SELECT * FROM (SELECT ts, r.1, r.2, r.3, r.4, r.5, r.6, r.7, r.8, r.9 FROM (
               SELECT ts, argMax((${VALUE_COLUMNS}), (import_id, seq)) AS r
               FROM bars WHERE ${range} GROUP BY ts ORDER BY ts DESC LIMIT ${sql.int(q.limit)})) ORDER BY ts FORMAT RowBinary`),
          )
        } else if (q.limit >= WHOLE_WINDOW_LIMITS[0] && q.limit <= WHOLE_WINDOW_LIMITS[1]) {
          // A plain range scan, ordered and cut here: the window holds little more than `limit` rows, and
          // sorting them on the server cost more than shipping them (bench/store.bench.ts). Decompressed
          // blocks are kept in the server's uncompressed cache for the next read of the same hot range.
          const rows = decodeBars(
            await this.#t.entry.bytes(
              `SELECT ${READ_COLUMNS} FROM bars WHERE ${range} SETTINGS use_uncompressed_cache = 1 FORMAT RowBinary`,
            ),
          )
          bars = newest(sortedByTime(rows), q.limit)
        } else {
          bars = decodeBars(
            await this.#t.entry.bytes(
              `SELECT * FROM (SELECT ${READ_COLUMNS} FROM bars WHERE ${range} ORDER BY ts DESC LIMIT ${sql.int(q.limit)}) ORDER BY ts FORMAT RowBinary`,
            ),
          )
        }
      }
      if (bars.timestamp.length >= q.limit || start <= from) return bars
      window *= 8
    }
  }

  #spans(s: Snapshot, symbol: string, period: StoredPeriod): Promise<Interval[]> {
    const key = `${s.version}|${symbol}|${period}`
    let spans = this.#intervals.get(key)
    if (!spans) {
      spans = loadIntervals(this.#t.meta, s, symbol, period)
      this.#intervals.set(key, spans)
      spans.catch(() => this.#intervals.delete(key))
    }
    return spans
  }

  /** Newest committed, not deleted row per symbol (optionally of some symbols). */
  #instrumentsSql(s: Snapshot, symbols?: readonly string[]): string {
    let deleted = ''
    for (const [key, list] of s.tombstones) {
      if (!key.startsWith('instruments|')) continue
      const symbol = key.split('|')[1]
      if (symbols && !symbols.includes(symbol)) continue
      deleted += tombstoneFilter(list, null).replace(/AND NOT \(/g, `AND NOT (symbol = ${sql.str(symbol)} AND `)
    }
    const only = symbols ? ` AND symbol IN (${sql.list(symbols.map(sql.str))})` : ''
    return `SELECT symbol, argMax((code, exchange, name, type, listing_date, tick_size, total_shares, float_shares, limit_up, limit_down, name_en, lot_size), (import_id, seq)) AS r
      FROM instruments WHERE ${s.committedSql}${only}${deleted} GROUP BY symbol`
  }

  async #instruments(symbols: readonly string[] | undefined, filter = '', limit = ''): Promise<Instrument[]> {
    const s = await this.#snap()
    const rows = await this.#t.meta.json<{ symbol: string; r: InstrumentTuple }>(
      `SELECT symbol, r FROM (${this.#instrumentsSql(s, symbols)}) ${filter} ORDER BY symbol ${limit}`,
    )
    return rows.map(({ symbol, r }) => toInstrument(symbol, r))
  }

  async readInstruments(symbols: readonly string[]): Promise<Instrument[]> {
    const unique = [...new Set(symbols)]
    if (unique.length === 0) return []
    const found = new Map((await this.#instruments(unique)).map((i) => [i.symbol, i]))
    return unique.flatMap((s) => found.get(s) ?? [])
  }

  async searchInstruments(text: string, limit: number): Promise<Instrument[]> {
    const t = sql.str(text)
    const match = `WHERE positionCaseInsensitiveUTF8(symbol, ${t}) > 0 OR positionCaseInsensitiveUTF8(r.1, ${t}) > 0 OR positionCaseInsensitiveUTF8(ifNull(r.3, ''), ${t}) > 0 OR positionCaseInsensitiveUTF8(ifNull(r.11, ''), ${t}) > 0`
    return this.#instruments(undefined, match, `LIMIT ${sql.int(Math.max(0, limit))}`)
  }

  async listInstruments(filter: { exchange?: string; type?: string } = {}): Promise<Instrument[]> {
    const where = [
      filter.exchange !== undefined ? `r.2 = ${sql.str(filter.exchange)}` : '',
      filter.type !== undefined ? `r.4 = ${sql.str(filter.type)}` : '',
    ].filter(Boolean)
    return this.#instruments(undefined, where.length ? `WHERE ${where.join(' AND ')}` : '')
  }

  async readExFactors(
    symbols: readonly string[],
    fromMs = OPEN_FROM,
    toMs = OPEN_TO,
  ): Promise<Map<string, ExFactorEvent[]>> {
    const known = await this.readInstruments(symbols)
    const out = new Map<string, ExFactorEvent[]>(known.map((i) => [i.symbol, []]))
    if (known.length === 0) return out
    const s = await this.#snap()
    const deleted = known
      .map((i) =>
        tombstoneFilter(s.tombstones.get(tombstoneKey('ex_factors', i.symbol)), 'ts').replace(
          /AND NOT \(/g,
          `AND NOT (symbol = ${sql.str(i.symbol)} AND `,
        ),
      )
      .join('')
    const rows = await this.#t.meta.json<{ symbol: string; ts: string; f: number }>(
      `SELECT symbol, ts, argMax(ex_factor, (import_id, seq)) AS f FROM ex_factors
       WHERE symbol IN (${sql.list(known.map((i) => sql.str(i.symbol)))}) AND ts >= ${sql.int(Math.ceil(fromMs))} AND ts <= ${sql.int(Math.floor(toMs))} AND ${s.committedSql}${deleted}
       GROUP BY symbol, ts ORDER BY symbol, ts`,
    )
    for (const r of rows) out.get(r.symbol)!.push({ timestamp: Number(r.ts), exFactor: r.f })
    return out
  }

  async readUniverses(): Promise<StoredUniverse[]> {
    const s = await this.#snap()
    const [rows, dates] = await Promise.all([
      this.#t.meta.json<{
        id: string
        r: [string, string | null, string | null, string | null, string[]]
        v: [string, number]
      }>(
        `SELECT id, argMax((name, region, category, description, symbols), (import_id, seq)) AS r, max((import_id, seq)) AS v FROM universes WHERE ${s.committedSql} GROUP BY id ORDER BY id`,
      ),
      readUniverseDates(this.#t.meta, s),
    ])
    return rows.map(({ id, r, v }) => {
      const fields = { id, name: r[0], region: r[1], category: r[2], description: r[3] }
      const dated = dates.get(`${id}|${v[0]}|${v[1]}`)
      return dated ? universeOfRows(fields, spellsOf(r[4], dated)) : { ...fields, symbols: r[4] }
    })
  }

  async readFinancials(
    statement: Statement,
    symbols: readonly string[],
    range: PeriodRange = {},
  ): Promise<Map<string, StatementRecord[]>> {
    return this.#financials.read(await this.#snap(), statement, symbols, range)
  }

  /** Runs `read`: each read here is all of one commit or of another (the commit protocol), but two reads may see two. */
  withSnapshot<T>(read: () => Promise<T>): Promise<T> {
    return read()
  }

  async dataVersion(): Promise<string> {
    return (await this.#snap()).version
  }

  /** No per-symbol versions here: every commit moves every symbol's. */
  async readVersions(): Promise<DataVersions> {
    const data = await this.dataVersion()
    return { data, of: () => data }
  }

  async readLiveQuotes(symbols: readonly string[]): Promise<Map<string, LiveQuote>> {
    return readLiveQuotes(this.#t.meta, await this.#snap(), symbols)
  }

  async readDepth(symbol: string): Promise<MarketDepth | undefined> {
    return readDepth(this.#t.meta, await this.#snap(), symbol)
  }

  async importCount(): Promise<number> {
    return (await this.#snap()).importCount
  }

  async check(): Promise<void> {
    // count() of a MergeTree is answered from part metadata: cheap, yet it reaches every shard.
    await this.#t.entry.rows('SELECT count() FROM bars')
    await this.#t.meta.rows("SELECT count() FROM imports WHERE state = 'committed'")
  }

  async write(batch: WriteBatch): Promise<void> {
    const w = await this.beginWrite()
    try {
      for (const r of batch.deleteBars ?? []) await w.deleteBars(r)
      for (const r of batch.deleteExFactors ?? []) await w.deleteExFactors(r)
      for (const r of batch.deleteFinancials ?? []) await w.deleteFinancials(r)
      if (batch.deleteInstruments?.length) await w.deleteInstruments(batch.deleteInstruments)
      if (batch.instruments?.length) await w.putInstruments(batch.instruments)
      for (const b of batch.bars ?? []) await w.putBars(b.symbol, b.period, b.bars)
      for (const e of batch.exFactors ?? []) await w.putExFactors(e.symbol, e.events)
      for (const f of batch.financials ?? []) await w.putFinancials(f)
      await w.commit()
    } catch (err) {
      await w.rollback().catch(() => undefined)
      throw err
    }
  }

  async beginWrite(): Promise<ClickHouseWriter> {
    const writer = await ClickHouseWriter.begin(this.#t, newImportId(), {
      committed: async () => {
        await this.#snapshot.reload()
        this.#track(this.vacuum().catch(() => undefined)) // a later import removes what dead ones left
      },
      abandoned: (id) =>
        this.#track(
          recordState(this.#t.metaWriter, [id], 'vacuumed')
            .then(() => this.#removeRows([id]))
            .catch(() => undefined),
        ),
    })
    return writer
  }

  #track(p: Promise<unknown>): void {
    this.#background.add(p)
    void p.finally(() => this.#background.delete(p))
  }

  /**
   * Removes the rows of imports that will never commit: rolled back, or silent for `graceMs` (a
   * writer signs of life every few seconds). Each is claimed first (import-states.ts), so one that
   * was only paused fails to commit rather than become visible with rows missing. Returns how many
   * imports it removed. A grace under MIN_GRACE_MS fails imports that are still running.
   */
  async vacuum(options: { graceMs?: number } = {}): Promise<number> {
    const dead = await claimDeadImports(this.#t.metaWriter, options.graceMs ?? DEFAULT_GRACE_MS)
    if (dead.length) await this.#removeRows(dead)
    return dead.length
  }

  /**
   * Removes committed rows no reader can see (superseded, or hidden by a tombstone, as of imports
   * committed at least `graceMs` ago) and then the tombstones that hide nothing (compaction.ts).
   */
  async compact(options: { graceMs?: number; waitMs?: number } = {}): Promise<CompactionReport> {
    return compact(this.#t, { ...options, graceMs: options.graceMs ?? DEFAULT_GRACE_MS })
  }

  /** Deletes the rows of imports whose `vacuumed` row is in (no reader sees them). */
  async #removeRows(ids: readonly string[]): Promise<void> {
    const where = `import_id IN (${sql.list(ids.map(sql.int))})`
    const { barHosts, barsLocal, metaWriter } = this.#t
    for (const ep of barHosts) {
      const c = new Connection(ep, WRITE_TIMEOUT_MS)
      try {
        await c.command(`ALTER TABLE ${barsLocal} DELETE WHERE ${where}`)
      } finally {
        await c.close()
      }
    }
    for (const table of META_VERSIONED_TABLES) await metaWriter.command(`ALTER TABLE ${table} DELETE WHERE ${where}`)
  }

  async close(): Promise<void> {
    this.#snapshot.stop()
    await Promise.allSettled([...this.#background])
    await closeTopology(this.#t)
  }
}

function toInstrument(symbol: string, r: InstrumentTuple): Instrument {
  const { exchange } = parseSymbol(symbol)
  return {
    symbol,
    code: r[0],
    exchange,
    region: MARKETS[exchange].region,
    name: r[2],
    type: r[3] as SecurityType | null,
    listingDate: r[4],
    tickSize: r[5],
    totalShares: r[6],
    floatShares: r[7],
    limitUp: r[8],
    limitDown: r[9],
    nameEn: r[10],
    lotSize: r[11],
  }
}
