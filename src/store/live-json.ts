/** @module Live rows as the backends keep them: the latest quote (with the builder's state) and depth of a symbol, as JSON text, and the quote as SQLite's rows keep it (doubles). */
import type { MarketDepth } from '../domain/depth.js'
import type { FormingBar, QuoteSnapshot, SymbolState } from '../domain/minute-bars.js'
import type { LiveQuote } from './market-store.js'

/**
 * True when `Keys` names every field of T: a field added to the state does not compile until named
 * here, the reminder to write it in liveQuoteJson and liveQuoteBytes and read it in liveQuoteOf
 * (live-json.test.ts checks that every state reads back the same). The snapshot's `symbol` is not
 * written: it is the row's key, and liveQuoteOf takes it from there.
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

/** liveQuoteBytes' header: byte 0 the layout (1), byte 1 what follows the snapshot; 8 bytes, so the doubles sit 8-aligned. */
const BYTES_LAYOUT = 1
const HEADER = 8
const WITH_BAR = 1
const WITH_EXT = 2
const SNAPSHOT_BYTES = 8 * 8
const BAR_BYTES = 10 * 8

/**
 * A live quote as SQLite's row keeps it (FORMAT.md "Live data"): an 8-byte header (the layout, 1;
 * flags: 1 a forming bar follows, 2 an ext follows), the snapshot's 8 doubles and the forming bar's 10
 * in liveQuoteJson's order (`closed` as 1 or 0), little-endian, then the ext as JSON text (UTF-8) to
 * the end. Each double is kept bit for bit (NaN and the infinities too), and writing one costs a
 * fraction of formatting its shortest text, which a push pays per symbol on SQLite's ingest thread.
 */
export function liveQuoteBytes(q: LiveQuote): Buffer {
  const { last: l, bar: b } = q.state
  const ext = q.ext === undefined ? undefined : JSON.stringify(q.ext)
  const at = HEADER + SNAPSHOT_BYTES + (b ? BAR_BYTES : 0)
  // From the pool: Buffer.alloc makes a memory block of its own each time, many times slower. Every
  // byte is written below.
  const out = Buffer.allocUnsafe(at + (ext === undefined ? 0 : Buffer.byteLength(ext)))
  out.fill(0, 0, HEADER)
  out[0] = BYTES_LAYOUT
  out[1] = (b ? WITH_BAR : 0) | (ext === undefined ? 0 : WITH_EXT)
  let next = HEADER
  const put = (x: number) => (next = out.writeDoubleLE(x, next))
  put(l.timestamp)
  put(l.lastPrice)
  put(l.open)
  put(l.high)
  put(l.low)
  put(l.prevClose)
  put(l.volume)
  put(l.amount)
  if (b) {
    put(b.start)
    put(b.open)
    put(b.high)
    put(b.low)
    put(b.close)
    put(b.volume)
    put(b.amount)
    put(b.baseVolume)
    put(b.baseAmount)
    put(b.closed ? 1 : 0)
  }
  if (ext !== undefined) out.write(ext, at)
  return out
}

/** The live quote of `symbol` a row keeps as liveQuoteBytes wrote it. */
function liveQuoteOfBytes(symbol: string, row: Uint8Array): LiveQuote {
  const bytes = Buffer.from(row.buffer, row.byteOffset, row.byteLength)
  if (bytes[0] !== BYTES_LAYOUT || bytes.length < HEADER + SNAPSHOT_BYTES)
    throw new Error(`the live quote row of ${symbol} is not one this mdq reads (layout ${bytes[0]})`)
  const flags = bytes[1]
  const at = (i: number) => bytes.readDoubleLE(HEADER + i * 8)
  const last = snapshotOf(symbol, [at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7)])
  const withBar = (flags & WITH_BAR) !== 0
  const state: SymbolState = withBar
    ? {
        last,
        bar: {
          start: at(8),
          open: at(9),
          high: at(10),
          low: at(11),
          close: at(12),
          volume: at(13),
          amount: at(14),
          baseVolume: at(15),
          baseAmount: at(16),
          closed: at(17) === 1,
        },
      }
    : { last }
  if ((flags & WITH_EXT) === 0) return { symbol, state }
  const ext = JSON.parse(
    bytes.toString('utf8', HEADER + SNAPSHOT_BYTES + (withBar ? BAR_BYTES : 0)),
  ) as LiveQuote['ext']
  return { symbol, state, ext }
}

/**
 * The live quote of `symbol` its row keeps: as liveQuoteBytes writes it (bytes), as liveQuoteJson
 * writes it, or as an object `{ state, ext }` (text, rows written before).
 */
export function liveQuoteOf(symbol: string, row: string | Uint8Array): LiveQuote {
  if (typeof row !== 'string') return liveQuoteOfBytes(symbol, row)
  const parsed = JSON.parse(row) as QuoteRow | Omit<LiveQuote, 'symbol'>
  if (!Array.isArray(parsed)) {
    const { state, ext } = parsed
    return { symbol, state, ...(ext !== undefined && { ext }) }
  }
  const [snapshot, b, ext] = parsed
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
