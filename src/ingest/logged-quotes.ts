/** @module A quote push as an ingest log entry's body (MarketStore.ingestLog): a JSON array of arrays, half the bytes of the pushed objects, every number as exact. */
import type { PushedQuote } from '../live/live-feed.js'

type LoggedQuote = [
  symbol: string,
  timestamp: number,
  lastPrice: number,
  open: number,
  high: number,
  low: number,
  prevClose: number,
  volume: number,
  amount: number,
  ext?: PushedQuote['ext'],
]

export function entryBody(quotes: readonly PushedQuote[]): string {
  return JSON.stringify(
    quotes.map(({ snapshot: q, ext }): LoggedQuote => {
      const row: LoggedQuote = [
        q.symbol,
        q.timestamp,
        q.lastPrice,
        q.open,
        q.high,
        q.low,
        q.prevClose,
        q.volume,
        q.amount,
      ]
      if (ext) row.push(ext)
      return row
    }),
  )
}

export function quotesOfEntry(body: string): PushedQuote[] {
  return (JSON.parse(body) as LoggedQuote[]).map(
    ([symbol, timestamp, lastPrice, open, high, low, prevClose, volume, amount, ext]) => ({
      snapshot: { symbol, timestamp, lastPrice, open, high, low, prevClose, volume, amount },
      ...(ext && { ext }),
    }),
  )
}
