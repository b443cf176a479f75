/** @module The prepared statements over the chunks table of one connection (chunks.ts reads and writes through them). */
import type { ChunkSpan } from './chunk-cache.js'
import { indexExists, type Db } from './sqlite-db.js'

export interface ChunkRow {
  start_ms: number
  first_ms: number
  last_ms: number
  count: number
  data: Uint8Array
}

/** Prepared chunk statements of one connection. */
export function chunkStatements(db: Db) {
  return {
    // start_ms > from - span bounds the index range: a chunk starting earlier ends before `from`.
    chunksDesc: db.prepare<[string, string, number, number, number], ChunkRow>(
      'SELECT start_ms, first_ms, last_ms, count, data FROM chunks WHERE symbol = ? AND period = ? AND start_ms <= ? AND start_ms > ? AND last_ms >= ? ORDER BY start_ms DESC',
    ),
    // The chunks of a range without their BLOBs (their overflow pages are not read).
    chunkSpans: db.prepare<[string, string, number, number, number], Omit<ChunkRow, 'data'>>(
      'SELECT start_ms, first_ms, last_ms, count FROM chunks WHERE symbol = ? AND period = ? AND start_ms <= ? AND start_ms > ? AND last_ms >= ? ORDER BY start_ms',
    ),
    // Newest first, from the index of spans (no BLOB read), each with the store's generation as of
    // the same read (chunk-cache.ts); a store opened read-only before migration 9 has no such index.
    chunkSpansDesc: db.prepare<[string, string, number, number, number], ChunkSpan>(
      `SELECT start_ms, first_ms, last_ms, count, (SELECT value FROM meta WHERE key = 'generation') AS generation FROM chunks ${indexExists(db, 'chunk_spans') ? 'INDEXED BY chunk_spans' : ''} WHERE symbol = ? AND period = ? AND start_ms <= ? AND start_ms > ? AND last_ms >= ? ORDER BY start_ms DESC`,
    ),
    chunkAt: db.prepare<[string, string, number], ChunkRow>(
      'SELECT start_ms, first_ms, last_ms, count, data FROM chunks WHERE symbol = ? AND period = ? AND start_ms = ?',
    ),
    putChunk: db.prepare<[string, string, number, number, number, number, Uint8Array]>(
      'INSERT OR REPLACE INTO chunks (symbol, period, start_ms, first_ms, last_ms, count, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteChunk: db.prepare<[string, string, number]>(
      'DELETE FROM chunks WHERE symbol = ? AND period = ? AND start_ms = ?',
    ),
  }
}
export type ChunkStatements = ReturnType<typeof chunkStatements>
