/**
 * @module One write transaction on a store file: chunks with their rollups kept in step, small appends
 * into the tail, live quotes and depth; which versions move at commit (FORMAT.md "Versions").
 */
import { barsOfRows, type Bars } from '../../domain/bars.js'
import type { StoredPeriod } from '../../domain/period.js'
import type { StoredUniverse } from '../../domain/universe.js'
import { ascending, type LiveQuote, type StoreWriter } from '../market-store.js'
import { deleteBarsWith, MAX_MS, putBarsWith } from './chunks.js'
import { deleteFinancialsWith, putFinancialsWith } from './financials.js'
import { depthJson, liveQuoteBytes } from '../live-json.js'
import { foldLiveCommitsStep, logLiveCommit } from './live-tables.js'
import { TouchedDays } from './rollups.js'
import type { Db } from './sqlite-db.js'
import type { StoreStatements } from './sqlite-statements.js'
import { KnownTails, TAIL_FOLD_ROWS, TailWriter } from './tail.js'
import { WrittenChunks } from './written-chunks.js'

/** A connection that writes, with its statements and what it knows of the tail. */
export interface WriterConnection {
  readonly db: Db
  readonly st: StoreStatements
  readonly tails: KnownTails
}

/** BEGIN IMMEDIATE (the file's write lock until COMMIT or ROLLBACK), with what the connection knows of the tail still true. */
function beginImmediate({ db, st, tails }: WriterConnection): void {
  db.exec('BEGIN IMMEDIATE')
  tails.begin(st.changeCounter.get() as number)
}

/** COMMIT or ROLLBACK of the open transaction, and what it learnt of the tail kept or dropped with it. */
function end({ db, tails }: WriterConnection, sql: 'COMMIT' | 'ROLLBACK'): void {
  if (sql === 'COMMIT') {
    db.exec(sql)
    tails.commit()
  } else {
    if (db.inTransaction) db.exec(sql) // SQLite may have rolled back already (a failed COMMIT)
    tails.rollback()
  }
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

/** The chunk writes of one transaction, rollups rebuilt for the 1m days they touch before it commits. */
class ChunkWrites {
  readonly written = new WrittenChunks()
  readonly touched: TouchedDays
  constructor(private readonly st: StoreStatements) {
    this.touched = new TouchedDays(st, this.written)
  }
  put(symbol: string, period: StoredPeriod, bars: Bars): void {
    putBarsWith(this.st, symbol, period, bars, this.written)
    const n = bars.timestamp.length
    if (period === '1m' && n > 0) this.touched.add(symbol, bars.timestamp[0], bars.timestamp[n - 1])
  }
}

/**
 * Begins a write transaction on `w` (BEGIN IMMEDIATE: the file's write lock until it ends); `ended` is
 * called once it has committed or rolled back. At commit: a transaction that changed anything but
 * appends and live data moves the generation (every version); one that appended moves `live_seq` and
 * logs its symbols under it (their versions, and the data version); a fold alone moves neither, as
 * no answer changes.
 */
export function beginSqliteWrite(w: WriterConnection, ended: () => void): StoreWriter {
  const { db, st } = w
  beginImmediate(w)
  let open = true
  /** Anything but tail appends and live data changed: every version moves. */
  let base = false
  /** Live data changed (quotes, depth, appends): the data version moves. */
  let liveData = false
  const chunks = new ChunkWrites(st)
  const tail = new TailWriter(st, w.tails, (symbol, period, bars) => chunks.put(symbol, period, bars))
  const finish = (sql: 'COMMIT' | 'ROLLBACK') => {
    if (!open) return
    open = false
    try {
      if (sql === 'COMMIT') {
        tail.foldOversized()
        chunks.touched.rebuildAll()
        if (base) st.bumpGeneration.run()
        if (liveData || tail.liveSymbols.size > 0) {
          st.bumpLiveSeq.run()
          if (tail.liveSymbols.size > 0) logLiveCommit(st, st.meta.get('live_seq')!, tail.liveSymbols)
        }
      }
      end(w, sql)
    } catch (err) {
      end(w, 'ROLLBACK') // a commit that failed on the way leaves the store as it was
      throw err
    } finally {
      ended()
    }
  }
  const live = () => {
    if (!open) throw new Error('this write transaction has ended')
  }
  const putSeries = (symbol: string, period: StoredPeriod, bars: Bars) => {
    const ts = bars.timestamp
    for (let i = 1; i < ts.length; i++)
      if (!(ts[i] > ts[i - 1]))
        throw new Error(`putBars ${symbol} ${period}: timestamps must be strictly ascending (index ${i})`)
    if (tail.tryAppend(symbol, period, bars)) return
    // The tail's bars go first, so these replace them where they meet, as a later write does.
    tail.fold(symbol, period)
    base = true
    chunks.put(symbol, period, bars)
  }
  const putLiveQuotes = (list: Iterable<LiveQuote>) => {
    liveData = true
    for (const q of list) st.putLiveQuote.run(q.symbol, q.state.last.timestamp, liveQuoteBytes(q))
  }
  return {
    putInstruments: async (list) => {
      live()
      base = true
      for (const i of list) st.putInstrument.run({ ...i })
    },
    putBars: async (symbol, period, bars) => {
      live()
      putSeries(symbol, period, bars)
    },
    putExFactors: async (symbol, events) => {
      live()
      base = true
      for (const e of events) st.putEvent.run(symbol, e.timestamp, e.exFactor)
    },
    deleteBars: async (range) => {
      live()
      tail.fold(range.symbol, range.period)
      base = true
      deleteBarsWith(st, range, chunks.written)
      if (range.period === '1m') chunks.touched.add(range.symbol, range.fromMs, range.toMs)
    },
    deleteExFactors: async (range) => {
      live()
      base = true
      st.deleteEvents.run(range.symbol, range.fromMs ?? -MAX_MS, range.toMs ?? MAX_MS)
    },
    putFinancials: async (batch) => {
      live()
      base = true
      putFinancialsWith(st.financials, batch)
    },
    deleteFinancials: async (range) => {
      live()
      base = true
      deleteFinancialsWith(st.financials, range)
    },
    deleteInstruments: async (symbols) => {
      live()
      base = true
      for (const s of symbols) st.deleteInstrument.run(s)
    },
    putUniverses: async (list) => {
      live()
      base = true
      putUniversesWith(db, list)
    },
    // One call for a whole push: a row a bar, no Bars and no promise a series.
    putLive: async ({ minutes, days, latest }) => {
      live()
      for (const [symbol, held] of minutes) {
        const only = held.size === 1 ? held.values().next().value : undefined
        if (!(only && tail.tryAppendRow(symbol, '1m', only))) putSeries(symbol, '1m', barsOfRows(ascending(held)))
      }
      for (const [symbol, day] of days)
        if (!tail.tryAppendRow(symbol, '1d', day)) putSeries(symbol, '1d', barsOfRows([day]))
      putLiveQuotes(latest.values())
    },
    putLiveQuotes: async (list) => {
      live()
      putLiveQuotes(list)
    },
    putDepth: async (list) => {
      live()
      liveData = true
      for (const d of list) st.putDepth.run(d.symbol, d.timestamp, depthJson(d))
    },
    commit: async () => finish('COMMIT'),
    rollback: async () => finish('ROLLBACK'),
  }
}

/** Tail series one fold step looks at: a step folds at most these many (about 0.5 ms each), holding the main thread that long. */
const FOLD_STEP_SERIES = 16

/** Where the background fold's walk over the tail's series stands (key order, wrapping around). */
export interface FoldCursor {
  symbol: string
  period: string
}

/**
 * One step of background folding, in one transaction that moves no version (answers do not change):
 * the next `series` tail series in key order are looked at, and those holding TAIL_FOLD_ROWS rows or
 * more are folded into their chunks but for their newest row; and once the live commit log has grown
 * to LIVE_COMMITS_FOLD commits, its oldest are folded into the symbols' marks. Returns how many tail
 * rows moved.
 */
export function foldTailStep(w: WriterConnection, cursor: FoldCursor, series = FOLD_STEP_SERIES): number {
  const { st } = w
  beginImmediate(w)
  try {
    const chunks = new ChunkWrites(st)
    const tail = new TailWriter(st, w.tails, (symbol, period, bars) => chunks.put(symbol, period, bars))
    const seen = st.tailSeries.all(cursor.symbol, cursor.period, series)
    let moved = 0
    for (const [symbol, period, rows] of seen)
      if (rows >= TAIL_FOLD_ROWS && (period === '1m' || period === '1d')) moved += tail.fold(symbol, period, true)
    chunks.touched.rebuildAll()
    foldLiveCommitsStep(st)
    end(w, 'COMMIT')
    const last = seen.at(-1)
    if (seen.length < series || last === undefined) Object.assign(cursor, { symbol: '', period: '' })
    else Object.assign(cursor, { symbol: last[0], period: last[1] })
    return moved
  } catch (err) {
    end(w, 'ROLLBACK')
    throw err
  }
}

/** Free pages a store at rest keeps for the writes to come (1 MB of 4 KiB pages). */
export const FREE_PAGES_KEPT = 256
/** Pages one step gives back (a few ms). */
const FREE_PAGES_STEP = 1024

/**
 * One step of giving free pages back to the file system, in a file made with incremental
 * auto-vacuum (FORMAT.md "Connections"): when more than FREE_PAGES_KEPT are free, the last pages of
 * the file move into free ones and the file is cut short (at the next checkpoint). True while more
 * than that remain free.
 */
export function giveBackFreePages({ db }: WriterConnection): boolean {
  if (db.pragma('auto_vacuum', { simple: true }) !== 2) return false
  const free = db.pragma('freelist_count', { simple: true }) as number
  if (free <= FREE_PAGES_KEPT) return false
  db.pragma(`incremental_vacuum(${Math.min(FREE_PAGES_STEP, free - FREE_PAGES_KEPT)})`)
  return free - FREE_PAGES_STEP > FREE_PAGES_KEPT
}
