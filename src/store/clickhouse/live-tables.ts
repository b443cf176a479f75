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

/** The newest committed row of each symbol (newest import, then its newest operation). */
async function newest(
  meta: Connection,
  s: Snapshot,
  table: string,
  column: string,
  symbols: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  if (symbols.length === 0) return out
  const rows = await meta.rows(
    `SELECT symbol, argMax(${column}, (import_id, seq)) FROM ${table}
     WHERE symbol IN (${sql.list(symbols.map(sql.str))}) AND ${s.visibleSql} GROUP BY symbol`,
  )
  for (const [symbol, json] of rows) out.set(symbol!, json!)
  return out
}

export async function readLiveQuotes(
  meta: Connection,
  s: Snapshot,
  symbols: readonly string[],
): Promise<Map<string, LiveQuote>> {
  const out = new Map<string, LiveQuote>()
  for (const [symbol, json] of await newest(meta, s, 'live_quotes', 'quote', [...new Set(symbols)])) {
    out.set(symbol, liveQuoteOf(symbol, json))
  }
  return out
}

export async function readDepths(
  meta: Connection,
  s: Snapshot,
  symbols: readonly string[],
): Promise<Map<string, MarketDepth>> {
  const out = new Map<string, MarketDepth>()
  for (const [symbol, json] of await newest(meta, s, 'live_depth', 'depth', [...new Set(symbols)]))
    out.set(symbol, depthOf(symbol, json))
  return out
}
