/** @module Live data beside the bars: the latest pushed quote and depth per symbol, and per-symbol versions (FORMAT.md "Live data"). */
import type { Db } from './sqlite-db.js'

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

  /**
   * Reads the symbols marked after the last seen sequence (`marked`: each symbol's mark above a
   * sequence, as the file has them now), up to `liveSeq` (the data version's sequence, read before).
   */
  catchUp(marked: (since: number) => Iterable<readonly [string, number]>, liveSeq: number): void {
    if (liveSeq === this.#seen) return
    // A sequence that went back is another store file at the same path: start over.
    if (liveSeq < this.#seen) {
      this.#seqs.clear()
      this.#seen = 0
    }
    for (const [symbol, seq] of marked(this.#seen)) {
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
