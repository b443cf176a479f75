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
import type { MarketDepth } from '../../domain/depth.js'
import {
  writeBatchWith,
  type BarQuery,
  type DataVersions,
  type LiveQuote,
  type MarketStore,
  type StoreCapabilities,
  type StoreWriter,
  type WriteBatch,
} from '../market-store.js'
import { ChunkCorruptError } from '../chunk-codec.js'
import { readFinancialsWith } from './financials.js'
import { MAX_MS } from './chunks.js'
import { depthOf, liveQuoteOf } from '../live-json.js'
import { liveMarksSince, LiveSymbolSeqs } from './live-tables.js'
import { buildPendingRollups } from './rollups.js'
import { MIGRATIONS } from './schema.js'
import { storeStatements, type InstrumentRow, type StoreStatements } from './sqlite-statements.js'
import {
  beginSqliteWrite,
  foldTailStep,
  giveBackFreePages,
  type FoldCursor,
  type WriterConnection,
} from './sqlite-writer.js'
import { KnownTails, readBarsLive } from './tail.js'
import { ChunkCache } from './chunk-cache.js'
import { guarded, migrate, openDb, schemaVersion, tableExists, type Db, type OpenOptions } from './sqlite-db.js'
import { keepReserve, orDiskFullThrown, sayingDiskFull, withReserve } from './disk-room.js'
import { ChunkScrubber } from './scrub.js'
import { ReadMapping } from './read-mapping.js'

type Statements = StoreStatements

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

/** A data version `store_id.generation.live_seq` as what imports made (`store_id.generation`) and the live sequence. */
function versionParts(data: string): { base: string; seen: number } {
  const dot = data.lastIndexOf('.')
  return { base: data.slice(0, dot), seen: Number(data.slice(dot + 1)) }
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

/** WAL pages after which the writer's commit checkpoints (SQLite's default: 1,000). */
const WRITER_CHECKPOINT_PAGES = 10_000
/** What a write that failed for want of room left behind. */
const WRITE_FAILED = 'nothing was written'

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
  /** Whether this connection reads the file mapped: not while a feed commits (read-mapping.ts). */
  readonly #mapping: ReadMapping
  /** Decoded chunks this connection read (chunk-cache.ts); none for :memory:, whose reads share the writer's transaction. */
  readonly #chunks: ChunkCache | undefined
  #writing = false

  private constructor(path: string, db: Db) {
    this.#path = path
    this.#db = db
    this.#st = storeStatements(db)
    this.#mapping = new ReadMapping(db)
    // A :memory: store has one connection: its readers share the writer's transaction, and no
    // other process can import into it.
    const file = path !== ':memory:'
    this.#chunks = file ? new ChunkCache() : undefined
    this.capabilities = {
      liveImport: file,
      distributed: false,
      storedRollups: true,
      snapshotReads: true,
      blockingReads: true,
      symbolVersions: true,
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
    guarded(() => {
      this.#mapping.apply()
      this.#st.begin.run()
    })
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
    return this.#read(() => readBarsLive(this.#st, q, this.#chunks))
  }

  async readLiveQuotes(symbols: readonly string[]): Promise<Map<string, LiveQuote>> {
    return this.#read(() => {
      const out = new Map<string, LiveQuote>()
      for (const s of new Set(symbols)) {
        const row = this.#st.liveQuote.get(s)
        if (row !== undefined) out.set(s, liveQuoteOf(s, row))
      }
      return out
    })
  }

  async readDepths(symbols: readonly string[]): Promise<Map<string, MarketDepth>> {
    return this.#read(() => {
      const out = new Map<string, MarketDepth>()
      for (const symbol of symbols) {
        const json = this.#st.depth.get(symbol)
        if (json !== undefined) out.set(symbol, depthOf(symbol, json))
      }
      return out
    })
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
   * Every instrument, read once per generation: a 1,000-symbol lookup is one read, not 1,000 queries.
   * A live commit moves the data version, not the generation, and writes no instrument (a write that
   * does moves the generation), so a feed does not make each thread read them all again after every
   * push. Instruments are frozen, as callers share them.
   */
  #instrumentMap(): ReadonlyMap<string, Instrument> {
    const { base: version } = versionParts(this.#currentVersion())
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

  async readVersions(): Promise<DataVersions> {
    // Read back from the data version itself (a snapshot's may be older than what this connection has seen since).
    const data = await this.dataVersion()
    const { base, seen } = versionParts(data)
    // Caught up here, not with each version read: a writer reads the version after every commit and needs no symbol's.
    const seqs = this.#liveSeqs
    guarded(() => seqs.catchUp((since) => liveMarksSince(this.#st, since), seen))
    return {
      data,
      // A symbol changed twice since these versions were read has no version of then: the data version (a miss, never a stale hit).
      of: (symbol) => {
        const seq = seqs.at(symbol, seen)
        return seq === undefined ? data : `${base}.s${seq}`
      },
    }
  }

  /**
   * `store_id.generation.live_seq`; a symbol's version is `store_id.generation.s<seq>`, its seq the
   * live_seq of the last live commit that changed its bars (FORMAT.md "Versions").
   */
  #currentVersion(): string {
    const counter = this.#st.changeCounter.get() as number
    this.#mapping.observe(counter)
    if (counter !== this.#seenCounter || this.#version === undefined) {
      const liveSeq = this.#st.meta.get('live_seq')!
      this.#version = `${this.#st.meta.get('store_id')}.${this.#st.meta.get('generation')}.${liveSeq}`
      this.#seenCounter = counter
    }
    return this.#version
  }
  #seenCounter = -1
  #version: string | undefined
  readonly #liveSeqs = new LiveSymbolSeqs()

  async importCount(): Promise<number> {
    return guarded(() => this.#st.meta.get('generation')!)
  }

  async write(batch: WriteBatch): Promise<void> {
    await writeBatchWith(await this.beginWrite(), batch)
  }

  /**
   * The write transaction runs on a connection of its own (for a file), kept open for the next one,
   * so this store's readers never see uncommitted data; another process's readers see the old data
   * until commit (WAL).
   */
  async beginWrite(): Promise<StoreWriter> {
    if (this.#writing) throw new Error('a write transaction is already open on this store')
    const w = this.#writer()
    const writer = beginSqliteWrite(w, () => {
      this.#writing = false
      if (w.db === this.#db) this.#version = undefined // data_version only counts other connections' commits
    })
    this.#writing = true
    // A write that fails for want of room says so (the transaction rolls back: nothing is written).
    return sayingDiskFull<StoreWriter>(writer, this.#path, WRITE_FAILED)
  }

  #writer(): WriterConnection {
    if (!this.#writerConnection?.db.open) {
      const db =
        this.#path === ':memory:' ? this.#db : orDiskFullThrown(this.#path, WRITE_FAILED, () => openDb(this.#path))
      // A live push rewrites the same pages (each symbol's quote, its tail rows) commit after commit:
      // checkpointing every 10,000 pages instead of 1,000 copies each such page into the file once
      // for many commits (FORMAT.md "Connections").
      db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`)
      this.#writerConnection = { db, st: db === this.#db ? this.#st : storeStatements(db), tails: new KnownTails() }
    }
    return this.#writerConnection
  }
  #writerConnection: WriterConnection | undefined

  /**
   * Folds the next slice of tail series that have grown (a transaction of its own, no version moves);
   * once a whole walk over the tail has folded nothing (the market at rest), gives the pages the
   * folds freed back to the file system, a step at a time. True while there is more to do at once;
   * false when a walk is done or a write is open.
   */
  async foldAppends(): Promise<boolean> {
    if (this.#writing) return false
    const w = this.#writer()
    this.#writing = true
    try {
      if (this.#givingBack) return (this.#givingBack = giveBackFreePages(w))
      const moved = foldTailStep(w, this.#foldCursor)
      this.#walkMoved += moved
      if (this.#foldCursor.symbol !== '') return true
      const atRest = this.#walkMoved === 0
      this.#walkMoved = 0
      return atRest ? (this.#givingBack = giveBackFreePages(w)) : moved > 0
    } finally {
      this.#writing = false
    }
  }
  readonly #foldCursor: FoldCursor = { symbol: '', period: '' }
  /** Rows the current walk over the tail has folded so far. */
  #walkMoved = 0
  /** Free pages are being given back (a walk found nothing to fold, and more than a few pages are free). */
  #givingBack = false

  async close(): Promise<void> {
    if (this.#writerConnection?.db.open) this.#writerConnection.db.close()
    if (this.#db.open) this.#db.close()
  }
}
