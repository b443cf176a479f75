/** @module One import into ClickHouse: rows tagged with its id, made visible at once by its commit row (FORMAT.md). */
import { randomInt } from 'node:crypto'
import { barCount, type Bars } from '../../domain/bars.js'
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import type { Instrument } from '../../domain/instrument.js'
import type { StoredPeriod } from '../../domain/period.js'
import type { StoredUniverse } from '../../domain/universe.js'
import { valuesJson } from '../../domain/financials.js'
import type { MarketDepth } from '../../domain/depth.js'
import type { BarRange, EventRange, LiveQuote, StatementBatch, StatementRange, StoreWriter } from '../market-store.js'
import { depthRow, liveQuoteRow } from './live-tables.js'
import { tsv } from './connection.js'
import { INSERT_BLOCK_ROWS, encodeBars, encodeRows, type Cell, type ColumnType } from './row-binary.js'
import { BAR_COLUMNS, type Topology } from './schema.js'
import { OPEN_FROM, OPEN_TO } from './snapshot.js'
import { FIRST_PERIOD, LAST_PERIOD } from './financials-reads.js'

/** Bar INSERTs sent at once by one putBars. */
const INSERTS_IN_FLIGHT = 2

/**
 * A putBars of at most this many bars waits with the others of its transaction, and they go in as one
 * INSERT at commit (or once they hold PENDING_MAX_ROWS): a live push writes a bar or two for each of
 * thousands of symbols, which as an INSERT each would cost thousands of round trips and parts.
 */
const SMALL_PUT_ROWS = 64
const PENDING_MAX_ROWS = 100_000

/** A live writer re-inserts its `begun` row this often, so vacuum can tell it from a dead one. */
const HEARTBEAT_MS = 5_000

let lastId = 0n
/**
 * Import ids order imports by their start (newest wins): milliseconds in the high bits, 20 random
 * bits below so two processes starting in the same millisecond still differ.
 */
export function newImportId(): bigint {
  let id = (BigInt(Date.now()) << 20n) | BigInt(randomInt(1 << 20))
  if (id <= lastId) id = lastId + 1n
  lastId = id
  return id
}

export interface WriterHooks {
  /** After the commit row is in: refresh what this process reads. */
  committed(): Promise<void>
  /** After a rollback or failed commit: remove the import's rows (best effort). */
  abandoned(id: string): void
}

export class ClickHouseWriter implements StoreWriter {
  readonly #t: Topology
  readonly #id: bigint
  readonly #hooks: WriterHooks
  #seq = 0
  #open = true
  #heartbeat: NodeJS.Timeout | undefined
  /** Small putBars not yet sent: their encoded rows (each with the seq of its putBars) and series rows. */
  #pending = { bodies: [] as Buffer[], rows: 0, series: [] as (string | number)[][] }

  private constructor(t: Topology, id: bigint, hooks: WriterHooks) {
    this.#t = t
    this.#id = id
    this.#hooks = hooks
  }

  static async begin(t: Topology, id: bigint, hooks: WriterHooks): Promise<ClickHouseWriter> {
    const w = new ClickHouseWriter(t, id, hooks)
    // The begun row goes in before any data, so every row on disk belongs to a known import.
    await w.#state('begun')
    w.#heartbeat = setInterval(() => void w.#state('begun').catch(() => undefined), HEARTBEAT_MS)
    w.#heartbeat.unref()
    return w
  }

  get importId(): string {
    return String(this.#id)
  }

  async #state(state: 'begun' | 'committed' | 'aborted'): Promise<void> {
    await this.#t.metaWriter.insert(
      'imports',
      ['import_id', 'state', 'at_ms'],
      'TabSeparated',
      `${this.#id}\t${state}\t${Date.now()}\n`,
    )
  }

  #live(): void {
    if (!this.#open) throw new Error('this write transaction has ended')
  }

  /** Small-table rows as TabSeparated, each with its own seq so a later row of one import wins. */
  async #insertMeta(
    table: string,
    columns: readonly string[],
    rows: readonly (string | number | null)[][],
  ): Promise<void> {
    this.#live()
    if (rows.length === 0) return
    const body = rows.map((r) => [...r.map(tsv), String(this.#id), String(++this.#seq)].join('\t')).join('\n') + '\n'
    await this.#t.metaWriter.insert(table, [...columns, 'import_id', 'seq'], 'TabSeparated', body)
  }

  /** Rows with floats go in binary: 18.16 parses floats from text inexactly. */
  async #insertBinary(
    table: string,
    columns: readonly [string, ColumnType][],
    rows: readonly (readonly Cell[])[],
  ): Promise<void> {
    this.#live()
    if (rows.length === 0) return
    const body = encodeRows(
      [...columns.map(([, t]) => t), 'UInt64', 'UInt32'],
      rows.map((r) => [...r, this.#id, ++this.#seq]),
    )
    await this.#t.metaWriter.insert(table, [...columns.map(([c]) => c), 'import_id', 'seq'], 'RowBinary', body)
  }

  async putInstruments(list: readonly Instrument[]): Promise<void> {
    const s = 'Nullable(String)'
    const f = 'Nullable(Float64)'
    await this.#insertBinary(
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

  async putBars(symbol: string, period: StoredPeriod, bars: Bars): Promise<void> {
    this.#live()
    const ts = bars.timestamp
    for (let i = 1; i < ts.length; i++)
      if (!(ts[i] > ts[i - 1]))
        throw new Error(`putBars ${symbol} ${period}: timestamps must be strictly ascending (index ${i})`)
    const n = barCount(bars)
    if (n === 0) return
    const seq = ++this.#seq
    if (n <= SMALL_PUT_ROWS) {
      const p = this.#pending
      p.bodies.push(encodeBars(symbol, period, bars, 0, n, this.#id, seq))
      p.rows += n
      p.series.push([symbol, period, ts[0], ts[n - 1]])
      if (p.rows >= PENDING_MAX_ROWS) await this.#sendPending()
      return
    }
    const settings = this.#barSettings()
    // Blocks are encoded while the server takes earlier ones, INSERTS_IN_FLIGHT at a time: the
    // server parses each INSERT on one thread, so two keep two of its cores busy.
    const sending: Promise<void>[] = []
    let failure: { reason: unknown } | undefined
    try {
      for (let from = 0; from < n; from += INSERT_BLOCK_ROWS) {
        const body = encodeBars(symbol, period, bars, from, Math.min(n, from + INSERT_BLOCK_ROWS), this.#id, seq)
        if (sending.length === INSERTS_IN_FLIGHT) await sending.shift()
        const insert = this.#t.entryWriter.insert('bars', BAR_COLUMNS, 'RowBinary', body, settings)
        insert.catch(() => undefined) // awaited below; this only keeps a failure of a later one from going unhandled first
        sending.push(insert)
      }
    } catch (reason) {
      failure = { reason }
    }
    // None is left running past putBars, failed or not.
    const settled = await Promise.allSettled(sending)
    failure ??= settled.find((r) => r.status === 'rejected')
    if (failure) throw failure.reason
    await this.#insertMeta('series', ['symbol', 'period', 'first_ts', 'last_ts'], [[symbol, period, ts[0], ts[n - 1]]])
  }

  /** Sharded by symbol: the Distributed table must hand each block to its shard before the commit row exists. */
  #barSettings(): Record<string, 0 | 1> {
    return this.#t.cluster ? { insert_distributed_sync: 1 } : {}
  }

  /** The small putBars held so far, as one bars INSERT and one series INSERT. */
  async #sendPending(): Promise<void> {
    const { bodies, series } = this.#pending
    if (bodies.length === 0) return
    this.#pending = { bodies: [], rows: 0, series: [] }
    const settings = this.#barSettings()
    await this.#t.entryWriter.insert('bars', BAR_COLUMNS, 'RowBinary', Buffer.concat(bodies), settings)
    await this.#insertMeta('series', ['symbol', 'period', 'first_ts', 'last_ts'], series)
  }

  async putExFactors(symbol: string, events: readonly ExFactorEvent[]): Promise<void> {
    await this.#insertBinary(
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
    await this.#t.metaWriter.insert(
      'universes',
      ['id', 'name', 'region', 'category', 'description', 'symbols', 'import_id', 'seq'],
      'TabSeparated',
      body,
    )
    // A dated version's dates go beside it, under the same (import_id, seq) (financials-schema.ts).
    const dated = rows.filter(({ u }) => u.spells)
    if (dated.length)
      await this.#t.metaWriter.insert(
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
    await this.#insertMeta(
      'financials',
      ['statement', 'symbol', 'period_end', 'announce_date', 'data'],
      b.records.map((r) => [b.statement, b.symbol, r.periodEnd, r.announceDate, valuesJson(r.values)]),
    )
  }

  async deleteFinancials(r: StatementRange): Promise<void> {
    await this.#insertMeta(
      'financial_deletes',
      ['statement', 'symbol', 'from_period', 'to_period'],
      [[r.statement, r.symbol, r.fromPeriod ?? FIRST_PERIOD, r.toPeriod ?? LAST_PERIOD]],
    )
  }

  async putLiveQuotes(list: readonly LiveQuote[]): Promise<void> {
    await this.#insertMeta('live_quotes', ['symbol', 'ts', 'quote'], list.map(liveQuoteRow))
  }

  async putDepth(list: readonly MarketDepth[]): Promise<void> {
    await this.#insertMeta('live_depth', ['symbol', 'ts', 'depth'], list.map(depthRow))
  }

  async #tombstone(
    kind: 'bars' | 'ex_factors' | 'instruments',
    symbol: string,
    period: string,
    fromMs: number | undefined,
    toMs: number | undefined,
  ): Promise<void> {
    await this.#insertMeta(
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

  /** The one row that makes the whole import visible, atomically, to every reader. */
  async commit(): Promise<void> {
    this.#live()
    await this.#sendPending()
    this.#end()
    // If this fails it is unknown whether the row landed; either way readers see all of the import or none.
    await this.#state('committed')
    await this.#hooks.committed()
  }

  async rollback(): Promise<void> {
    if (!this.#open) return
    this.#end()
    await this.#state('aborted').catch(() => undefined)
    this.#hooks.abandoned(this.importId)
  }

  #end(): void {
    this.#open = false
    clearInterval(this.#heartbeat)
  }
}
