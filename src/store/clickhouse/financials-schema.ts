/** @module The ClickHouse tables of statements and dated universe memberships (FORMAT.md), on the metadata server. */

/** Every versioned row carries the import that wrote it and its order inside that import (as in schema.ts). */
const VERSION = 'import_id UInt64, seq UInt32'

export const FINANCIAL_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS financials (statement String, symbol String, period_end String, announce_date String, data String, ${VERSION})
   ENGINE = MergeTree ORDER BY (statement, symbol, period_end)`,
  `CREATE TABLE IF NOT EXISTS financial_deletes (statement String, symbol String, from_period String, to_period String, ${VERSION})
   ENGINE = MergeTree ORDER BY (statement, symbol)`,
  // The dates of a universe version imported with dates: the same (import_id, seq) as its `universes`
  // row, arrays parallel to its `symbols` ('' = open). A table of its own: 18.16 has no ADD COLUMN IF NOT EXISTS.
  `CREATE TABLE IF NOT EXISTS universe_dates (id String, in_dates Array(String), out_dates Array(String), ${VERSION})
   ENGINE = MergeTree ORDER BY id`,
]

/** Of them, the tables whose rows an unfinished import may leave behind. */
export const FINANCIAL_VERSIONED_TABLES = ['financials', 'financial_deletes', 'universe_dates'] as const
