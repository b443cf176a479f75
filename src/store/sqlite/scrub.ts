/** @module Integrity of a SQLite store: chunk checksums verified a slice per check, damage remembered. */
import type Database from 'better-sqlite3'
import { ChunkCorruptError, chunkLength, verifyChunk } from '../chunk-codec.js'

interface ChunkKey {
  symbol: string
  period: string
  start_ms: number
}

/** Bytes of chunk BLOBs verified per check(): a few ms, so /readyz stays cheap on a large store. */
const BUDGET_BYTES = 8 << 20

/**
 * Walks the chunks table in key order across calls, verifying each BLOB's checksum; a full pass is
 * spread over as many checks as the store needs (one for a store below 8 MB), then starts again.
 * Also verifies that each row's `count` is the BLOB's own (the planner trusts it).
 */
export class ChunkScrubber {
  #after: ChunkKey | undefined
  readonly #first
  readonly #next
  constructor(db: Database.Database) {
    const cols = 'symbol, period, start_ms, count, data'
    this.#first = db.prepare<[], ChunkKey & { count: number; data: Uint8Array }>(
      `SELECT ${cols} FROM chunks ORDER BY symbol, period, start_ms`,
    )
    this.#next = db.prepare<[string, string, number], ChunkKey & { count: number; data: Uint8Array }>(
      `SELECT ${cols} FROM chunks WHERE (symbol, period, start_ms) > (?, ?, ?) ORDER BY symbol, period, start_ms`,
    )
  }

  /** Throws (ChunkCorruptError, or SQLite's own SQLITE_CORRUPT) at the first damaged chunk of this slice. */
  step(): void {
    const a = this.#after
    const rows = a ? this.#next.iterate(a.symbol, a.period, a.start_ms) : this.#first.iterate()
    let bytes = 0
    let last: ChunkKey | undefined
    for (const row of rows) {
      try {
        verifyChunk(row.data)
      } catch (err) {
        if (err instanceof ChunkCorruptError)
          throw new ChunkCorruptError(`chunk ${row.symbol} ${row.period} ${row.start_ms}: ${err.message}`)
        throw err
      }
      checkCount(row.data, row.count, row)
      last = { symbol: row.symbol, period: row.period, start_ms: row.start_ms }
      bytes += row.data.length
      if (bytes >= BUDGET_BYTES) {
        this.#after = last // leaving the loop closes the statement's cursor
        return
      }
    }
    this.#after = undefined // a whole pass done: the next check starts over
  }
}

function checkCount(blob: Uint8Array, count: number, key: ChunkKey): void {
  const n = chunkLength(blob)
  if (n !== count)
    throw new ChunkCorruptError(
      `chunk ${key.symbol} ${key.period} ${key.start_ms} holds ${n} bars where the index says ${count}`,
    )
}
