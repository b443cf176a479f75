/**
 * @module A quote push as an ingest log entry's body (MarketStore.ingestLog): `[[symbol, snapshot,
 * ext?], ...]`, the snapshot as the live tables keep one (../store/live-json.ts): half the bytes of
 * the pushed objects, every number as exact.
 */
import type { PushedQuote } from '../live/live-feed.js'
import { snapshotJson, snapshotOf, type SnapshotRow } from '../store/live-json.js'

type LoggedQuote = [symbol: string, snapshot: SnapshotRow, ext?: PushedQuote['ext']]

export function entryBody(quotes: readonly PushedQuote[]): string {
  const rows = quotes.map(
    ({ snapshot, ext }) =>
      `[${JSON.stringify(snapshot.symbol)},${snapshotJson(snapshot)}${ext ? `,${JSON.stringify(ext)}` : ''}]`,
  )
  return `[${rows.join(',')}]`
}

export function quotesOfEntry(body: string): PushedQuote[] {
  return (JSON.parse(body) as LoggedQuote[]).map(([symbol, snapshot, ext]) => ({
    snapshot: snapshotOf(symbol, snapshot),
    ...(ext && { ext }),
  }))
}
