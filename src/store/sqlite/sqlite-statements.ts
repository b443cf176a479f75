/** @module The prepared statements of one connection to a store file: chunks, tail, live data, statements, instruments, events, meta. */
import { chunkStatements } from './chunk-statements.js'
import { financialStatements } from './financials.js'
import { liveStatements } from './live-tables.js'
import type { Db } from './sqlite-db.js'
import { tailStatements } from './tail.js'

export interface InstrumentRow {
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
export function storeStatements(db: Db) {
  return {
    ...chunkStatements(db),
    ...tailStatements(db),
    ...liveStatements(db),
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
export type StoreStatements = ReturnType<typeof storeStatements>
