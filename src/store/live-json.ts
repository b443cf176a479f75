/** @module Live rows as both backends keep them: the latest quote (with the builder's state) and depth of a symbol, as JSON text. */
import type { MarketDepth } from '../domain/depth.js'
import type { FormingBar, QuoteSnapshot, SymbolState } from '../domain/minute-bars.js'
import type { LiveQuote } from './market-store.js'

/**
 * True when `Keys` names every field of T: a field added to the state does not compile until named
 * here, the reminder to write it in liveQuoteJson and read it in liveQuoteOf (live-json.test.ts
 * checks that every state reads back the same). The snapshot's `symbol` is not written: it is the
 * row's key, and liveQuoteOf takes it from there.
 */
type Names<T, Keys extends keyof T> = [Exclude<keyof T, Keys>] extends [never] ? true : never
const WRITTEN: [
  Names<SymbolState, 'last' | 'bar'>,
  Names<
    QuoteSnapshot,
    'symbol' | 'timestamp' | 'lastPrice' | 'open' | 'high' | 'low' | 'prevClose' | 'volume' | 'amount'
  >,
  Names<
    FormingBar,
    'start' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount' | 'baseVolume' | 'baseAmount' | 'closed'
  >,
] = [true, true, true]
void WRITTEN

/** A number as JSON.stringify writes it (a non-finite one as null): the shortest text that reads back exactly. */
const num = (x: number): number | null => (Number.isFinite(x) ? x : null)

/** A snapshot as a row keeps it: its fields in this order (the symbol is the row's key). */
export type SnapshotRow = [
  timestamp: number,
  lastPrice: number,
  open: number,
  high: number,
  low: number,
  prevClose: number,
  volume: number,
  amount: number,
]
/** The forming bar as a row keeps it; `closed` as 1 or 0. */
type BarRow = [
  start: number,
  open: number,
  high: number,
  low: number,
  close: number,
  volume: number,
  amount: number,
  baseVolume: number,
  baseAmount: number,
  closed: 0 | 1,
]
/** A live quote's row: the last snapshot, the forming bar (null: none), the ext when there is one. */
type QuoteRow = [last: SnapshotRow, bar: BarRow | null, ext?: LiveQuote['ext']]

/**
 * A live quote as its row keeps it (FORMAT.md "Live data"): JSON arrays of the builder's state,
 * `[[timestamp, lastPrice, open, high, low, prevClose, volume, amount], [start, open, high, low,
 * close, volume, amount, baseVolume, baseAmount, closed] or null, ext]` (ext only when the quote has
 * one), numbers as JSON.stringify writes them (doubles round-trip exactly). A push writes one per
 * symbol, so it is written field by field (faster than JSON.stringify) and without field names
 * (without ext, less than half the text of the same state as objects).
 */
export function liveQuoteJson(q: LiveQuote): string {
  const { bar: b } = q.state
  const last = snapshotJson(q.state.last)
  const bar =
    b === undefined
      ? 'null'
      : `[${num(b.start)},${num(b.open)},${num(b.high)},${num(b.low)},${num(b.close)},${num(b.volume)},${num(b.amount)},${num(b.baseVolume)},${num(b.baseAmount)},${b.closed ? 1 : 0}]`
  return q.ext === undefined ? `[${last},${bar}]` : `[${last},${bar},${JSON.stringify(q.ext)}]`
}

/** A snapshot as a SnapshotRow's JSON text, written field by field (faster than JSON.stringify, the same text). */
export const snapshotJson = (l: QuoteSnapshot): string =>
  `[${num(l.timestamp)},${num(l.lastPrice)},${num(l.open)},${num(l.high)},${num(l.low)},${num(l.prevClose)},${num(l.volume)},${num(l.amount)}]`

export function snapshotOf(
  symbol: string,
  [timestamp, lastPrice, open, high, low, prevClose, volume, amount]: SnapshotRow,
): QuoteSnapshot {
  return { symbol, timestamp, lastPrice, open, high, low, prevClose, volume, amount }
}

/** The live quote of `symbol` its row keeps: as liveQuoteJson writes it, or as an object `{ state, ext }` (rows written before). */
export function liveQuoteOf(symbol: string, json: string): LiveQuote {
  const row = JSON.parse(json) as QuoteRow | Omit<LiveQuote, 'symbol'>
  if (!Array.isArray(row)) {
    const { state, ext } = row
    return { symbol, state, ...(ext !== undefined && { ext }) }
  }
  const [snapshot, b, ext] = row
  const last = snapshotOf(symbol, snapshot)
  const state: SymbolState =
    b === null
      ? { last }
      : {
          last,
          bar: {
            start: b[0],
            open: b[1],
            high: b[2],
            low: b[3],
            close: b[4],
            volume: b[5],
            amount: b[6],
            baseVolume: b[7],
            baseAmount: b[8],
            closed: b[9] === 1,
          },
        }
  return { symbol, state, ...(ext !== undefined && { ext }) }
}

export const depthJson = (d: MarketDepth): string =>
  JSON.stringify([d.timestamp, d.bidPrices, d.bidVolumes, d.askPrices, d.askVolumes])

export function depthOf(symbol: string, json: string): MarketDepth {
  const [timestamp, bidPrices, bidVolumes, askPrices, askVolumes] = JSON.parse(json) as [
    number,
    number[],
    number[],
    number[],
    number[],
  ]
  return { symbol, timestamp, bidPrices, bidVolumes, askPrices, askVolumes }
}
