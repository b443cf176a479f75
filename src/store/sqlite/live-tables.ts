/** @module Live data beside the bars: the latest pushed quote and depth per symbol, and per-symbol versions (FORMAT.md "Live data"). */
import type { Db } from './sqlite-db.js'

export function liveStatements(db: Db) {
  return {
    liveQuote: db.prepare<[string], string>('SELECT quote FROM live_quotes WHERE symbol = ?').pluck(),
    putLiveQuote: db.prepare<[string, number, string]>(
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
    bumpLiveSeq: db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'live_seq'"),
  }
}
export type LiveStatements = ReturnType<typeof liveStatements>

/**
 * The live sequence each symbol's bars last changed at, as far as this connection has read: a live
 * commit numbers itself `live_seq` and marks its symbols with it, so a reader catches up on only the
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

  /** Reads the symbols marked after the last seen sequence, up to `liveSeq` (the meta value just read). */
  catchUp(st: LiveStatements, liveSeq: number): void {
    if (liveSeq === this.#seen) return
    // A sequence that went back is another store file at the same path: start over.
    if (liveSeq < this.#seen) {
      this.#seqs.clear()
      this.#seen = 0
    }
    for (const [symbol, seq] of st.liveSymbolsSince.all(this.#seen)) {
      const held = this.#seqs.get(symbol)
      if (held === undefined) this.#seqs.set(symbol, [seq, 0])
      else if (seq > held[0]) this.#seqs.set(symbol, [seq, held[0]])
    }
    this.#seen = liveSeq
  }

  /** The symbol's sequence as of sequence `seen` (0: never appended to); undefined when it moved twice since. */
  at(symbol: string, seen: number): number | undefined {
    const held = this.#seqs.get(symbol)
    if (held === undefined) return 0
    if (held[0] <= seen) return held[0]
    return held[1] <= seen ? held[1] : undefined
  }
}
