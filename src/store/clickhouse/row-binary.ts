/** @module Bars to and from ClickHouse RowBinary: prices and volumes as scaled Int64 (FORMAT.md, "Bars"). */
import { allocBars, type Bars } from '../../domain/bars.js'
import type { StoredPeriod } from '../../domain/period.js'

/** Scale meaning "the Int64 holds the IEEE-754 bits of the double": lossless for any value. */
export const RAW_SCALE = 255
const MAX_SCALE = 9
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k)
const TWO32 = 4294967296
const MAX_SCALED = 2 ** 53
/** NaN (a prev_close not imported) in a scaled column: Int64's minimum, never a scaled value. */
const NAN_HI = -2147483648
const PERIOD_CODE: Record<StoredPeriod, number> = { '1m': 1, '1d': 2 }

/** Smallest-effort decimal scale k (try the previous row's first) at which every value is an exact integer / 10^k. */
function scaleOf(values: readonly number[], hint: number): number {
  const fits = (k: number) => {
    const p = POW10[k]
    for (const v of values) {
      if (Number.isNaN(v)) continue
      const r = Math.round(v * p)
      if (Math.abs(r) >= MAX_SCALED || r / p !== v) return false
    }
    return true
  }
  if (hint !== RAW_SCALE && fits(hint)) return hint
  for (let k = 0; k <= MAX_SCALE; k++) if (fits(k)) return k
  return RAW_SCALE
}

class Writer {
  readonly buf: Buffer
  at = 0
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size)
  }
  int64(v: number): void {
    const hi = Math.floor(v / TWO32)
    this.buf.writeUInt32LE(v - hi * TWO32, this.at)
    this.buf.writeInt32LE(hi, this.at + 4)
    this.at += 8
  }
  scaled(v: number, k: number): void {
    if (k === RAW_SCALE) {
      this.buf.writeDoubleLE(v, this.at)
      this.at += 8
    } else if (Number.isNaN(v)) {
      this.buf.writeUInt32LE(0, this.at)
      this.buf.writeInt32LE(NAN_HI, this.at + 4)
      this.at += 8
    } else this.int64(Math.round(v * POW10[k]))
  }
}

/** Bytes of one row besides the symbol. */
const FIXED_ROW = 1 + 8 + 1 + 5 * 8 + 1 + 2 * 8 + 8 + 4

/** RowBinary rows of BAR_COLUMNS for bars [from, to) of one series, tagged with the import and its op seq. */
export function encodeBars(symbol: string, period: StoredPeriod, bars: Bars, from: number, to: number, importId: bigint, seq: number): Buffer {
  const name = Buffer.from(symbol, 'utf8')
  if (name.length > 127) throw new Error(`symbol too long: ${symbol}`)
  const w = new Writer((to - from) * (FIXED_ROW + 1 + name.length))
  const { timestamp, open, high, low, close, prevClose, volume, amount } = bars
  let pk = 0
  let vk = 0
  for (let i = from; i < to; i++) {
    w.buf[w.at++] = name.length // varint length, < 128
    name.copy(w.buf, w.at)
    w.at += name.length
    w.buf[w.at++] = PERIOD_CODE[period]
    w.int64(timestamp[i])
    pk = scaleOf([open[i], high[i], low[i], close[i], prevClose[i]], pk)
    w.buf[w.at++] = pk
    w.scaled(open[i], pk)
    w.scaled(high[i], pk)
    w.scaled(low[i], pk)
    w.scaled(close[i], pk)
    w.scaled(prevClose[i], pk)
    vk = scaleOf([volume[i], amount[i]], vk)
    w.buf[w.at++] = vk
    w.scaled(volume[i], vk)
    w.scaled(amount[i], vk)
    w.buf.writeBigUInt64LE(importId, w.at)
    w.buf.writeUInt32LE(seq, w.at + 8)
    w.at += 12
  }
  return w.buf.subarray(0, w.at)
}

/** Bytes per row of the read query's result: ts, pscale, 5 prices, vscale, volume, amount. */
export const READ_ROW = 8 + 1 + 5 * 8 + 1 + 2 * 8

function readScaled(buf: Buffer, at: number, k: number): number {
  if (k === RAW_SCALE) return buf.readDoubleLE(at)
  const lo = buf.readUInt32LE(at)
  const hi = buf.readInt32LE(at + 4)
  if (hi === NAN_HI && lo === 0) return NaN
  return (hi * TWO32 + lo) / POW10[k]
}

/** Decodes `SELECT ts, pscale, open, high, low, close, prev_close, vscale, volume, amount ... FORMAT RowBinary`. */
export function decodeBars(buf: Buffer): Bars {
  const n = buf.length / READ_ROW
  if (!Number.isInteger(n)) throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows of ${READ_ROW}`)
  const out = allocBars(n)
  let at = 0
  for (let i = 0; i < n; i++) {
    out.timestamp[i] = buf.readInt32LE(at + 4) * TWO32 + buf.readUInt32LE(at)
    const pk = buf[at + 8]
    out.open[i] = readScaled(buf, at + 9, pk)
    out.high[i] = readScaled(buf, at + 17, pk)
    out.low[i] = readScaled(buf, at + 25, pk)
    out.close[i] = readScaled(buf, at + 33, pk)
    out.prevClose[i] = readScaled(buf, at + 41, pk)
    const vk = buf[at + 49]
    out.volume[i] = readScaled(buf, at + 50, vk)
    out.amount[i] = readScaled(buf, at + 58, vk)
    at += READ_ROW
  }
  return out
}

/** Rows per INSERT: bounds the memory of one block for a 10M-row import. */
export const INSERT_BLOCK_ROWS = 500_000

