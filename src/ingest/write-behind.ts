/**
 * @module Writing behind a logged ingest (LiveIngest `ingestLog`): what logged quote pushes built,
 * held and merged until the next write takes all of it (one write at a time, the next as soon as the
 * one before ends, or at most one every `everyMs` while pushes keep coming), a failed write put back
 * and tried again later, and the log entries each written one covered, to be marked in the log.
 */
import type { BarRow } from '../domain/bars.js'
import type { StoredPeriod } from '../domain/period.js'
import type { IngestLog, LiveQuote, LogMark, UnwrittenLive } from '../store/market-store.js'

/** What a write puts: per symbol its minute bars by timestamp, its day's bar and its latest quote. */
export interface Writes {
  readonly minutes: Map<string, Map<number, BarRow>>
  readonly days: Map<string, BarRow>
  readonly latest: Map<string, LiveQuote>
}

/** Writes not yet written, and per feed the newest log entry they cover. */
interface Held extends Writes {
  readonly covers: Map<string, number>
}

const held = (): Held => ({ minutes: new Map(), days: new Map(), latest: new Map(), covers: new Map() })

/** Raises `into`'s value at `key` to `seq` (per feed, the newest entry or mark). */
export const atLeast = (into: Map<string, number>, key: string, seq: number) =>
  into.set(key, Math.max(seq, into.get(key) ?? 0))

/** Merges `newer` over `into`. */
function mergeOver(into: Writes, newer: Writes): void {
  for (const [symbol, bars] of newer.minutes) {
    const older = into.minutes.get(symbol)
    if (older) for (const [ts, bar] of bars) older.set(ts, bar)
    else into.minutes.set(symbol, bars)
  }
  for (const [k, v] of newer.days) into.days.set(k, v)
  for (const [k, v] of newer.latest) into.latest.set(k, v)
}

/** Merges `older` under `into` (what `into` holds wins). */
function mergeUnder(into: Held, older: Held): void {
  for (const [symbol, bars] of older.minutes) {
    const newer = into.minutes.get(symbol)
    into.minutes.set(symbol, newer ? new Map([...bars, ...newer]) : bars)
  }
  for (const [k, v] of older.days) if (!into.days.has(k)) into.days.set(k, v)
  for (const [k, v] of older.latest) if (!into.latest.has(k)) into.latest.set(k, v)
  for (const [k, v] of older.covers) atLeast(into.covers, k, v)
}

/** How long the revisions of a write's symbols outlive it (longer than any read takes its versions for). */
const WRITTEN_REVISIONS_MS = 1000

/** After a failed write, the next try waits this long, doubling to the most. */
const RETRY_MS = 100
const RETRY_MOST_MS = 5_000

export class WriteBehind implements UnwrittenLive {
  #held = held()
  /** The writes of the write under way: reads show them until the store does (its commit). */
  #taken: Held | undefined
  /** Per symbol held or being written, the revision of its last change. */
  readonly #revisions = new Map<string, number>()
  #revision = 0
  /**
   * The revisions of the last write's symbols, kept for a while after it (WRITTEN_REVISIONS_MS): a
   * reader that took the store's state before that write still finds the version it read the data at.
   */
  #written = new Map<string, number>()
  #forget: NodeJS.Timeout | undefined
  /** The write of what was held under way, if any. */
  #writing: Promise<void> | undefined
  /** When the last write began (performance.now()), and the timer of the next one. */
  #lastStart = -Infinity
  #next: NodeJS.Timeout | undefined
  /** What is held goes in as soon as the write under way (if any) ends, not at its time (flush). */
  #urgent = false
  #retry: NodeJS.Timeout | undefined
  #retryMs = RETRY_MS
  /** Per feed the newest entry written, not yet marked in the log. */
  readonly #marks = new Map<string, number>()
  #failed: ((err: unknown) => void) | undefined
  /** Symbols in the write under way. */
  #inWrite = 0

  constructor(
    /** The log the writes' entries are in: marks go there. */
    readonly log: IngestLog,
    /** One store write of `writes`, all or nothing. */
    private readonly write: (writes: Writes) => Promise<void>,
    /**
     * A write begins at least this long after the one before began, unless flushed (the pushes
     * paused): a fast feed's pushes then share writes (each symbol's forming minute written once for
     * many of its quotes). 0: as soon as the one before ends.
     */
    private readonly everyMs = 0,
  ) {}

  /** `listener` hears of each failed write (it is tried again later). */
  onFailed(listener: (err: unknown) => void): void {
    this.#failed = listener
  }

  /**
   * Holds `writes` (newer than what is held) for the next write, which marks `covers` (per feed the
   * newest entry they came from) once it is in. Entries that built nothing are marked at once when
   * nothing older is held or being written (else with the next write: a mark covers all below it).
   */
  add(writes: Writes, covers: Iterable<readonly [feed: string, seq: number]>): void {
    const idle = this.#writing === undefined && this.#held.latest.size === 0
    if (writes.latest.size === 0 && idle) {
      for (const [feed, seq] of covers) atLeast(this.#marks, feed, seq)
      return
    }
    mergeOver(this.#held, writes)
    for (const symbol of writes.latest.keys()) this.#revisions.set(symbol, ++this.#revision)
    for (const [feed, seq] of covers) atLeast(this.#held.covers, feed, seq)
    this.#schedule()
  }

  bars(symbol: string, period: StoredPeriod): readonly BarRow[] {
    if (period === '1d') {
      const day = this.#held.days.get(symbol) ?? this.#taken?.days.get(symbol)
      return day ? [day] : []
    }
    const writing = this.#taken?.minutes.get(symbol)
    const held = this.#held.minutes.get(symbol)
    if (!writing && !held) return []
    const minutes = new Map(writing)
    for (const [ts, bar] of held ?? []) minutes.set(ts, bar)
    return [...minutes.values()].sort((a, b) => a.timestamp - b.timestamp)
  }

  quote(symbol: string): LiveQuote | undefined {
    return this.#held.latest.get(symbol) ?? this.#taken?.latest.get(symbol)
  }

  revision(symbol: string): number | undefined {
    return this.#revisions.get(symbol) ?? this.#written.get(symbol)
  }

  get revisionAll(): number | undefined {
    return this.#revisions.size > 0 || this.#written.size > 0 ? this.#revision : undefined
  }

  /** What is held goes in at once, or as soon as the write under way ends (the pushes paused). */
  flush(): void {
    if (this.#held.latest.size === 0) return
    this.#urgent = true
    this.#schedule()
  }

  /** The next write, at its time (everyMs after the last began) or at once if urgent; none while one runs or a retry waits. */
  #schedule(): void {
    if (this.#writing || this.#retry || this.#held.latest.size === 0) return
    const wait = this.#urgent ? 0 : this.#lastStart + this.everyMs - performance.now()
    if (wait > 0) {
      this.#next ??= setTimeout(() => {
        this.#next = undefined
        this.#schedule()
      }, wait).unref()
      return
    }
    clearTimeout(this.#next)
    this.#next = undefined
    void this.#run().catch(() => undefined)
  }

  /** The symbols of `taken`, just written, leave the unwritten (their revisions kept a while). */
  #wasWritten(taken: Held): void {
    const written = new Map<string, number>()
    for (const symbol of taken.latest.keys()) {
      if (this.#held.latest.has(symbol)) continue
      written.set(symbol, this.#revisions.get(symbol)!)
      this.#revisions.delete(symbol)
    }
    this.#written = written
    clearTimeout(this.#forget)
    this.#forget = setTimeout(() => (this.#written = new Map()), WRITTEN_REVISIONS_MS).unref()
  }

  /** The marks to append with the next entries (put them back if the append fails). */
  takeMarks(): LogMark[] {
    const marks = [...this.#marks].map(([feed, seq]) => ({ feed, seq }))
    this.#marks.clear()
    return marks
  }

  putBackMarks(marks: readonly LogMark[]): void {
    for (const m of marks) atLeast(this.#marks, m.feed, m.seq)
  }

  /** Symbols whose writes are held or being written. */
  get unwrittenSymbols(): number {
    return this.#held.latest.size + this.#inWrite
  }

  /** Until everything held is written; throws if a write of it fails. */
  async drain(): Promise<void> {
    while (this.#writing || this.#held.latest.size > 0) {
      this.#urgent = true
      await this.#run()
    }
  }

  /** One write of what is held (the next is scheduled when it ends); a failed write is put back and tried again later (and rejects). */
  #run(): Promise<void> {
    this.#writing ??= this.#writeHeld().finally(() => {
      this.#writing = undefined
      this.#schedule()
    })
    return this.#writing
  }

  async #writeHeld(): Promise<void> {
    if (this.#held.latest.size > 0) {
      const taken = this.#held
      this.#held = held()
      this.#taken = taken
      this.#inWrite = taken.latest.size
      this.#urgent = false
      this.#lastStart = performance.now()
      try {
        await this.write(taken)
      } catch (err) {
        this.#inWrite = 0
        this.#taken = undefined
        mergeUnder(this.#held, taken)
        this.#failed?.(err)
        this.#retry ??= setTimeout(() => {
          this.#retry = undefined
          void this.#run().catch(() => undefined)
        }, this.#retryMs).unref()
        this.#retryMs = Math.min(2 * this.#retryMs, RETRY_MOST_MS)
        throw err
      }
      this.#inWrite = 0
      // Written: reads now find them in the store (the commit reloaded its state before returning).
      this.#taken = undefined
      this.#wasWritten(taken)
      this.#retryMs = RETRY_MS
      for (const [feed, seq] of taken.covers) atLeast(this.#marks, feed, seq)
      if (this.#held.latest.size > 0) return
    }
    // Idle: the marks go in now rather than with the next entries (if this fails, they go with them).
    const marks = this.takeMarks()
    if (marks.length) await this.log.append([], marks).catch(() => this.putBackMarks(marks))
  }
}
