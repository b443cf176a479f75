/**
 * @module Pushed batches into the store: quotes into minute and day bars through the builder, bars
 * as rows of an import, depth as is. A batch is written all or nothing (alone, or in one write with
 * the quote batches that waited for it), durable before its answer; the quotes and depth it accepted
 * are then published to the LiveFeed.
 */
import { randomBytes } from 'node:crypto'
import { mergeBars, type BarRow, type Bars } from '../domain/bars.js'
import type { MarketDepth } from '../domain/depth.js'
import { MdqError } from '../domain/errors.js'
import { bareInstrument } from '../domain/instrument.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import { applySnapshot, type SymbolState } from '../domain/minute-bars.js'
import type { StoredPeriod } from '../domain/period.js'
import type { LiveEvent, LiveFeed, PushedQuote } from '../live/live-feed.js'
import type { IngestLog, LiveQuote, LogEntry, MarketStore, StoreWriter } from '../store/market-store.js'
import { entryBody, quotesOfEntry } from './logged-quotes.js'
import { WriteBehind, type Writes } from './write-behind.js'
import type { PushedBar } from './pushed-rows.js'

/** What one push did: rows taken, and of the quotes how many were older than their symbol's latest or repeated it. */
export interface PushOutcome {
  readonly rows: number
  readonly accepted: number
  readonly stale: number
  readonly duplicate: number
}

/** What the ingest listener pushes into: each push all-or-nothing, answered once durable. */
export interface Ingest {
  pushQuotes(quotes: readonly PushedQuote[]): Promise<PushOutcome>
  pushBars(rows: readonly PushedBar[]): Promise<PushOutcome>
  pushDepth(rows: readonly MarketDepth[]): Promise<PushOutcome>
}

/** A push's outcome with the events it published (in the order they happened), once durable. */
export interface Pushed {
  readonly outcome: PushOutcome
  readonly events: readonly LiveEvent[]
}

/** Where pushes are written: each answered with what it did and the events to publish. */
export interface IngestWrites {
  writeQuotes(quotes: readonly PushedQuote[]): Promise<Pushed>
  writeBars(rows: readonly PushedBar[]): Promise<Pushed>
  writeDepth(rows: readonly MarketDepth[]): Promise<Pushed>
}

/** The Ingest of `writes`: each push's events published to `feed` once durable, in the order pushes were answered. */
export function publishingIngest(writes: IngestWrites, feed: Pick<LiveFeed, 'publish'>): Ingest {
  const published = ({ outcome, events }: Pushed): PushOutcome => {
    feed.publish(events)
    return outcome
  }
  return {
    pushQuotes: (quotes) => writes.writeQuotes(quotes).then(published),
    pushBars: (rows) => writes.writeBars(rows).then(published),
    pushDepth: (rows) => writes.writeDepth(rows).then(published),
  }
}

/** Counters the server exports (Prometheus). */
export interface IngestCounters {
  readonly rows: (kind: 'quotes' | 'bars' | 'depth', n: number) => void
  readonly ignored: (reason: 'stale' | 'duplicate', n: number) => void
}

/** `ingest` with what each push did counted into `counters`. */
export function countedIngest(ingest: Ingest, counters: IngestCounters): Ingest {
  const counted =
    (kind: 'quotes' | 'bars' | 'depth') =>
    async (outcome: Promise<PushOutcome>): Promise<PushOutcome> => {
      const o = await outcome
      counters.rows(kind, o.rows)
      if (o.stale) counters.ignored('stale', o.stale)
      if (o.duplicate) counters.ignored('duplicate', o.duplicate)
      return o
    }
  return {
    pushQuotes: (quotes) => counted('quotes')(ingest.pushQuotes(quotes)),
    pushBars: (rows) => counted('bars')(ingest.pushBars(rows)),
    pushDepth: (rows) => counted('depth')(ingest.pushDepth(rows)),
  }
}

/** What quote pushes built: each push's outcome and events, each symbol's builder state after them, and what the write of them puts. */
interface Built extends Writes {
  readonly pushed: Pushed[]
  readonly states: Map<string, SymbolState | undefined>
}

/** A quote push waiting for the next write, with its answer. */
interface WaitingQuotes {
  readonly quotes: readonly PushedQuote[]
  readonly resolve: (pushed: Pushed) => void
  readonly reject: (err: unknown) => void
}

/** Log mode with `writeEveryMs`: once no quote push has come for this long, what is held is written at once. */
const PAUSE_MS = 20

/**
 * Pushed batches written to a store, one write at a time and in the order they came. Quote pushes
 * that arrive while a write waits on the store (a server's round trips) are written together in the
 * next one (group commit: one transaction, one commit for all of them), each still answered with its
 * own outcome and events; a write that never waits (SQLite's, on a thread of its own) takes the
 * pushes one by one, so the main thread parses the next while it runs. A bars or depth push closes
 * the group before it, so nothing overtakes it. A group that fails is written again one push at a
 * time, so a push fails only for its own sake (unless the store itself is away: then the whole group
 * fails at once).
 *
 * With an ingest log (`ingestLog`: a store whose every write costs the server parts, ClickHouse), a
 * group of quote pushes is answered once it is logged (one append); what it built is written behind
 * as soon as the write before ends (or, with `writeEveryMs`, at most that often while pushes keep
 * coming), together with whatever else was logged meanwhile: fewer and larger writes, seen by readers
 * a write later. Before its first push it replays what earlier
 * feeds logged and never wrote (a process killed, or an instance whose feed this one takes over).
 */
export class LiveIngest implements IngestWrites {
  /** Builder states by symbol: loaded from the store on a symbol's first push, then kept in step with each commit. */
  readonly #states = new Map<string, SymbolState | undefined>()
  /** Instrument names (null: none) of the symbols known to have an instrument row: a pushed quote's name. */
  readonly #names = new Map<string, string | null>()
  /** The latest depth timestamp per symbol (-Infinity: none), loaded from the store on a symbol's first push: older depth is not kept. */
  readonly #depthAt = new Map<string, number>()
  /** One write at a time: the store takes one write at a time, and states advance in commit order. */
  #queue: Promise<unknown> = Promise.resolve()
  /** The group of quote pushes that later quote pushes may still join (a write of it is queued), if any. */
  #open: WaitingQuotes[] | undefined
  /** The data version after this ingest's last commit: when it has moved, another writer may have moved states on. */
  #ownVersion: string | undefined
  /** Quote pushes under way when the last write ended (its own and those waiting): how many pushers there are. */
  #pushers = 1
  /** Called when a push joins the group being gathered (#gather). */
  #joined: (() => void) | undefined
  /** Log mode: this ingest's feed in the log (random), and its last entry's place. */
  readonly #feed = BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()).toString()
  #seq = 0
  /** Log mode: what logged pushes built, written behind. */
  readonly #behind: WriteBehind | undefined
  #recovered = false
  /** Quote pushes taken so far: a pause is a PAUSE_MS with none. */
  #pushes = 0

  /**
   * `gatherMs`: how long a group waits for the pushers the write before it answered (each sends its
   * next push within a few ms) before it is written without them; 0 (default): not at all. One write
   * of all of them costs a server's round trips and parts once rather than twice. `ingestLog`: answer
   * quote pushes once logged there and write behind (above). `writeEveryMs` (log mode): a write behind
   * begins at most this often while pushes keep coming, at once when they pause (PAUSE_MS): a fast
   * feed's pushes then share writes (each symbol's forming minute, day bar and latest quote written
   * once for many of its quotes, and fewer parts on a server), readable up to that much later; 0
   * (default): as soon as the write before ends.
   */
  constructor(
    private readonly store: MarketStore,
    private readonly options: {
      readonly gatherMs?: number
      readonly ingestLog?: IngestLog
      readonly writeEveryMs?: number
    } = {},
  ) {
    const log = options.ingestLog
    this.#behind =
      log &&
      new WriteBehind(log, (w) => this.#write(w.latest.keys(), (writer) => writer.putLive(w)), options.writeEveryMs)
    // What a push answered once logged is readable here at once, before its write.
    if (this.#behind) store.showUnwritten?.(this.#behind)
  }

  /** Log mode: symbols whose logged pushes wait to be written (0 otherwise). */
  get unwrittenSymbols(): number {
    return this.#behind?.unwrittenSymbols ?? 0
  }

  /** Log mode: `listener` hears of each failed write behind (it is tried again later). */
  onWriteFailed(listener: (err: unknown) => void): void {
    this.#behind?.onFailed(listener)
  }

  #serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task)
    this.#queue = run.catch(() => undefined)
    return run
  }

  /** Writes `fill` in one transaction with instruments for symbols the store does not know yet; rolls back on any failure. */
  async #write(symbols: Iterable<string>, fill: (w: StoreWriter) => Promise<void>): Promise<void> {
    const bare = (await this.#unlisted(symbols)).map((s) => bareInstrument(s))
    const w = await this.store.beginWrite({ more: true })
    try {
      if (bare.length) await w.putInstruments(bare)
      await fill(w)
      await w.commit()
    } catch (err) {
      await w.rollback().catch(() => undefined)
      throw err
    }
    for (const i of bare) this.#names.set(i.symbol, i.name)
    // Unknown after a failed read: the next push then reloads what it needs (the write stands).
    this.#ownVersion = await this.store.dataVersion().catch(() => undefined)
  }

  /** Which of `symbols` have no instrument row; the names of those that have one are read once and kept. */
  async #unlisted(symbols: Iterable<string>): Promise<string[]> {
    const unknown = [...new Set(symbols)].filter((s) => !this.#names.has(s))
    if (unknown.length === 0) return []
    for (const i of await this.store.readInstruments(unknown)) this.#names.set(i.symbol, i.name)
    return unknown.filter((s) => !this.#names.has(s))
  }

  /**
   * Forgets what was read from the store (builder states, instrument names) unless nothing but this
   * ingest has written since: another instance (after a failover) or an import may have changed them.
   */
  async #forgetIfMoved(): Promise<void> {
    if ((await this.store.dataVersion()) === this.#ownVersion) return
    this.#states.clear()
    this.#names.clear()
    this.#depthAt.clear()
  }

  /** The states of `symbols` as the store has them. */
  async #loadStates(symbols: readonly string[]): Promise<void> {
    const missing = [...new Set(symbols)].filter((s) => !this.#states.has(s))
    if (missing.length === 0) return
    const stored = await this.store.readLiveQuotes(missing)
    for (const s of missing) this.#states.set(s, stored.get(s)?.state)
  }

  /**
   * Quotes in the order given: each through its symbol's builder (an older or repeated one is
   * counted and changes nothing); the minute bars and day bars they made, and each symbol's latest
   * quote with its builder state, in one write with the other pushes waiting for it.
   */
  writeQuotes(quotes: readonly PushedQuote[]): Promise<Pushed> {
    return new Promise((resolve, reject) => {
      if (!this.#open) {
        const group: WaitingQuotes[] = []
        this.#open = group
        void this.#serial(() => this.#commitGroup(group))
      }
      this.#open.push({ quotes, resolve, reject })
      this.#pushes++
      this.#joined?.()
    })
  }

  /** No later quote push joins the open group (one being gathered is written as it is). */
  #closeGroup(): void {
    this.#open = undefined
    this.#joined?.()
  }

  /** Until `group` holds as many pushes as were under way when the last write ended, is closed, or gatherMs has passed. */
  #gather(group: WaitingQuotes[]): Promise<void> {
    const gatherMs = this.options.gatherMs ?? 0
    const wanted = this.#pushers
    if (gatherMs <= 0 || group.length >= wanted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.#joined = undefined
        resolve()
      }
      const timer = setTimeout(done, gatherMs)
      this.#joined = () => {
        if (group.length >= wanted || this.#open !== group) done()
      }
    })
  }

  async #commitGroup(group: WaitingQuotes[]): Promise<void> {
    await this.#gather(group)
    if (this.#open === group) this.#open = undefined
    try {
      const pushed = await this.#commitQuotes(group.map((g) => g.quotes))
      this.#pushers = group.length + (this.#open?.length ?? 0)
      group.forEach((g, i) => g.resolve(pushed[i]))
      if (this.#behind && this.options.writeEveryMs && !this.#open) this.#flushOnPause(this.#behind)
    } catch (err) {
      const storeAway = err instanceof MdqError && err.code === 'STORE_UNAVAILABLE'
      if (group.length === 1 || storeAway) return group.forEach((g) => g.reject(err))
      for (const g of group)
        await this.#commitQuotes([g.quotes]).then(
          ([pushed]) => g.resolve(pushed),
          (e: unknown) => g.reject(e),
        )
    }
  }

  /** Log mode, with no push waiting: unless another comes within PAUSE_MS, what is held is written at once rather than at its time. */
  #flushOnPause(behind: WriteBehind): void {
    const taken = this.#pushes
    setTimeout(() => {
      if (this.#pushes === taken) behind.flush()
    }, PAUSE_MS).unref()
  }

  /** The pushes `batches`, in order, in one write (or one append to the log); the states move on once it is done. */
  async #commitQuotes(batches: readonly (readonly PushedQuote[])[]): Promise<Pushed[]> {
    const behind = this.#behind
    if (behind) await this.#recover(behind)
    const built = await this.#build(batches)
    if (built.latest.size > 0) {
      if (behind) await this.#logBuilt(behind, batches, built)
      else await this.#write(built.latest.keys(), (w) => w.putLive(built))
    }
    this.#advance(built.states)
    return built.pushed
  }

  /**
   * Quotes in the order given: each through its symbol's builder (an older or repeated one is
   * counted and changes nothing); the minute bars and day bars they made, and each symbol's latest
   * quote with its builder state.
   */
  async #build(batches: readonly (readonly PushedQuote[])[]): Promise<Built> {
    const symbols = batches.flatMap((quotes) => quotes.map((q) => q.snapshot.symbol))
    // Written behind, the store lags this ingest's own states: they are kept (one feed, one instance).
    if (!this.#behind) await this.#forgetIfMoved()
    await this.#loadStates(symbols)
    await this.#unlisted(symbols) // the names the quotes go out with
    const states = new Map<string, SymbolState | undefined>()
    const minutes = new Map<string, Map<number, BarRow>>()
    const days = new Map<string, BarRow>()
    const latest = new Map<string, LiveQuote>()
    const pushed = batches.map((quotes) => {
      const events: LiveEvent[] = []
      const counts = { accepted: 0, stale: 0, duplicate: 0 }
      for (const quote of quotes) {
        const { symbol } = quote.snapshot
        const before = states.has(symbol) ? states.get(symbol) : this.#states.get(symbol)
        const r = applySnapshot(before, quote.snapshot, MARKETS[parseSymbol(symbol).exchange])
        counts[r.outcome]++
        if (r.outcome !== 'accepted') continue
        states.set(symbol, r.state)
        latest.set(symbol, { symbol, state: r.state!, ...(quote.ext && { ext: quote.ext }) })
        // Named as the instrument is after this write (a symbol without a row gets a bare one).
        events.push({ kind: 'quote', quote, name: this.#names.get(symbol) ?? null })
        for (const bar of [r.closed, r.minute]) {
          if (!bar) continue
          const held = minutes.get(symbol) ?? new Map<number, BarRow>()
          held.set(bar.timestamp, bar)
          minutes.set(symbol, held)
        }
        if (r.day) days.set(symbol, r.day)
      }
      return { outcome: { rows: quotes.length, ...counts }, events }
    })
    return { pushed, states, minutes, days, latest }
  }

  #advance(states: ReadonlyMap<string, SymbolState | undefined>): void {
    for (const [symbol, state] of states) this.#states.set(symbol, state)
  }

  /** Log mode: the pushes appended (with the marks of writes since the last append), and what they built left to write behind. */
  async #logBuilt(behind: WriteBehind, batches: readonly (readonly PushedQuote[])[], built: Built): Promise<void> {
    const entries: LogEntry[] = batches.map((quotes) => ({
      feed: this.#feed,
      seq: ++this.#seq,
      body: entryBody(quotes),
    }))
    const marks = behind.takeMarks()
    await behind.log.append(entries, marks).catch((err: unknown) => {
      behind.putBackMarks(marks)
      throw err
    })
    behind.add(built, [[this.#feed, this.#seq]])
  }

  /**
   * Log mode, once, before this ingest's first push: replays what the log holds above each feed's
   * mark (pushes answered by an ingest that died before writing them), through the builders from the
   * stored states, and writes it behind. Entries already written change nothing again.
   */
  async #recover(behind: WriteBehind): Promise<void> {
    if (this.#recovered) return
    const entries = await behind.log.unwritten()
    if (entries.length) {
      const built = await this.#build(entries.map((e) => quotesOfEntry(e.body)))
      this.#advance(built.states)
      const covers = new Map<string, number>()
      for (const e of entries) covers.set(e.feed, Math.max(e.seq, covers.get(e.feed) ?? 0))
      behind.add(built, covers)
    }
    this.#recovered = true
  }

  /** Log mode: replays what earlier feeds left unwritten now rather than at the first push (a listener starting). */
  recover(): Promise<void> {
    const behind = this.#behind
    return behind ? this.#serial(() => this.#recover(behind)) : Promise.resolve()
  }

  /** Once every push taken is written (log mode: not only logged); throws if a write of them fails. */
  async settled(): Promise<void> {
    await this.#queue
    await this.#behind?.drain()
  }

  /** Bars as an import writes them: per symbol and period ascending, a later row winning over an earlier one at the same time. */
  writeBars(rows: readonly PushedBar[]): Promise<Pushed> {
    this.#closeGroup() // later quotes wait behind these bars
    return this.#serial(async () => {
      await this.#behind?.drain() // quotes logged before go in first
      await this.#forgetIfMoved()
      const series = new Map<string, { symbol: string; period: StoredPeriod; bars: Bars }>()
      for (const row of rows) {
        const key = `${row.symbol}\0${row.period}`
        const held = series.get(key)
        series.set(key, { ...row, bars: held ? mergeBars(held.bars, row.bars) : row.bars })
      }
      await this.#write(
        rows.map((r) => r.symbol),
        async (w) => {
          for (const { symbol, period, bars } of series.values()) await w.putBars(symbol, period, bars)
        },
      )
      return { outcome: { rows: rows.length, accepted: rows.length, stale: 0, duplicate: 0 }, events: [] }
    })
  }

  /** Each symbol's newest depth of the batch, unless the store holds a newer one. */
  writeDepth(rows: readonly MarketDepth[]): Promise<Pushed> {
    this.#closeGroup() // later quotes wait behind this depth
    return this.#serial(async () => {
      await this.#behind?.drain() // quotes logged before go in first
      await this.#forgetIfMoved()
      const unseen = [...new Set(rows.map((d) => d.symbol))].filter((s) => !this.#depthAt.has(s))
      if (unseen.length > 0) {
        const stored = await this.store.readDepths(unseen)
        for (const s of unseen) this.#depthAt.set(s, stored.get(s)?.timestamp ?? -Infinity)
      }
      const newest = new Map<string, MarketDepth>()
      let stale = 0
      for (const d of rows) {
        const held = newest.get(d.symbol)?.timestamp ?? this.#depthAt.get(d.symbol)!
        if (d.timestamp < held) stale++
        else newest.set(d.symbol, d)
      }
      if (newest.size > 0) await this.#write([], async (w) => w.putDepth([...newest.values()]))
      for (const d of newest.values()) this.#depthAt.set(d.symbol, d.timestamp)
      const events: LiveEvent[] = [...newest.values()].map((depth) => ({ kind: 'depth', depth }))
      return { outcome: { rows: rows.length, accepted: rows.length - stale, stale, duplicate: 0 }, events }
    })
  }

  /** One step of the store's upkeep of appends (MarketStore.foldAppends), between writes. */
  foldStep(): Promise<boolean> {
    return this.#serial(async () => (await this.store.foldAppends?.()) ?? false)
  }
}
