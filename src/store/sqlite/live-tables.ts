/** @module Live data beside the bars: the latest pushed quote and depth per symbol, and per-symbol versions (FORMAT.md "Live data", "Versions"). */
import type { Db } from './sqlite-db.js'

/** The background fold moves the oldest live commits into the symbols' marks once the log holds this many. */
export const LIVE_COMMITS_FOLD = 256
/** A commit that finds the log this long (nothing folding it: no server running) folds it itself. */
export const LIVE_COMMITS_MAX = 4 * LIVE_COMMITS_FOLD

export function liveStatements(db: Db) {
  return {
    /** Bytes (liveQuoteBytes), or JSON text in rows written before migration 10. */
    liveQuote: db.prepare<[string], Buffer | string>('SELECT quote FROM live_quotes WHERE symbol = ?').pluck(),
    putLiveQuote: db.prepare<[string, number, Buffer]>(
      'INSERT OR REPLACE INTO live_quotes (symbol, ts, quote) VALUES (?, ?, ?)',
    ),
    depth: db.prepare<[string], string>('SELECT depth FROM live_depth WHERE symbol = ?').pluck(),
    putDepth: db.prepare<[string, number, string]>(
      'INSERT OR REPLACE INTO live_depth (symbol, ts, depth) VALUES (?, ?, ?)',
    ),
    liveSymbolsSince: db
      .prepare<[number], [string, number]>('SELECT symbol, seq FROM live_symbols WHERE seq > ?')
      .raw(),
    markLiveSymbol: db.prepare<[string, number]>('INSERT OR REPLACE INTO live_symbols (symbol, seq) VALUES (?, ?)'),
    liveCommitsSince: db
      .prepare<[number], [number, string]>('SELECT seq, symbols FROM live_commits WHERE seq > ? ORDER BY seq')
      .raw(),
    oldestLiveCommits: db
      .prepare<[number], [number, string]>('SELECT seq, symbols FROM live_commits ORDER BY seq LIMIT ?')
      .raw(),
    firstLiveCommit: db.prepare<[], number | null>('SELECT min(seq) FROM live_commits').pluck(),
    liveCommitCount: db.prepare<[], number>('SELECT count(*) FROM live_commits').pluck(),
    putLiveCommit: db.prepare<[number, string]>('INSERT INTO live_commits (seq, symbols) VALUES (?, ?)'),
    deleteLiveCommits: db.prepare<[number]>('DELETE FROM live_commits WHERE seq <= ?'),
    bumpLiveSeq: db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'live_seq'"),
  }
}
export type LiveStatements = ReturnType<typeof liveStatements>

/** A live commit's symbols as its row keeps them (canonical symbols hold no line break). */
const SEPARATOR = '\n'

/** In a write transaction at commit: the symbols whose bars it appended to, as live commit `seq`. */
export function logLiveCommit(st: LiveStatements, seq: number, symbols: Iterable<string>): void {
  st.putLiveCommit.run(seq, [...symbols].join(SEPARATOR))
  const first = st.firstLiveCommit.get()
  if (first != null && seq - first >= LIVE_COMMITS_MAX) foldLiveCommits(st, LIVE_COMMITS_MAX)
}

/**
 * In a write transaction: the oldest `count` live commits moved into `live_symbols` (each symbol's
 * last mark among them; one row written a symbol, not one a commit). No symbol's sequence changes.
 * Returns how many commits moved.
 */
export function foldLiveCommits(st: LiveStatements, count: number): number {
  const commits = st.oldestLiveCommits.all(count)
  if (commits.length === 0) return 0
  const marks = new Map<string, number>()
  for (const [seq, symbols] of commits) for (const symbol of symbols.split(SEPARATOR)) marks.set(symbol, seq)
  for (const [symbol, seq] of marks) st.markLiveSymbol.run(symbol, seq)
  st.deleteLiveCommits.run(commits[commits.length - 1][0])
  return commits.length
}

/** Once the log holds LIVE_COMMITS_FOLD commits, the oldest of them folded (foldLiveCommits); the commits moved. */
export function foldLiveCommitsStep(st: LiveStatements): number {
  return st.liveCommitCount.get()! >= LIVE_COMMITS_FOLD ? foldLiveCommits(st, LIVE_COMMITS_FOLD) : 0
}

/**
 * The live marks above `since` as the file holds them: each logged commit's symbols, then the marks
 * folded from the log. Read in that order, a fold that commits between the two reads shows its
 * commits twice rather than not at all.
 */
export function* liveMarksSince(st: LiveStatements, since: number): Generator<readonly [string, number]> {
  for (const [seq, symbols] of st.liveCommitsSince.all(since))
    for (const symbol of symbols.split(SEPARATOR)) yield [symbol, seq]
  yield* st.liveSymbolsSince.all(since)
}

/**
 * The live sequence each symbol's bars last changed at, as far as this connection has read: a live
 * commit numbers itself `live_seq` and logs its symbols under it, so a reader catches up on only the
 * symbols changed since it last looked. The sequence before the last is kept too, so that versions
 * read at an earlier sequence still answer as they did (`at`).
 */
export class LiveSymbolSeqs {
  /** Per symbol: the last sequence and the one before it. */
  readonly #seqs = new Map<string, [number, number]>()
  #seen = 0

  get seen(): number {
    return this.#seen
  }

  /**
   * Reads the symbols marked after the last seen sequence (`marked`: the marks above a sequence as
   * the file has them now, a symbol's maybe more than once: its highest counts), up to `liveSeq`
   * (the data version's sequence, read before).
   */
  catchUp(marked: (since: number) => Iterable<readonly [string, number]>, liveSeq: number): void {
    if (liveSeq === this.#seen) return
    // A sequence that went back is another store file at the same path: start over.
    if (liveSeq < this.#seen) {
      this.#seqs.clear()
      this.#seen = 0
    }
    const last = new Map<string, number>()
    for (const [symbol, seq] of marked(this.#seen)) if (!(seq <= (last.get(symbol) ?? 0))) last.set(symbol, seq)
    for (const [symbol, seq] of last) {
      const held = this.#seqs.get(symbol)
      if (held !== undefined && seq <= held[0]) continue
      // A mark past `liveSeq` (a commit after the version was read) may have replaced one at or below
      // it: what the symbol had then is not known, so versions of then miss.
      this.#seqs.set(symbol, [seq, seq > liveSeq ? Infinity : (held?.[0] ?? 0)])
    }
    this.#seen = liveSeq
  }

  /** The symbol's sequence as of sequence `seen` (0: never appended to); undefined when it moved twice since, or is not known. */
  at(symbol: string, seen: number): number | undefined {
    const held = this.#seqs.get(symbol)
    if (held === undefined) return 0
    if (held[0] <= seen) return held[0]
    return held[1] <= seen ? held[1] : undefined
  }
}
