/** @module The MarketStore interface: shaped by the queries the API serves and by all-or-nothing batch writes. */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { barsOfRows, type BarRow, type Bars } from '../domain/bars.js'
import type { MarketDepth } from '../domain/depth.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import type { PeriodRange, Statement, StatementRecord } from '../domain/financials.js'
import type { Instrument } from '../domain/instrument.js'
import type { SymbolState } from '../domain/minute-bars.js'
import type { StoredPeriod } from '../domain/period.js'
import type { RollupPeriod } from '../domain/rollups.js'
import type { StoredUniverse } from '../domain/universe.js'

/**
 * What readBars reads: a stored period, or (only where `capabilities.storedRollups`) the raw rollups
 * of a derived minute period, each stamped with its first 1m bar (domain/rollups.ts).
 */
export type ChunkPeriod = StoredPeriod | RollupPeriod

export interface BarQuery {
  readonly symbol: string
  readonly period: ChunkPeriod
  /** Inclusive bounds in epoch ms; absent = open. */
  readonly fromMs?: number
  readonly toMs?: number
  /** The latest `limit` bars of the range are returned. */
  readonly limit: number
}

/** Bars of one symbol and period with fromMs <= timestamp <= toMs (inclusive; absent = open). */
export interface BarRange {
  readonly symbol: string
  readonly period: StoredPeriod
  readonly fromMs?: number
  readonly toMs?: number
}

/** Ex-factor events of one symbol with fromMs <= ex-date <= toMs (inclusive; absent = open). */
export interface EventRange {
  readonly symbol: string
  readonly fromMs?: number
  readonly toMs?: number
}

/** The versions of one symbol's statement with fromPeriod <= period_end <= toPeriod (`YYYY-MM-DD`, inclusive; absent = open). */
export interface StatementRange extends PeriodRange {
  readonly statement: Statement
  readonly symbol: string
}

/** Statement versions of one symbol, each keyed by (period_end, announce_date). */
export interface StatementBatch {
  readonly statement: Statement
  readonly symbol: string
  readonly records: readonly StatementRecord[]
}

/** One all-or-nothing write: deletes are applied first, then puts; readers see all of it or none. */
export interface WriteBatch {
  readonly instruments?: readonly Instrument[]
  /** Bars of one symbol and period each, ascending; a bar at an existing timestamp replaces it. */
  readonly bars?: readonly ({
    readonly symbol: string
    readonly period: StoredPeriod
    readonly bars: Bars
  } & PutOptions)[]
  /** Events keyed by (symbol, ex-date timestamp); a newer value replaces an older one. */
  readonly exFactors?: readonly { readonly symbol: string; readonly events: readonly ExFactorEvent[] }[]
  /** Statement versions; a version at an existing (period_end, announce_date) replaces it, other versions stay. */
  readonly financials?: readonly StatementBatch[]
  readonly deleteBars?: readonly BarRange[]
  readonly deleteExFactors?: readonly EventRange[]
  readonly deleteFinancials?: readonly StatementRange[]
  /** The instruments' metadata rows only; their bars and events go with deleteBars / deleteExFactors. */
  readonly deleteInstruments?: readonly string[]
}

/** How a write is begun. */
export interface BeginOptions {
  /**
   * More writes follow soon (a live feed): a backend may make the next one ready meanwhile
   * (ClickHouse begins its import ahead); the same writes land either way.
   */
  readonly more?: boolean
}

/** How a put's bars came (StoreWriter.putBars). */
export interface PutOptions {
  /**
   * Bars a live feed built, whose newest (the forming minute, the day's bar) is put again with each
   * write: a backend may store less for them and derive it on read instead (ClickHouse stores no
   * rollups and no blobs for them). The answers are the same either way.
   */
  readonly live?: boolean
}

/** A symbol's latest pushed quote with the minute-bar builder's state after it: what a restart continues from. */
export interface LiveQuote {
  readonly symbol: string
  readonly state: SymbolState
  /** The quote's `ext` as pushed (TickFlow's quote extension: name, change figures, turnover rate), if any. */
  readonly ext?: Readonly<Record<string, string | number | boolean | null>>
}

/**
 * Live data this process has taken and not yet written (a logged ingest's write behind), for its own
 * reads to show as written: what a push answered once logged is readable at once where it was pushed.
 */
export interface UnwrittenLive {
  /** The symbol's unwritten 1m bars (ascending) or day bar: none when it has none. */
  bars(symbol: string, period: StoredPeriod): readonly BarRow[]
  /** The symbol's latest unwritten quote, if any. */
  quote(symbol: string): LiveQuote | undefined
  /** Moves with each change of the symbol's unwritten data; undefined while it has none. */
  revision(symbol: string): number | undefined
  /** Moves with each change of any unwritten data; undefined while there is none. */
  readonly revisionAll: number | undefined
}

/**
 * Versions read together: the data version (dataVersion) and, per symbol, the version of answers
 * about that symbol alone, which other symbols' live appends leave as it is.
 */
export interface DataVersions {
  readonly data: string
  /** Moves with every commit that can change an answer about `symbol`: all but live appends to other symbols. */
  of(symbol: string): string
}

/** Declared differences between backends (Kysely's DialectAdapter idea); the contract suite skips by them. */
export interface StoreCapabilities {
  /** Imports by another process are visible to a running server without a restart. */
  readonly liveImport: boolean
  /** The data is spread over shards (a cluster). */
  readonly distributed: boolean
  /**
   * readBars also answers the rollup periods (5m..60m raw rollups kept in step with the 1m bars by
   * every write); without it the query layer aggregates 1m bars on read.
   */
  readonly storedRollups: boolean
  /** Every read inside one `withSnapshot` sees one committed state, whatever commits meanwhile. */
  readonly snapshotReads: boolean
  /**
   * Reads do their work on the calling thread (an embedded store) rather than wait on a server: a
   * query worker then runs one task at a time, since a second would only wait behind the first.
   */
  readonly blockingReads: boolean
  /** readVersions answers a version per symbol that other symbols' live appends leave as it is. */
  readonly symbolVersions: boolean
}

export interface MarketStore {
  readonly capabilities: StoreCapabilities
  /** The latest `limit` bars with fromMs <= t <= toMs, ascending; empty Bars if none. The arrays are the caller's to change. */
  readBars(q: BarQuery): Promise<Bars>
  /** The instruments among `symbols` (canonical), in the order asked, unknown ones left out. */
  readInstruments(symbols: readonly string[]): Promise<Instrument[]>
  /** Instruments whose symbol, code, name or English name contains `text` (case-insensitive), symbols ascending, at most `limit`. */
  searchInstruments(text: string, limit: number): Promise<Instrument[]>
  // Listing and universes.
  /** Every instrument, or those of one exchange and/or security type; symbol ascending. */
  listInstruments(filter?: { exchange?: string; type?: string }): Promise<Instrument[]>
  /** The imported universes (id ascending); the built-in ones are derived in query/. */
  readUniverses(): Promise<StoredUniverse[]>

  /** Events ascending per known symbol (possibly []), with fromMs <= timestamp <= toMs; unknown symbols absent. */
  readExFactors(symbols: readonly string[], fromMs?: number, toMs?: number): Promise<Map<string, ExFactorEvent[]>>
  /**
   * Every stored version of `statement` of each of `symbols` with a period_end in `range`, ascending
   * by period_end, then announce_date; a symbol without any is absent (known or not).
   */
  readFinancials(
    statement: Statement,
    symbols: readonly string[],
    range?: PeriodRange,
  ): Promise<Map<string, StatementRecord[]>>
  /**
   * An opaque token that changes whenever committed market data changes (also when another process
   * imports), unique to this store: for caches and ETags. Cheap: no round trip per call on a remote
   * backend (poll or cache it, at most 1 s stale).
   */
  dataVersion(): Promise<string>
  /**
   * dataVersion and the per-symbol versions as of now, read as cheaply (a backend without per-symbol
   * ones answers `data` for each); both also move with what reads show unwritten (showUnwritten).
   */
  readVersions(): Promise<DataVersions>
  /** The latest pushed quote and builder state of each of `symbols` that has one. */
  readLiveQuotes(symbols: readonly string[]): Promise<Map<string, LiveQuote>>
  /** The latest pushed depth of each of `symbols` that has any. */
  readDepths(symbols: readonly string[]): Promise<Map<string, MarketDepth>>
  /**
   * Runs `read` (reads of this store only, no writes) and gives its result. Where
   * `capabilities.snapshotReads`, its reads see one committed state: on SQLite one read transaction,
   * whose statements also skip the WAL read lock each takes on its own (about 3 us a statement, and
   * more under contention); elsewhere it just runs `read`. A call inside another shares its snapshot.
   * `read` should wait on nothing but this store: an open SQLite snapshot holds back checkpoints.
   */
  withSnapshot<T>(read: () => Promise<T>): Promise<T>
  /** How many writes (imports, corrections) have been committed to this store, by any process. */
  importCount(): Promise<number>
  /** Throws unless the store can really be read now (for /readyz): touches the storage, not a cache. */
  check(): Promise<void>
  /** Writes the whole batch (deletes first, then puts) or, on any error, nothing. */
  write(batch: WriteBatch): Promise<void>
  /** Write-only transaction for imports too large for one batch: nothing visible until commit. */
  beginWrite(options?: BeginOptions): Promise<StoreWriter>
  /**
   * One step of background upkeep after live appends, a short transaction that changes no answer
   * (SQLite folds grown tails into chunks); true while there is more to do. Absent: none needed.
   */
  foldAppends?(): Promise<boolean>
  /**
   * A log of pushed batches kept in the store, for a live ingest that answers a push once it is
   * logged and writes what it built later, in fewer and larger writes (a server whose every write
   * costs parts: ClickHouse). Absent: pushes are answered once written.
   */
  readonly ingestLog?: IngestLog
  /**
   * Reads show `live` as if written (this process's write behind of pushes answered once logged); its
   * data must leave `live` only after reads of the store show it (the write's commit). Absent: a
   * store that writes pushes before answering them.
   */
  showUnwritten?(live: UnwrittenLive): void
  close(): Promise<void>
}

/** A logged push: the feed (one per ingest process) that took it, its place in that feed, and the batch as JSON. */
export interface LogEntry {
  readonly feed: string
  readonly seq: number
  readonly body: string
}

/** Every entry of `feed` up to `seq` is in committed writes. */
export interface LogMark {
  readonly feed: string
  readonly seq: number
}

/** The ingest log (MarketStore.ingestLog). */
export interface IngestLog {
  /** Appends `entries` and `marks` in one write: durable (and seen by `unwritten`) once it resolves. */
  append(entries: readonly LogEntry[], marks: readonly LogMark[]): Promise<void>
  /** The entries above their feed's newest mark, in the order they were logged. */
  unwritten(): Promise<LogEntry[]>
}

/**
 * A write transaction, for imports too large to hold at once. Nothing is visible to readers until
 * `commit`; `rollback` (or the process dying) leaves the store exactly as it was. Calls apply in
 * order: a deleteBars over a range followed by putBars in that range yields exactly the put bars.
 * It has no reads: ingest reads committed data from the MarketStore, so a backend without
 * read-your-writes transactions can implement it.
 */
export interface StoreWriter {
  putInstruments(list: readonly Instrument[]): Promise<void>
  /** Bars of one symbol and period, ascending; existing bars at the same timestamps are replaced. */
  putBars(symbol: string, period: StoredPeriod, bars: Bars, options?: PutOptions): Promise<void>
  putExFactors(symbol: string, events: readonly ExFactorEvent[]): Promise<void>
  /** Versions of one symbol's statement; a version at an existing (period_end, announce_date) is replaced. */
  putFinancials(batch: StatementBatch): Promise<void>
  deleteBars(range: BarRange): Promise<void>
  deleteExFactors(range: EventRange): Promise<void>
  deleteFinancials(range: StatementRange): Promise<void>
  deleteInstruments(symbols: readonly string[]): Promise<void>
  // Universes.
  /** Replaces each listed universe (its fields and its members) as a whole. */
  putUniverses(list: readonly StoredUniverse[]): Promise<void>
  // Live data.
  /** What quote pushes built, put as one (putLiveWith, where a backend has no shorter way). */
  putLive(writes: LiveWrites): Promise<void>
  /** Replaces the symbols' latest pushed quotes and builder states. */
  putLiveQuotes(list: readonly LiveQuote[]): Promise<void>
  /** Replaces the symbols' latest pushed depth. */
  putDepth(list: readonly MarketDepth[]): Promise<void>
  commit(): Promise<void>
  rollback(): Promise<void>
}

/** What quote pushes built: per symbol its minute bars by start (a closed one, the forming one), its day's bar, its latest quote. */
export interface LiveWrites {
  readonly minutes: ReadonlyMap<string, ReadonlyMap<number, BarRow>>
  readonly days: ReadonlyMap<string, BarRow>
  readonly latest: ReadonlyMap<string, LiveQuote>
}

const LIVE = { live: true } as const

/**
 * A live write's puts are made this many series a turn of the event loop, the requests that came
 * meanwhile served between them: a whole market's forming minutes and day bars take a couple of
 * hundred ms to make, which reads of the same thread (ClickHouse's, on the main thread) would
 * otherwise wait out.
 */
const SERIES_A_TURN = 500

/** `writes` through a writer's putBars (live puts: each symbol's minute bars, then its day bar) and putLiveQuotes; shared by backends. */
export async function putLiveWith(writer: StoreWriter, writes: LiveWrites): Promise<void> {
  let n = 0
  for (const [symbol, held] of writes.minutes) {
    await writer.putBars(symbol, '1m', barsOfRows(ascending(held)), LIVE)
    if (++n % SERIES_A_TURN === 0) await nextTurn()
  }
  for (const [symbol, day] of writes.days) {
    await writer.putBars(symbol, '1d', barsOfRows([day]), LIVE)
    if (++n % SERIES_A_TURN === 0) await nextTurn()
  }
  await writer.putLiveQuotes([...writes.latest.values()])
}

/** A symbol's minute bars of a live write, by start. */
export function ascending(held: ReadonlyMap<number, BarRow>): BarRow[] {
  const rows = [...held.values()]
  if (rows.length > 1) rows.sort((x, y) => x.timestamp - y.timestamp)
  return rows
}

/** Applies a batch through a writer in the batch's order (deletes, then puts); shared by backends. */
export async function writeBatchWith(writer: StoreWriter, batch: WriteBatch): Promise<void> {
  try {
    for (const r of batch.deleteBars ?? []) await writer.deleteBars(r)
    for (const r of batch.deleteExFactors ?? []) await writer.deleteExFactors(r)
    for (const r of batch.deleteFinancials ?? []) await writer.deleteFinancials(r)
    if (batch.deleteInstruments?.length) await writer.deleteInstruments(batch.deleteInstruments)
    if (batch.instruments) await writer.putInstruments(batch.instruments)
    for (const b of batch.bars ?? []) await writer.putBars(b.symbol, b.period, b.bars, { live: b.live })
    for (const e of batch.exFactors ?? []) await writer.putExFactors(e.symbol, e.events)
    for (const f of batch.financials ?? []) await writer.putFinancials(f)
    await writer.commit()
  } catch (err) {
    await writer.rollback()
    throw err
  }
}
