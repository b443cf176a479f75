/** @module MarketStore on ClickHouse: versioned rows, visible once their import's commit row exists; metadata and series bounds held in memory (FORMAT.md). */
import { barsOfRows, lowerBound, mergeBars, sliceBars, type BarRow, type Bars } from '../../domain/bars.js'
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import type { Instrument } from '../../domain/instrument.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import { buildRollups, isRollupPeriod, type RollupPeriod } from '../../domain/rollups.js'
import { newest } from './bar-window.js'
import type { PeriodRange, Statement, StatementRecord } from '../../domain/financials.js'
import type { StoredUniverse } from '../../domain/universe.js'
import type { MarketDepth } from '../../domain/depth.js'
import type {
  BarQuery,
  BeginOptions,
  DataVersions,
  LiveQuote,
  MarketStore,
  StoreCapabilities,
  UnwrittenLive,
  WriteBatch,
} from '../market-store.js'
import { writeBatchWith } from '../market-store.js'
import { BarReads } from './bar-reads.js'
import { readDepths, readLiveQuotes } from './live-tables.js'
import { Connection, WRITE_TIMEOUT_MS, sql } from './connection.js'
import { META_VERSIONED_TABLES, closeTopology, type Topology } from './schema.js'
import { OPEN_FROM, OPEN_TO, loadSnapshot, symbolVersion, type Snapshot, type WrittenSpans } from './snapshot.js'
import { Poller } from './poller.js'
import { ClickHouseWriter, type BegunImport, type WriterOptions } from './clickhouse-writer.js'
import { compact, compactLive, type CompactionReport, type LiveMark } from './compaction.js'
import { FinancialReads } from './financials-reads.js'
import { HEARTBEAT_MS, claimDeadImports, committedFrom, recordState } from './import-states.js'
import { ClickHouseIngestLog } from './ingest-log.js'

/** How often the committed state is polled: imports of other processes show within this (+ one query). */
export const POLL_MS = 250
/** After a commit, this process looks for dead imports to remove at most this often (ms). */
const BACKGROUND_VACUUM_MS = 30_000
/** After a commit, this process removes the live tables' superseded rows at most this often (ms). */
const BACKGROUND_LIVE_COMPACT_MS = 60_000
/** An import with no sign of life for this long is dead; a later import (or vacuum) removes its rows. */
export const DEFAULT_GRACE_MS = 120_000

/** Case-insensitive for ASCII letters only, as the SQLite backend's LIKE is, so both answer a search alike. */
const folded = (s: string | null) => (s === null ? '' : s.replace(/[A-Z]/g, (c) => c.toLowerCase()))

export class ClickHouseMarketStore implements MarketStore {
  readonly capabilities: StoreCapabilities
  readonly #t: Topology
  readonly #snapshot: Poller<Snapshot>
  /** The `series` rows of this process's commits the snapshot has yet to take (it need not read them back). */
  readonly #written = new Map<bigint, WrittenSpans>()
  readonly #bars: BarReads
  readonly #writerOptions: WriterOptions
  readonly #background = new Set<Promise<unknown>>()
  /** When this process last looked for dead imports after a commit (epoch ms). */
  #vacuumedMs = -Infinity
  /** When this process last removed the live tables' superseded rows after a commit (epoch ms). */
  #liveCompactedMs = -Infinity
  /** Imports below this were all settled when this process last looked for dead ones (import-states.ts Claimed). */
  #claimFloor = 0n
  /** The last live compaction's grace and where it left off (compaction.ts compactLive). */
  #liveMark: { readonly graceMs: number; readonly mark: LiveMark } | undefined
  readonly #financials: FinancialReads
  /** An import begun ahead for the next write (beginWrite `more`), given up unless taken within a heartbeat. */
  #spare: BegunImport | undefined
  #closed = false
  readonly ingestLog: ClickHouseIngestLog
  /** What this process's logged ingest holds unwritten (showUnwritten): reads show it. */
  #unwritten: UnwrittenLive | undefined

  private constructor(t: Topology, writerOptions: WriterOptions) {
    this.#t = t
    this.ingestLog = new ClickHouseIngestLog(t.metaWriter)
    this.#writerOptions = writerOptions
    this.#bars = new BarReads(t.entry)
    this.#financials = new FinancialReads(t.meta)
    this.capabilities = {
      liveImport: true,
      distributed: t.cluster !== undefined,
      storedRollups: true,
      snapshotReads: false,
      blockingReads: false,
      symbolVersions: true,
    }
    this.#snapshot = new Poller((prev) => loadSnapshot(t.meta, prev, this.#written), POLL_MS)
  }

  static async open(t: Topology, writerOptions: WriterOptions = {}): Promise<ClickHouseMarketStore> {
    const store = new ClickHouseMarketStore(t, writerOptions)
    await store.#snapshot.start()
    t.health.start()
    return store
  }

  /** The committed state for one read (every query of one call uses the same one); fails at once during an outage. */
  async #snap(): Promise<Snapshot> {
    this.#t.health.signal()
    return this.#snapshot.current()
  }

  /**
   * The newest committed state, taken at once after #snap: with what this process holds unwritten
   * (#unwritten) read in the same synchronous step, a read sees a write either in the state or still
   * unwritten (its data leaves the unwritten only once the state shows it).
   */
  async #now(): Promise<Snapshot> {
    await this.#snap()
    return this.#snapshot.peek()!
  }

  async readBars(q: BarQuery): Promise<Bars> {
    const s = await this.#now()
    const unwritten = this.#unwritten
    if (isRollupPeriod(q.period)) {
      const minutes = unwritten?.bars(q.symbol, '1m') ?? []
      const stored = await this.#bars.rollups(s, q.period, q)
      return minutes.length ? this.#rolledWith(s, q, q.period, stored, minutes) : stored
    }
    const rows = unwritten?.bars(q.symbol, q.period) ?? []
    const stored = await this.#bars.series(s, q.period, q)
    return rows.length ? withBars(stored, barsOfRows(rows), q) : stored
  }

  /** `stored` rollups with those of each day the unwritten `minutes` fall on made again from its 1m bars and them. */
  async #rolledWith(
    s: Snapshot,
    q: BarQuery,
    period: RollupPeriod,
    stored: Bars,
    minutes: readonly BarRow[],
  ): Promise<Bars> {
    const market = MARKETS[parseSymbol(q.symbol).exchange]
    const { zone } = market
    let out = stored
    for (const day of new Set(minutes.map((m) => zone.localDay(m.timestamp)))) {
      const lo = zone.midnightUtc(day)
      const hi = zone.midnightUtc(day + 1) - 1
      const own = minutes.filter((m) => m.timestamp >= lo && m.timestamp <= hi)
      const dayMinutes = mergeBars(await this.#bars.range(s, q.symbol, '1m', lo, hi, Infinity), barsOfRows(own))
      out = withBars(out, buildRollups(dayMinutes, period, market), q)
    }
    return out
  }

  async readInstruments(symbols: readonly string[]): Promise<Instrument[]> {
    const { instruments } = (await this.#snap()).meta
    return [...new Set(symbols)].flatMap((s) => instruments.get(s) ?? [])
  }

  async searchInstruments(text: string, limit: number): Promise<Instrument[]> {
    const { instruments, symbols } = (await this.#snap()).meta
    const t = folded(text)
    const out: Instrument[] = []
    for (const symbol of symbols) {
      if (out.length >= limit) break
      const i = instruments.get(symbol)!
      if ([i.symbol, i.code, i.name, i.nameEn].some((f) => folded(f).includes(t))) out.push(i)
    }
    return out
  }

  async listInstruments(filter: { exchange?: string; type?: string } = {}): Promise<Instrument[]> {
    const { instruments, symbols } = (await this.#snap()).meta
    return symbols
      .map((s) => instruments.get(s)!)
      .filter(
        (i) =>
          (filter.exchange === undefined || i.exchange === filter.exchange) &&
          (filter.type === undefined || i.type === filter.type),
      )
  }

  async readExFactors(
    symbols: readonly string[],
    fromMs = OPEN_FROM,
    toMs = OPEN_TO,
  ): Promise<Map<string, ExFactorEvent[]>> {
    const { instruments, events } = (await this.#snap()).meta
    const out = new Map<string, ExFactorEvent[]>()
    for (const s of symbols)
      if (instruments.has(s) && !out.has(s))
        out.set(
          s,
          (events.get(s) ?? []).filter((e) => e.timestamp >= fromMs && e.timestamp <= toMs),
        )
    return out
  }

  async readUniverses(): Promise<StoredUniverse[]> {
    return (await this.#snap()).meta.universes.map((u) => ({ ...u, symbols: [...u.symbols] }))
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

  /** The committed state's version: what this process holds unwritten leaves it (readVersions counts that). */
  async dataVersion(): Promise<string> {
    return (await this.#now()).version
  }

  /**
   * The data version, and each symbol's (snapshot.ts symbolVersion): other symbols' bars and live
   * pushes leave it. Both move with what this process holds unwritten too (a written symbol's
   * revision outlives its write a while, so `of` called after it still names the state it was read with).
   */
  async readVersions(): Promise<DataVersions> {
    const s = await this.#now()
    const unwritten = this.#unwritten
    return {
      data: withRevision(s.version, unwritten?.revisionAll),
      of: (symbol) => withRevision(symbolVersion(s, symbol), unwritten?.revision(symbol)),
    }
  }

  async readLiveQuotes(symbols: readonly string[]): Promise<Map<string, LiveQuote>> {
    const s = await this.#now()
    const held = new Map<string, LiveQuote>()
    for (const symbol of symbols) {
      const quote = this.#unwritten?.quote(symbol)
      if (quote) held.set(symbol, quote)
    }
    const quotes = await readLiveQuotes(this.#t.meta, s, symbols)
    for (const [symbol, quote] of held)
      if (!((quotes.get(symbol)?.state.last.timestamp ?? -Infinity) > quote.state.last.timestamp))
        quotes.set(symbol, quote)
    return quotes
  }

  showUnwritten(live: UnwrittenLive): void {
    this.#unwritten = live
  }

  async readDepths(symbols: readonly string[]): Promise<Map<string, MarketDepth>> {
    return readDepths(this.#t.meta, await this.#snap(), symbols)
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
    await writeBatchWith(await this.beginWrite(), batch)
  }

  async beginWrite(options: BeginOptions = {}): Promise<ClickHouseWriter> {
    const spare = await this.#takeSpare()
    return this.#begin(spare, options.more === true)
  }

  /**
   * Keeps `spare`, the next write's import, begun with this write's `committing` row, so that write
   * starts without a `begun` row of its own: a feed writes several times a second, and each INSERT
   * makes a part the server writes and merges. Until taken it is an open import like any other
   * (readers hide it); one left for a heartbeat is given up (it wrote nothing).
   */
  #keepSpare(spare: BegunImport): void {
    this.#dropSpare()
    if (this.#closed) return void this.#track(this.#giveUp(spare))
    this.#spare = spare
    const timer = setTimeout(() => {
      if (this.#spare === spare) this.#dropSpare()
    }, HEARTBEAT_MS)
    timer.unref()
  }

  /**
   * The spare import, taken, if it is younger than a heartbeat and still above every committed
   * import (one committed since it began, by another process or instance, would otherwise win over
   * this write's newer rows; and so no reader can have loaded a watermark at or above it before its
   * `begun` row was in, as beginImport checks for a new one); else it is given up.
   */
  async #takeSpare(): Promise<BegunImport | undefined> {
    const begun = this.#spare
    this.#spare = undefined
    if (!begun) return undefined
    if (Date.now() - begun.atMs < HEARTBEAT_MS && (await committedFrom(this.#t.metaWriter, begun.id)) < begun.id)
      return begun
    this.#track(this.#giveUp(begun))
    return undefined
  }

  /** Gives up the spare import, if any (not taken by a write). */
  #dropSpare(): void {
    const spare = this.#spare
    this.#spare = undefined
    if (spare) this.#track(this.#giveUp(spare))
  }

  /** An import begun ahead and never used: rolled back, and claimed at once (it wrote nothing). */
  #giveUp(b: BegunImport): Promise<void> {
    return recordState(this.#t.metaWriter, [b.id], ['aborted', 'vacuumed']).catch(() => undefined)
  }

  #begin(begun: BegunImport | undefined, more: boolean): Promise<ClickHouseWriter> {
    return ClickHouseWriter.begin(
      this.#t,
      {
        ...(more && { nextBegun: (b: BegunImport) => this.#keepSpare(b) }),
        committing: (own) => void this.#written.set(own.importId, own),
        committed: async () => {
          const s = await this.#snapshot.reload()
          // Spans of imports the snapshot has taken (or never will: given up, or not committed after
          // all) are not needed again.
          for (const id of this.#written.keys())
            if (id <= s.watermark && s.hidden.get(id) !== 'open') this.#written.delete(id)
          // A later import removes what dead ones left; at most every BACKGROUND_VACUUM_MS, as a live
          // feed commits several times a second and each vacuum reads the whole imports table.
          const now = Date.now()
          if (now - this.#vacuumedMs >= BACKGROUND_VACUUM_MS) {
            this.#vacuumedMs = now
            this.#track(this.vacuum().catch(() => undefined))
          }
          // A writer of live quotes keeps their tables to a row per symbol (and the last minutes' pushes),
          // and the ingest log to its last days.
          if (now - this.#liveCompactedMs >= BACKGROUND_LIVE_COMPACT_MS) {
            this.#liveCompactedMs = now
            this.#track(
              this.compactLive()
                .then(() => this.ingestLog.dropOld())
                .catch(() => undefined),
            )
          }
        },
        abandoned: (id) =>
          this.#track(
            recordState(this.#t.metaWriter, [id], 'vacuumed')
              .then(() => this.#removeRows([id]))
              .catch(() => undefined),
          ),
      },
      this.#writerOptions,
      begun,
    )
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
    const { claimed, floor } = await claimDeadImports(
      this.#t.metaWriter,
      options.graceMs ?? DEFAULT_GRACE_MS,
      this.#claimFloor,
    )
    if (floor > this.#claimFloor) this.#claimFloor = floor
    if (claimed.length) await this.#removeRows(claimed)
    return claimed.length
  }

  /**
   * Removes committed rows no reader can see (superseded, or hidden by a tombstone, as of imports
   * committed at least `graceMs` ago) and then the tombstones that hide nothing (compaction.ts).
   */
  async compact(options: { graceMs?: number; waitMs?: number } = {}): Promise<CompactionReport> {
    return compact(this.#t, { ...options, graceMs: options.graceMs ?? DEFAULT_GRACE_MS })
  }

  /** Removes the live tables' rows that lost to a newer row of their symbol (compaction.ts); returns how many. */
  async compactLive(graceMs = DEFAULT_GRACE_MS): Promise<number> {
    const last = this.#liveMark?.graceMs === graceMs ? this.#liveMark.mark : undefined
    const { removed, mark } = await compactLive(this.#t.metaWriter, graceMs, last)
    this.#liveMark = mark && { graceMs, mark }
    return removed
  }

  /** Deletes the rows of imports whose `vacuumed` row is in (no reader sees them). */
  async #removeRows(ids: readonly string[]): Promise<void> {
    const where = `import_id IN (${sql.list(ids.map(sql.int))})`
    const { barHosts, barsLocal, blobsLocal, metaWriter } = this.#t
    for (const ep of barHosts) {
      const c = new Connection(ep, WRITE_TIMEOUT_MS)
      try {
        for (const table of [barsLocal, blobsLocal]) await c.command(`ALTER TABLE ${table} DELETE WHERE ${where}`)
      } finally {
        await c.close()
      }
    }
    for (const table of META_VERSIONED_TABLES) await metaWriter.command(`ALTER TABLE ${table} DELETE WHERE ${where}`)
  }

  async close(): Promise<void> {
    this.#snapshot.stop()
    this.#closed = true
    this.#dropSpare()
    await Promise.allSettled([...this.#background])
    await closeTopology(this.#t)
  }
}

/** A version with the revision of what this process holds unwritten, when it holds any. */
const withRevision = (version: string, revision: number | undefined) =>
  revision === undefined ? version : `${version}.u${revision}`

/** The newest `q.limit` of `bars` with those of `over` in [q.fromMs, q.toMs] over them (one wins at its time). */
function withBars(bars: Bars, over: Bars, q: BarQuery): Bars {
  const lo = lowerBound(over.timestamp, q.fromMs ?? -Infinity)
  const hi = lowerBound(over.timestamp, (q.toMs ?? Infinity) + 1)
  return hi > lo ? newest(mergeBars(bars, sliceBars(over, lo, hi)), q.limit) : bars
}
