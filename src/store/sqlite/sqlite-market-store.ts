/** @module The embedded MarketStore on one SQLite file (WAL): columnar chunk BLOBs per symbol, period and span. */
import Database from 'better-sqlite3'
import { closeSync, openSync, readSync } from 'node:fs'
import type { Bars } from '../../domain/bars.js'
import { MdqError } from '../../domain/errors.js'
import type { ExFactorEvent } from '../../domain/ex-factors.js'
import { MARKETS, parseSymbol } from '../../domain/market.js'
import type { Instrument, SecurityType } from '../../domain/instrument.js'
import type { PeriodRange, Statement, StatementRecord } from '../../domain/financials.js'
import { universeOfRows, type StoredUniverse, type UniverseSpell } from '../../domain/universe.js'
import {
  writeBatchWith,
  type BarQuery,
  type MarketStore,
  type StoreCapabilities,
  type StoreWriter,
  type WriteBatch,
} from '../market-store.js'
import { ChunkCorruptError } from './chunk-codec.js'
import { chunkStatements } from './chunk-statements.js'
import { deleteFinancialsWith, financialStatements, putFinancialsWith, readFinancialsWith } from './financials.js'
import { deleteBarsWith, MAX_MS, putBarsWith, readBarsWith } from './chunks.js'
import { buildPendingRollups, TouchedDays } from './rollups.js'
import { WrittenChunks } from './written-chunks.js'
import { MIGRATIONS } from './schema.js'
import { guarded, migrate, openDb, schemaVersion, tableExists, type Db, type OpenOptions } from './sqlite-db.js'
import { keepReserve, orDiskFullThrown, sayingDiskFull, withReserve } from './disk-room.js'
import { ChunkScrubber } from './scrub.js'

interface InstrumentRow {
  symbol: string
  code: string
  exchange: string
  name: string | null
  type: string | null
  listing_date: string | null
  tick_size: number | null
  total_shares: number | null
  float_shares: number | null
  limit_up: number | null
  limit_down: number | null
  name_en: string | null
  lot_size: number | null
}

/** Prepared statements of one connection. */
function statements(db: Db) {
  return {
    ...chunkStatements(db),
    financials: financialStatements(db),
    instrument: db.prepare<[string], InstrumentRow>('SELECT * FROM instruments WHERE symbol = ?'),
    search: db.prepare<[{ p: string; limit: number }], InstrumentRow>(
      "SELECT * FROM instruments WHERE symbol LIKE @p ESCAPE '\\' OR name LIKE @p ESCAPE '\\' OR code LIKE @p ESCAPE '\\' OR name_en LIKE @p ESCAPE '\\' ORDER BY symbol LIMIT @limit",
    ),
    putInstrument: db.prepare(
      `INSERT OR REPLACE INTO instruments (symbol, code, exchange, name, type, listing_date, tick_size, total_shares, float_shares, limit_up, limit_down, name_en, lot_size)
       VALUES (@symbol, @code, @exchange, @name, @type, @listingDate, @tickSize, @totalShares, @floatShares, @limitUp, @limitDown, @nameEn, @lotSize)`,
    ),
    deleteInstrument: db.prepare<[string]>('DELETE FROM instruments WHERE symbol = ?'),
    events: db.prepare<[string, number, number], { ts: number; ex_factor: number }>(
      'SELECT ts, ex_factor FROM ex_factors WHERE symbol = ? AND ts >= ? AND ts <= ? ORDER BY ts',
    ),
    putEvent: db.prepare<[string, number, number]>(
      'INSERT OR REPLACE INTO ex_factors (symbol, ts, ex_factor) VALUES (?, ?, ?)',
    ),
    deleteEvents: db.prepare<[string, number, number]>(
      'DELETE FROM ex_factors WHERE symbol = ? AND ts >= ? AND ts <= ?',
    ),
    meta: db.prepare<[string], number>('SELECT value FROM meta WHERE key = ?').pluck(),
    changeCounter: db.prepare('PRAGMA data_version').pluck(),
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    bumpGeneration: db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'generation'"),
  }
}
type Statements = ReturnType<typeof statements>

function toInstrument(r: InstrumentRow): Instrument {
  const { exchange } = parseSymbol(r.symbol)
  return {
    symbol: r.symbol,
    code: r.code,
    exchange,
    region: MARKETS[exchange].region,
    name: r.name,
    type: r.type as SecurityType | null,
    listingDate: r.listing_date,
    tickSize: r.tick_size,
    totalShares: r.total_shares,
    floatShares: r.float_shares,
    limitUp: r.limit_up,
    limitDown: r.limit_down,
    nameEn: r.name_en,
    lotSize: r.lot_size,
  }
}

// Listing and universes: small tables, read whole; statements prepared per call.
function listInstrumentsWith(db: Db, filter: { exchange?: string; type?: string }): InstrumentRow[] {
  const where = [
    filter.exchange !== undefined ? 'exchange = @exchange' : '',
    filter.type !== undefined ? 'type = @type' : '',
  ].filter(Boolean)
  const sql = `SELECT * FROM instruments${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY symbol`
  return db.prepare<[{ exchange?: string; type?: string }], InstrumentRow>(sql).all({ ...filter })
}

function readUniversesWith(db: Db): StoredUniverse[] {
  const members = new Map<string, UniverseSpell[]>()
  for (const m of db
    .prepare<[], { universe_id: string; symbol: string; in_date: string | null; out_date: string | null }>(
      'SELECT universe_id, symbol, in_date, out_date FROM universe_members ORDER BY universe_id, position',
    )
    .all()) {
    const list = members.get(m.universe_id) ?? []
    list.push({ symbol: m.symbol, inDate: m.in_date, outDate: m.out_date })
    members.set(m.universe_id, list)
  }
  return db
    .prepare<
      [],
      { id: string; name: string; region: string | null; category: string | null; description: string | null }
    >('SELECT * FROM universes ORDER BY id')
    .all()
    .map((u) => universeOfRows(u, members.get(u.id) ?? []))
}

function putUniversesWith(db: Db, list: readonly StoredUniverse[]): void {
  const put = db.prepare(
    'INSERT OR REPLACE INTO universes (id, name, region, category, description) VALUES (@id, @name, @region, @category, @description)',
  )
  const clear = db.prepare<[string]>('DELETE FROM universe_members WHERE universe_id = ?')
  const member = db.prepare<[string, number, string, string | null, string | null]>(
    'INSERT INTO universe_members (universe_id, position, symbol, in_date, out_date) VALUES (?, ?, ?, ?, ?)',
  )
  for (const u of list) {
    put.run({ id: u.id, name: u.name, region: u.region, category: u.category, description: u.description })
    clear.run(u.id)
    const rows = u.spells ?? u.symbols.map((symbol) => ({ symbol, inDate: null, outDate: null }))
    rows.forEach((r, i) => member.run(u.id, i, r.symbol, r.inDate, r.outDate))
  }
}

/** SQLite result codes that mean the file itself is damaged, not merely busy. */
const DAMAGE_CODES = new Set([
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT_INDEX',
  'SQLITE_CORRUPT_SEQUENCE',
  'SQLITE_CORRUPT_VTAB',
])
const damaged = (reason: string) =>
  new MdqError('STORE_UNAVAILABLE', `The store is damaged (${reason}); restore it from a backup or re-import.`)

/** Before migration 3 drops the old in-store keys table, its keys must have moved (SqliteKeyStore.adoptLegacyKeys). */
function refuseToDropKeys(db: Db): void {
  if (
    schemaVersion(db) < 3 &&
    tableExists(db, 'api_keys') &&
    db.prepare('SELECT 1 FROM api_keys LIMIT 1').get() !== undefined
  )
    throw new Error(
      'this store still holds API keys: open it through mdq (openStores), which moves them to the keys file first',
    )
}

export class SqliteMarketStore implements MarketStore {
  readonly capabilities: StoreCapabilities
  readonly #db: Db
  readonly #st: Statements
  readonly #path: string
  #writing = false

  private constructor(path: string, db: Db) {
    this.#path = path
    this.#db = db
    this.#st = statements(db)
    // A :memory: store has one connection: its readers share the writer's transaction, and no
    // other process can import into it.
    const file = path !== ':memory:'
    this.capabilities = {
      liveImport: file,
      distributed: false,
      storedRollups: true,
      snapshotReads: true,
      blockingReads: true,
    }
  }

  /**
   * Opens (creating and migrating if needed) the store file; ':memory:' for a throwaway store.
   * `useReserve`: open on a full disk too, with the room kept beside the file (disk-room.ts): serving.
   */
  static open(path: string, options: OpenOptions & { readonly useReserve?: boolean } = {}): SqliteMarketStore {
    const open = () => {
      const db = openDb(path, options)
      try {
        if (!options.readonly) {
          refuseToDropKeys(db)
          migrate(db, MIGRATIONS, 'store')
        }
        const store = new SqliteMarketStore(path, db)
        if (!options.readonly) buildPendingRollups(db, store.#st)
        return store
      } catch (err) {
        db.close()
        throw err
      }
    }
    const what = 'open the store'
    const store = options.useReserve ? withReserve(path, what, open) : orDiskFullThrown(path, what, open)
    if (!options.readonly) keepReserve(path)
    return store
  }

  get path(): string {
    return this.#path
  }

  /** guarded(), and a damaged chunk or page is remembered until the data changes (an import may rewrite it): /readyz reports it. */
  #read<T>(read: () => T): T {
    return guarded(() => {
      try {
        return read()
      } catch (err) {
        if (!(err instanceof ChunkCorruptError || (err instanceof Database.SqliteError && DAMAGE_CODES.has(err.code))))
          throw err
        this.#damage ??= {
          reason: err instanceof ChunkCorruptError ? err.message : err.code,
          counter: this.#st.changeCounter.get(),
        }
        throw damaged(this.#damage.reason)
      }
    })
  }
  #damage: { reason: string; counter: unknown } | undefined
  #scrubber: ChunkScrubber | undefined

  async withSnapshot<T>(read: () => Promise<T>): Promise<T> {
    if (this.#db.inTransaction) return read() // an outer snapshot (or this connection's own write)
    guarded(() => this.#st.begin.run())
    const snapshot = (this.#snapshot = { version: undefined })
    try {
      return await read()
    } finally {
      if (this.#snapshot === snapshot) this.#snapshot = undefined
      // Still open unless a statement failed so that SQLite rolled it back.
      if (this.#db.inTransaction) guarded(() => this.#st.commit.run())
    }
  }
  /** The read transaction withSnapshot began, and the data version read in it (one for the whole snapshot). */
  #snapshot: { version: string | undefined } | undefined

  async readBars(q: BarQuery): Promise<Bars> {
    return this.#read(() => readBarsWith(this.#st, q))
  }

  async readInstruments(symbols: readonly string[]): Promise<Instrument[]> {
    return this.#read(() => {
      const known = this.#instrumentMap()
      const out: Instrument[] = []
      for (const s of new Set(symbols)) {
        const instrument = known.get(s)
        if (instrument) out.push(instrument)
      }
      return out
    })
  }

  /**
   * Every instrument, read once per data version: a 1,000-symbol lookup is one read, not 1,000 queries. Instruments
   * are frozen, as callers share them.
   */
  #instrumentMap(): ReadonlyMap<string, Instrument> {
    const version = this.#currentVersion()
    if (this.#instruments?.version !== version) {
      const map = new Map<string, Instrument>()
      for (const row of listInstrumentsWith(this.#db, {})) map.set(row.symbol, Object.freeze(toInstrument(row)))
      this.#instruments = { version, map }
    }
    return this.#instruments.map
  }
  #instruments: { version: string; map: Map<string, Instrument> } | undefined

  async searchInstruments(text: string, limit: number): Promise<Instrument[]> {
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    return this.#read(() => this.#st.search.all({ p: pattern, limit }).map(toInstrument))
  }

  // Listing and universes.
  async listInstruments(filter: { exchange?: string; type?: string } = {}): Promise<Instrument[]> {
    return guarded(() => listInstrumentsWith(this.#db, filter).map(toInstrument))
  }

  async readUniverses(): Promise<StoredUniverse[]> {
    return guarded(() => readUniversesWith(this.#db))
  }

  async readExFactors(
    symbols: readonly string[],
    fromMs = -MAX_MS,
    toMs = MAX_MS,
  ): Promise<Map<string, ExFactorEvent[]>> {
    return this.#read(() => {
      const out = new Map<string, ExFactorEvent[]>()
      const known = this.#instrumentMap()
      for (const s of new Set(symbols)) {
        if (!known.has(s)) continue
        out.set(
          s,
          this.#st.events.all(s, fromMs, toMs).map((r) => ({ timestamp: r.ts, exFactor: r.ex_factor })),
        )
      }
      return out
    })
  }

  async readFinancials(
    statement: Statement,
    symbols: readonly string[],
    range: PeriodRange = {},
  ): Promise<Map<string, StatementRecord[]>> {
    return this.#read(() => readFinancialsWith(this.#st.financials, statement, symbols, range))
  }

  async check(): Promise<void> {
    if (this.#damage && this.#damage.counter === this.#st.changeCounter.get()) throw damaged(this.#damage.reason)
    this.#damage = undefined
    if (this.#path !== ':memory:') {
      // SQLite may answer from its page cache; read the file's header to know the file is there and sane.
      const fd = openSync(this.#path, 'r')
      try {
        const header = Buffer.alloc(16)
        readSync(fd, header, 0, 16, 0)
        if (header.toString('latin1') !== 'SQLite format 3\0')
          throw new MdqError('STORE_UNAVAILABLE', 'The store file is not a SQLite database.')
      } finally {
        closeSync(fd)
      }
    }
    await this.dataVersion()
    // Each check verifies the checksums of the next slice of chunks: a damaged chunk fails /readyz
    // even when no query has read it yet.
    this.#read(() => (this.#scrubber ??= new ChunkScrubber(this.#db)).step())
  }

  /**
   * Read on every request (ETags, caches): `meta` is re-read only when PRAGMA data_version, SQLite's
   * cheap "another connection committed" counter, moves. Writers always use another connection.
   */
  async dataVersion(): Promise<string> {
    // Inside a snapshot the version cannot move: read once (a worker's task asked four times).
    const snapshot = this.#snapshot
    if (snapshot !== undefined && this.#db.inTransaction)
      return (snapshot.version ??= guarded(() => this.#currentVersion()))
    return guarded(() => this.#currentVersion())
  }

  #currentVersion(): string {
    const counter = this.#st.changeCounter.get() as number
    if (counter !== this.#seenCounter || this.#version === undefined) {
      this.#version = `${this.#st.meta.get('store_id')}.${this.#st.meta.get('generation')}`
      this.#seenCounter = counter
    }
    return this.#version
  }
  #seenCounter = -1
  #version: string | undefined

  async importCount(): Promise<number> {
    return guarded(() => this.#st.meta.get('generation')!)
  }

  async write(batch: WriteBatch): Promise<void> {
    await writeBatchWith(await this.beginWrite(), batch)
  }

  /**
   * The write transaction runs on a connection of its own (for a file), so this store's readers
   * never see uncommitted data; another process's readers see the old data until commit (WAL).
   */
  async beginWrite(): Promise<StoreWriter> {
    if (this.#writing) throw new Error('a write transaction is already open on this store')
    const what = 'nothing was written'
    const db = this.#path === ':memory:' ? this.#db : orDiskFullThrown(this.#path, what, () => openDb(this.#path))
    const st = db === this.#db ? this.#st : statements(db)
    db.exec('BEGIN IMMEDIATE')
    this.#writing = true
    let open = true
    const written = new WrittenChunks()
    const touched = new TouchedDays(st, written)
    const finish = (sql: 'COMMIT' | 'ROLLBACK') => {
      if (!open) return
      open = false
      this.#writing = false
      try {
        if (sql === 'COMMIT') {
          touched.rebuildAll()
          st.bumpGeneration.run()
        }
        db.exec(sql)
        if (db === this.#db) this.#version = undefined // data_version only counts other connections' commits
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK') // a commit that failed on the way leaves the store as it was
        throw err
      } finally {
        if (db !== this.#db) db.close()
      }
    }
    const live = () => {
      if (!open) throw new Error('this write transaction has ended')
    }
    // A write that fails for want of room says so (the transaction rolls back: nothing is written).
    return sayingDiskFull<StoreWriter>(
      {
        putInstruments: async (list) => {
          live()
          for (const i of list) st.putInstrument.run({ ...i })
        },
        putBars: async (symbol, period, bars) => {
          live()
          putBarsWith(st, symbol, period, bars, written)
          const n = bars.timestamp.length
          if (period === '1m' && n > 0) touched.add(symbol, bars.timestamp[0], bars.timestamp[n - 1])
        },
        putExFactors: async (symbol, events) => {
          live()
          for (const e of events) st.putEvent.run(symbol, e.timestamp, e.exFactor)
        },
        deleteBars: async (range) => {
          live()
          deleteBarsWith(st, range, written)
          if (range.period === '1m') touched.add(range.symbol, range.fromMs, range.toMs)
        },
        deleteExFactors: async (range) => {
          live()
          st.deleteEvents.run(range.symbol, range.fromMs ?? -MAX_MS, range.toMs ?? MAX_MS)
        },
        putFinancials: async (batch) => {
          live()
          putFinancialsWith(st.financials, batch)
        },
        deleteFinancials: async (range) => {
          live()
          deleteFinancialsWith(st.financials, range)
        },
        deleteInstruments: async (symbols) => {
          live()
          for (const s of symbols) st.deleteInstrument.run(s)
        },
        putUniverses: async (list) => {
          live()
          putUniversesWith(db, list)
        },
        commit: async () => finish('COMMIT'),
        rollback: async () => finish('ROLLBACK'),
      },
      this.#path,
      what,
    )
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close()
  }
}
