/** @module One import into ClickHouse: rows tagged with its id, sent in a few large blocks, made visible at once by its commit row (FORMAT.md). */
import { randomInt } from 'node:crypto'
import { barCount, sliceBars, type Bars } from '../../domain/bars.js'
import { encodeChunk } from '../chunk-codec.js'
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import type { Instrument } from '../../domain/instrument.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import type { StoredPeriod } from '../../domain/period.js'
import type { StoredUniverse } from '../../domain/universe.js'
import { valuesJson } from '../../domain/financials.js'
import type { MarketDepth } from '../../domain/depth.js'
import {
  putLiveWith,
  type BarRange,
  type EventRange,
  type LiveQuote,
  type LiveWrites,
  type PutOptions,
  type StatementBatch,
  type StatementRange,
  type StoreWriter,
} from '../market-store.js'
import { depthRow, liveColumns, liveQuoteRow } from './live-tables.js'
import { MdqError } from '../../domain/errors.js'
import { tsv } from './connection.js'
import { partialRollups } from './clickhouse-rollups.js'
import { HEARTBEAT_MS, beginImport, commitImport, recordState, recordStates, tablesMask } from './import-states.js'
import { BarBlocks, MetaRows } from './insert-buffers.js'
import { INSERT_BLOCK_ROWS, blobRow, encodeRows, type Cell, type ColumnType } from './row-binary.js'
import {
  BAR_COLUMNS,
  BLOB_BARS,
  BLOB_COLUMNS,
  BLOB_MIN_BARS,
  MARK_EVERY,
  SERIES_COLUMNS,
  type Topology,
} from './schema.js'
import { OPEN_FROM, OPEN_TO, seriesKey, type WrittenSpans } from './snapshot.js'
import type { SpanRow } from './series-index.js'
import { FIRST_PERIOD, LAST_PERIOD } from './financials-reads.js'

/** Blob INSERTs under way at once, as for bar blocks: the next is gathered while the server takes them. */
const IN_FLIGHT_BLOBS = 2

let lastId = 0n
/**
 * Import ids order imports by their start (newest wins): milliseconds in the high bits, 20 random
 * bits below so two processes starting in the same millisecond still differ; never at or below
 * `floor` (an id the store has already committed: beginImport).
 */
export function newImportId(floor = 0n): bigint {
  let id = (BigInt(Date.now()) << 20n) | BigInt(randomInt(1 << 20))
  if (id <= lastId) id = lastId + 1n
  if (id <= floor) id = floor + 1n + BigInt(randomInt(1 << 20))
  lastId = id
  return id
}

export interface WriterHooks {
  /**
   * Just before the commit row goes in: what this import put in `series`, so that a poll of this
   * process that finds the import visible (even one under way as the row lands) takes its spans from
   * here rather than reading them back.
   */
  committing(own: WrittenSpans): void
  /** After the commit row is in: refresh what this process reads. */
  committed(): Promise<void>
  /** After a rollback or failed commit: remove the import's rows (best effort). */
  abandoned(id: string): void
  /**
   * A writer of a feed (beginWrite `more`): given the import the next write is to take, drawn above
   * this one, once its `begun` row is in; that row goes in with this one's `committing` row (one
   * INSERT), whether this commit then succeeds or not (the import is open and wrote nothing).
   */
  readonly nextBegun?: (next: BegunImport) => void
}

/** An import whose `begun` row is in (beginImport), and a time at or before that row's (epoch ms). */
export interface BegunImport {
  readonly id: bigint
  readonly atMs: number
}

/** Begins an import now: its `begun` row in, its id above every committed one. */
async function openImport(meta: Topology['metaWriter']): Promise<BegunImport> {
  const atMs = Date.now()
  return { id: await beginImport(meta, newImportId), atMs }
}

export interface WriterOptions {
  /** Bar rows per INSERT (default INSERT_BLOCK_ROWS). */
  readonly blockRows?: number
}

export class ClickHouseWriter implements StoreWriter {
  readonly #t: Topology
  readonly #id: bigint
  readonly #hooks: WriterHooks
  readonly #bars: BarBlocks
  readonly #meta: MetaRows
  /** Blob rows, one INSERT at the commit (or more, past the buffer's size). */
  readonly #blobs: MetaRows
  #seq = 0
  /** Its `series` rows, as readers load them (snapshot.ts). */
  readonly #spans: [string, SpanRow][] = []
  #open = true
  #heartbeat: NodeJS.Timeout | undefined

  private constructor(t: Topology, id: bigint, hooks: WriterHooks, options: WriterOptions) {
    this.#t = t
    this.#id = id
    this.#hooks = hooks
    // Sharded by symbol: the Distributed table must hand each block to its shard before the commit row exists.
    const settings: Record<string, 0 | 1> = t.cluster ? { insert_distributed_sync: 1 } : {}
    this.#bars = new BarBlocks(
      (body) => t.entryWriter.insert('bars', BAR_COLUMNS, 'RowBinary', body, settings),
      options.blockRows ?? INSERT_BLOCK_ROWS,
    )
    this.#meta = new MetaRows(t.metaWriter)
    this.#blobs = new MetaRows(t.entryWriter, settings)
  }

  /** A writer of `begun` (an import begun ahead, whose heartbeats it takes over), or of an import begun now. */
  static async begin(
    t: Topology,
    hooks: WriterHooks,
    options: WriterOptions = {},
    begun?: BegunImport,
  ): Promise<ClickHouseWriter> {
    // The begun row goes in before any data, so every row on disk belongs to a known import.
    const { id, atMs } = begun ?? (await openImport(t.metaWriter))
    const w = new ClickHouseWriter(t, id, hooks, options)
    w.#beat(atMs + HEARTBEAT_MS - Date.now())
    return w
  }

  /** The next heartbeat in `ms` (its `begun` row again), then one every HEARTBEAT_MS until the import ends. */
  #beat(ms: number): void {
    const timer = setTimeout(
      () => {
        if (this.#heartbeat !== timer) return
        void this.#state('begun').catch(() => undefined)
        this.#beat(HEARTBEAT_MS)
      },
      Math.max(0, ms),
    )
    timer.unref()
    this.#heartbeat = timer
  }

  #stopBeats(): void {
    clearTimeout(this.#heartbeat)
    this.#heartbeat = undefined
  }

  get importId(): string {
    return String(this.#id)
  }

  async #state(state: 'begun' | 'aborted'): Promise<void> {
    await recordState(this.#t.metaWriter, [this.#id], state)
  }

  #live(): void {
    if (!this.#open) throw new Error('this write transaction has ended')
  }

  /** Small-table rows as TabSeparated, each with its own seq so a later row of one import wins. */
  #insertMeta(table: string, columns: readonly string[], rows: readonly (string | number | null)[][]): void {
    this.#live()
    if (rows.length === 0) return
    const body = rows.map((r) => [...r.map(tsv), String(this.#id), String(++this.#seq)].join('\t')).join('\n') + '\n'
    this.#meta.add(table, [...columns, 'import_id', 'seq'], 'TabSeparated', body)
  }

  /** Rows with floats go in binary: 18.16 parses floats from text inexactly. */
  #insertBinary(table: string, columns: readonly [string, ColumnType][], rows: readonly (readonly Cell[])[]): void {
    this.#live()
    if (rows.length === 0) return
    const body = encodeRows(
      [...columns.map(([, t]) => t), 'UInt64', 'UInt32'],
      rows.map((r) => [...r, this.#id, ++this.#seq]),
    )
    this.#meta.add(table, [...columns.map(([c]) => c), 'import_id', 'seq'], 'RowBinary', body)
  }

  async putInstruments(list: readonly Instrument[]): Promise<void> {
    const s = 'Nullable(String)'
    const f = 'Nullable(Float64)'
    this.#insertBinary(
      'instruments',
      [
        ['symbol', 'String'],
        ['code', 'String'],
        ['exchange', 'String'],
        ['name', s],
        ['type', s],
        ['listing_date', s],
        ['tick_size', f],
        ['total_shares', f],
        ['float_shares', f],
        ['limit_up', f],
        ['limit_down', f],
        ['name_en', s],
        ['lot_size', f],
      ],
      list.map((i) => [
        i.symbol,
        i.code,
        i.exchange,
        i.name,
        i.type,
        i.listingDate,
        i.tickSize,
        i.totalShares,
        i.floatShares,
        i.limitUp,
        i.limitDown,
        i.nameEn,
        i.lotSize,
      ]),
    )
  }

  /**
   * Bars of one series, gathered into the import's blocks; a 1m put also gathers its rollups
   * (clickhouse-rollups.ts), unless live, and every put one `series` row: its span, bar count, marks
   * and whether it stored rollups (a live put's minute is put again as it forms: readers roll its days
   * up from the 1m bars, as they do wherever puts overlap) and blobs (every put of BLOB_MIN_BARS or
   * more but a live one: the same bars as chunk BLOBs, for reads of many bars).
   */
  async putBars(symbol: string, period: StoredPeriod, bars: Bars, options: PutOptions = {}): Promise<void> {
    this.#live()
    const ts = bars.timestamp
    for (let i = 1; i < ts.length; i++)
      if (!(ts[i] > ts[i - 1]))
        throw new Error(`putBars ${symbol} ${period}: timestamps must be strictly ascending (index ${i})`)
    const n = barCount(bars)
    if (n === 0) return
    const seq = ++this.#seq
    const step = INSERT_BLOCK_ROWS
    for (let from = 0; from < n; from += step) {
      this.#bars.rows.add(symbol, period, bars, from, Math.min(n, from + step), this.#id, seq)
      await this.#bars.added()
    }
    const unrolled = period === '1m' && options.live === true
    if (period === '1m' && !unrolled) {
      for (const r of partialRollups(bars, MARKETS[parseSymbol(symbol).exchange]))
        this.#bars.rows.add(symbol, r.period, r.bars, 0, barCount(r.bars), this.#id, seq, r.rawVolume)
      await this.#bars.added()
    }
    const blobbed = options.live !== true && n >= BLOB_MIN_BARS
    if (blobbed) {
      for (let from = 0; from < n; from += BLOB_BARS) {
        const to = Math.min(n, from + BLOB_BARS)
        const data = encodeChunk(sliceBars(bars, from, to))
        this.#blobs.add(
          'blobs',
          BLOB_COLUMNS,
          'RowBinary',
          blobRow(symbol, period, ts[from], ts[to - 1], to - from, data, this.#id, seq),
        )
      }
      await this.#blobs.backlog(IN_FLIGHT_BLOBS)
    }
    const marks: number[] = []
    for (let k = MARK_EVERY; k < n; k += MARK_EVERY) marks.push(ts[k])
    this.#spans.push([
      seriesKey(symbol, period),
      { first: ts[0], last: ts[n - 1], bars: n, marks, rollups: !unrolled, blobs: blobbed },
    ])
    this.#meta.add(
      'series',
      SERIES_COLUMNS,
      'TabSeparated',
      `${tsv(symbol)}\t${period}\t${ts[0]}\t${ts[n - 1]}\t${n}\t[${marks.join(',')}]\t${this.#id}\t${seq}\t${unrolled ? 0 : 1}\t${blobbed ? 1 : 0}\n`,
    )
  }

  async putExFactors(symbol: string, events: readonly ExFactorEvent[]): Promise<void> {
    this.#insertBinary(
      'ex_factors',
      [
        ['symbol', 'String'],
        ['ts', 'Int64'],
        ['ex_factor', 'Float64'],
      ],
      events.map((e) => [symbol, e.timestamp, e.exFactor]),
    )
  }

  async putUniverses(list: readonly StoredUniverse[]): Promise<void> {
    this.#live()
    if (list.length === 0) return
    const array = (items: readonly string[]) =>
      `[${items.map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(',')}]`
    const rows = list.map((u) => ({ u, seq: ++this.#seq }))
    const tail = (seq: number) => [String(this.#id), String(seq)]
    const body =
      rows
        .map(({ u, seq }) =>
          [
            tsv(u.id),
            tsv(u.name),
            tsv(u.region),
            tsv(u.category),
            tsv(u.description),
            tsv(array(u.spells ? u.spells.map((s) => s.symbol) : u.symbols)),
            ...tail(seq),
          ].join('\t'),
        )
        .join('\n') + '\n'
    this.#meta.add(
      'universes',
      ['id', 'name', 'region', 'category', 'description', 'symbols', 'import_id', 'seq'],
      'TabSeparated',
      body,
    )
    // A dated version's dates go beside it, under the same (import_id, seq) (financials-schema.ts).
    const dated = rows.filter(({ u }) => u.spells)
    if (dated.length)
      this.#meta.add(
        'universe_dates',
        ['id', 'in_dates', 'out_dates', 'import_id', 'seq'],
        'TabSeparated',
        dated
          .map(({ u, seq }) =>
            [
              tsv(u.id),
              tsv(array(u.spells!.map((s) => s.inDate ?? ''))),
              tsv(array(u.spells!.map((s) => s.outDate ?? ''))),
              ...tail(seq),
            ].join('\t'),
          )
          .join('\n') + '\n',
      )
  }

  /** Values as JSON text (never parsed by the server, so no float is read inexactly). */
  async putFinancials(b: StatementBatch): Promise<void> {
    this.#insertMeta(
      'financials',
      ['statement', 'symbol', 'period_end', 'announce_date', 'data'],
      b.records.map((r) => [b.statement, b.symbol, r.periodEnd, r.announceDate, valuesJson(r.values)]),
    )
  }

  async deleteFinancials(r: StatementRange): Promise<void> {
    this.#insertMeta(
      'financial_deletes',
      ['statement', 'symbol', 'from_period', 'to_period'],
      [[r.statement, r.symbol, r.fromPeriod ?? FIRST_PERIOD, r.toPeriod ?? LAST_PERIOD]],
    )
  }

  putLive(writes: LiveWrites): Promise<void> {
    return putLiveWith(this, writes)
  }

  /** In RowBinary: a push's JSON text goes in as it is, not escaped for TabSeparated. */
  async putLiveQuotes(list: readonly LiveQuote[]): Promise<void> {
    this.#insertBinary('live_quotes', liveColumns('quote'), list.map(liveQuoteRow))
  }

  async putDepth(list: readonly MarketDepth[]): Promise<void> {
    this.#insertBinary('live_depth', liveColumns('depth'), list.map(depthRow))
  }

  async #tombstone(
    kind: 'bars' | 'ex_factors' | 'instruments',
    symbol: string,
    period: string,
    fromMs: number | undefined,
    toMs: number | undefined,
  ): Promise<void> {
    this.#insertMeta(
      'deletes',
      ['kind', 'symbol', 'period', 'from_ts', 'to_ts'],
      [[kind, symbol, period, Math.ceil(fromMs ?? OPEN_FROM), Math.floor(toMs ?? OPEN_TO)]],
    )
  }

  async deleteBars(range: BarRange): Promise<void> {
    await this.#tombstone('bars', range.symbol, range.period, range.fromMs, range.toMs)
  }

  async deleteExFactors(range: EventRange): Promise<void> {
    await this.#tombstone('ex_factors', range.symbol, '', range.fromMs, range.toMs)
  }

  async deleteInstruments(symbols: readonly string[]): Promise<void> {
    for (const s of new Set(symbols)) await this.#tombstone('instruments', s, '', undefined, undefined)
  }

  /**
   * Sends what is gathered, then the one row that makes the whole import visible, atomically, to
   * every reader; refused when a vacuum took this import for dead (its process paused longer than
   * the grace) and removed its rows.
   */
  async commit(): Promise<void> {
    this.#live()
    this.#open = false
    // The bar blocks, the small tables' INSERTs and the `committing` row (with the next write's
    // `begun` row, for a feed) go together: only the conditional commit row must follow them (each
    // INSERT waits for its part on disk).
    const { nextBegun } = this.#hooks
    const next = nextBegun && { id: newImportId(this.#id), atMs: Date.now() }
    const states = recordStates(this.#t.metaWriter, [
      [this.#id, 'committing'],
      ...(next ? [[next.id, 'begun'] as const] : []),
    ])
    if (next)
      void states.then(
        () => nextBegun(next),
        () => undefined,
      )
    const sent = await Promise.allSettled([this.#bars.finish(), this.#blobs.finish(), this.#meta.finish(), states])
    const failed = sent.find((r) => r.status === 'rejected')
    if (failed) {
      await this.#abandon()
      throw failed.reason
    }
    this.#stopBeats()
    this.#hooks.committing({ importId: this.#id, spans: this.#spans })
    // If this fails it is unknown whether the row landed; either way readers see all of the import or none.
    if (!(await commitImport(this.#t.metaWriter, this.#id, tablesMask(this.#meta.written)))) {
      await this.#state('aborted').catch(() => undefined)
      this.#hooks.abandoned(this.importId)
      throw new MdqError(
        'STORE_UNAVAILABLE',
        `import ${this.importId} was not committed: a vacuum took it for dead (no sign of life for longer than its grace) and removed its rows; nothing of it is visible, run it again`,
      )
    }
    await this.#hooks.committed()
  }

  async rollback(): Promise<void> {
    if (!this.#open) return
    this.#open = false
    await this.#abandon()
  }

  async #abandon(): Promise<void> {
    this.#stopBeats()
    await Promise.all([this.#bars.abandon(), this.#blobs.abandon(), this.#meta.abandon()])
    await this.#state('aborted').catch(() => undefined)
    this.#hooks.abandoned(this.importId)
  }
}
