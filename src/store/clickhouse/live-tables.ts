/** @module Live data on ClickHouse: the latest pushed quote (with the builder's state) and depth per symbol, versioned rows as every small table (FORMAT.md "Live data"). */
import type { MarketDepth } from '../../domain/depth.js'
import { depthJson, depthOf, liveQuoteJson, liveQuoteOf } from '../live-json.js'
import type { LiveQuote } from '../market-store.js'
import { sql, type Connection } from './connection.js'
import type { ColumnType } from './row-binary.js'
import type { Snapshot } from './snapshot.js'

/** On the metadata server; JSON text (no float is parsed by the server, so nothing changes on the way). */
export const LIVE_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS live_quotes (symbol String, ts Int64, quote String, import_id UInt64, seq UInt32)
   ENGINE = MergeTree ORDER BY (symbol, ts)`,
  `CREATE TABLE IF NOT EXISTS live_depth (symbol String, ts Int64, depth String, import_id UInt64, seq UInt32)
   ENGINE = MergeTree ORDER BY (symbol, ts)`,
]
export const LIVE_VERSIONED_TABLES = ['live_quotes', 'live_depth'] as const

/** The columns a live row is written with (RowBinary), `json` naming its JSON text. */
export const liveColumns = (json: 'quote' | 'depth'): [string, ColumnType][] => [
  ['symbol', 'String'],
  ['ts', 'Int64'],
  [json, 'String'],
]

export const liveQuoteRow = (q: LiveQuote): (string | number)[] => [q.symbol, q.state.last.timestamp, liveQuoteJson(q)]

export const depthRow = (d: MarketDepth): (string | number)[] => [d.symbol, d.timestamp, depthJson(d)]

/** The newest committed row of each of `symbols` that has one (newest import, then its newest operation), read by `of`. */
async function newest<T>(
  meta: Connection,
  s: Snapshot,
  table: string,
  column: string,
  symbols: readonly string[],
  of: (symbol: string, json: string) => T,
): Promise<Map<string, T>> {
  const out = new Map<string, T>()
  if (symbols.length === 0) return out
  const rows = await meta.rows(
    `SELECT symbol, argMax(${column}, (import_id, seq)) FROM ${table}
     WHERE symbol IN (${sql.list([...new Set(symbols)].map(sql.str))}) AND ${s.visibleSql} GROUP BY symbol`,
  )
  for (const [symbol, json] of rows) out.set(symbol!, of(symbol!, json!))
  return out
}

export const readLiveQuotes = (meta: Connection, s: Snapshot, symbols: readonly string[]) =>
  newest(meta, s, 'live_quotes', 'quote', symbols, liveQuoteOf)

export const readDepths = (meta: Connection, s: Snapshot, symbols: readonly string[]) =>
  newest(meta, s, 'live_depth', 'depth', symbols, depthOf)
