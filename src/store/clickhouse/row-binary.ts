/** @module Bars to and from ClickHouse RowBinary: prices and volumes as scaled Int64 (FORMAT.md, "Bars"). */
import { allocBars, type Bars } from '../../domain/bars.js'
import type { StoredPeriod } from '../../domain/period.js'
import type { ChunkPeriod } from '../market-store.js'

/** Scale meaning "the Int64 holds the IEEE-754 bits of the double": lossless for any value. */
export const RAW_SCALE = 255
const MAX_SCALE = 9
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k)
const TWO32 = 4294967296
const MAX_SCALED = 2 ** 53
/** NaN (a prev_close not imported) in a scaled column: Int64's minimum, never a scaled value. */
const NAN_HI = -2147483648
/** The `period` Enum8 of the bars table: the stored periods and the rollups (schema.ts). */
export const PERIOD_CODE: Record<ChunkPeriod, number> = {
  '1m': 1,
  '1d': 2,
  '5m': 3,
  '10m': 4,
  '15m': 5,
  '30m': 6,
  '60m': 7,
}
export const PERIOD_ENUM = `Enum8(${Object.entries(PERIOD_CODE)
  .map(([p, c]) => `'${p}' = ${c}`)
  .join(', ')})`

/** Whether v is exactly an integer / 10^k (NaN fits: it has its own marker). */
function fits(v: number, k: number): boolean {
  if (v !== v) return true
  const p = POW10[k]
  const r = Math.round(v * p)
  return r / p === v && Math.abs(r) < MAX_SCALED
}

/** A decimal scale at which all of a row's prices are exact: the previous row's if it fits, else the smallest. */
function priceScale(hint: number, a: number, b: number, c: number, d: number, e: number): number {
  if (hint !== RAW_SCALE && fits(a, hint) && fits(b, hint) && fits(c, hint) && fits(d, hint) && fits(e, hint))
    return hint
  for (let k = 0; k <= MAX_SCALE; k++) if (fits(a, k) && fits(b, k) && fits(c, k) && fits(d, k) && fits(e, k)) return k
  return RAW_SCALE
}

function volumeScale(hint: number, a: number, b: number): number {
  if (hint !== RAW_SCALE && fits(a, hint) && fits(b, hint)) return hint
  for (let k = 0; k <= MAX_SCALE; k++) if (fits(a, k) && fits(b, k)) return k
  return RAW_SCALE
}

/** A growing buffer of RowBinary bytes. */
class Writer {
  buf: Buffer
  #dv: DataView
  at = 0
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size)
    this.#dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength)
  }
  /** Room for `bytes` more, the buffer doubled as often as that takes. */
  room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.at + bytes) size *= 2
    const grown = Buffer.allocUnsafe(size)
    this.buf.copy(grown, 0, 0, this.at)
    this.buf = grown
    this.#dv = new DataView(grown.buffer, grown.byteOffset, grown.byteLength)
  }
  byte(b: number): void {
    this.#dv.setUint8(this.at++, b)
  }
  int64(v: number): void {
    const hi = Math.floor(v / TWO32)
    this.#dv.setUint32(this.at, v - hi * TWO32, true)
    this.#dv.setInt32(this.at + 4, hi, true)
    this.at += 8
  }
  uint64(v: bigint): void {
    this.#dv.setBigUint64(this.at, v, true)
    this.at += 8
  }
  uint32(v: number): void {
    this.#dv.setUint32(this.at, v, true)
    this.at += 4
  }
  bigInt64(v: bigint): void {
    this.#dv.setBigInt64(this.at, v, true)
    this.at += 8
  }
  double(v: number): void {
    this.#dv.setFloat64(this.at, v, true)
    this.at += 8
  }
  /** A String: its UTF-8 length as a varint, then its bytes (room made here). */
  string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8')
    this.room(5 + n)
    for (let left = n; ; left >>>= 7) {
      this.buf[this.at++] = left >= 128 ? (left & 127) | 128 : left
      if (left < 128) break
    }
    this.at += this.buf.write(s, this.at, n, 'utf8')
  }
  scaled(v: number, k: number): void {
    if (k === RAW_SCALE) {
      this.#dv.setFloat64(this.at, v, true)
      this.at += 8
    } else if (v !== v) {
      this.#dv.setUint32(this.at, 0, true)
      this.#dv.setInt32(this.at + 4, NAN_HI, true)
      this.at += 8
    } else this.int64(Math.round(v * POW10[k]))
  }
}

/** Bytes of one row besides the symbol. */
const FIXED_ROW = 1 + 8 + 1 + 5 * 8 + 1 + 2 * 8 + 8 + 4
/** A symbol's bytes in UTF-8 are at most this many times its UTF-16 length. */
const UTF8_PER_CHAR = 3

/**
 * RowBinary rows of BAR_COLUMNS gathered into one growing buffer: an INSERT's body, written in place
 * (a put of one bar costs its row, not buffers of its own).
 */
export class BarRows {
  #w = new Writer(1 << 16)
  #rows = 0

  get rows(): number {
    return this.#rows
  }

  /**
   * Adds the rows of bars [from, to) of one series, tagged with the import and its op seq. Rows whose
   * `rawVolume` flag is set keep volume and amount as raw doubles (scale 255) even when a decimal
   * scale fits: a rollup that must not be summed with others (clickhouse-rollups.ts).
   */
  add(
    symbol: string,
    period: ChunkPeriod,
    bars: Bars,
    from: number,
    to: number,
    importId: bigint,
    seq: number,
    rawVolume?: Uint8Array,
  ): void {
    if (to <= from) return
    const w = this.#w
    w.room((to - from) * (FIXED_ROW + 1 + UTF8_PER_CHAR * symbol.length))
    // The row's constant head (symbol, period), written once and copied into the rows after.
    const headAt = w.at
    const length = w.buf.write(symbol, headAt + 1, 'utf8')
    if (length > 127) throw new Error(`symbol too long: ${symbol}`)
    w.buf[headAt] = length
    w.buf[headAt + 1 + length] = PERIOD_CODE[period]
    const headEnd = headAt + 2 + length
    const { timestamp, open, high, low, close, prevClose, volume, amount } = bars
    let pk = 0
    let vk = 0
    for (let i = from; i < to; i++) {
      if (i === from) w.at = headEnd
      else w.at += w.buf.copy(w.buf, w.at, headAt, headEnd)
      w.int64(timestamp[i])
      pk = priceScale(pk, open[i], high[i], low[i], close[i], prevClose[i])
      w.byte(pk)
      w.scaled(open[i], pk)
      w.scaled(high[i], pk)
      w.scaled(low[i], pk)
      w.scaled(close[i], pk)
      w.scaled(prevClose[i], pk)
      const k = rawVolume?.[i] ? RAW_SCALE : (vk = volumeScale(vk, volume[i], amount[i]))
      w.byte(k)
      w.scaled(volume[i], k)
      w.scaled(amount[i], k)
      w.uint64(importId)
      w.uint32(seq)
    }
    this.#rows += to - from
  }

  /** The rows gathered so far (this block is empty after). */
  take(): Buffer {
    const body = this.#w.buf.subarray(0, this.#w.at)
    this.#w = new Writer(1 << 16)
    this.#rows = 0
    return body
  }
}

/** Bytes per row of the read query's result: ts, pscale, 5 prices, vscale, volume, amount. */
export const READ_ROW = 8 + 1 + 5 * 8 + 1 + 2 * 8

function readScaled(dv: DataView, at: number, k: number): number {
  if (k === RAW_SCALE) return dv.getFloat64(at, true)
  const lo = dv.getUint32(at, true)
  const hi = dv.getInt32(at + 4, true)
  if (hi === NAN_HI && lo === 0) return NaN
  return (hi * TWO32 + lo) / POW10[k]
}

/** The Int64 `ts` at `at` of a RowBinary answer, in ms. */
export const tsAt = (dv: DataView, at: number): number => dv.getInt32(at + 4, true) * TWO32 + dv.getUint32(at, true)

/** Decodes one row (ts, pscale, 5 prices, vscale, volume, amount) at `at` into bar `i`; returns its volume scale. */
export function decodeInto(dv: DataView, buf: Buffer, at: number, out: Bars, i: number): number {
  out.timestamp[i] = tsAt(dv, at)
  const pk = buf[at + 8]
  out.open[i] = readScaled(dv, at + 9, pk)
  out.high[i] = readScaled(dv, at + 17, pk)
  out.low[i] = readScaled(dv, at + 25, pk)
  out.close[i] = readScaled(dv, at + 33, pk)
  out.prevClose[i] = readScaled(dv, at + 41, pk)
  const vk = buf[at + 49]
  out.volume[i] = readScaled(dv, at + 50, vk)
  out.amount[i] = readScaled(dv, at + 58, vk)
  return vk
}

/**
 * Decodes `SELECT ts, pscale, open, high, low, close, prev_close, vscale, volume, amount ... FORMAT
 * RowBinary`; `vscales`, when given, receives each row's volume scale (255: raw doubles).
 */
export function decodeBars(buf: Buffer, vscales?: (scales: Uint8Array) => void): Bars {
  const n = buf.length / READ_ROW
  if (!Number.isInteger(n)) throw new Error(`RowBinary answer of ${buf.length} bytes is not whole rows of ${READ_ROW}`)
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const out = allocBars(n)
  const scales = vscales ? new Uint8Array(n) : undefined
  for (let i = 0, at = 0; i < n; i++, at += READ_ROW) {
    const vk = decodeInto(dv, buf, at, out, i)
    if (scales) scales[i] = vk
  }
  if (scales) vscales!(scales)
  return out
}

/** The varint length ClickHouse puts before a String's bytes. */
function stringHead(n: number): Buffer {
  const head: number[] = []
  for (; ; n >>>= 7) {
    head.push(n >= 128 ? (n & 127) | 128 : n)
    if (n < 128) break
  }
  return Buffer.from(head)
}

/** One `blobs` row (schema.ts BLOB_COLUMNS) in RowBinary: its series, first and last bar, count, chunk BLOB and version. */
export function blobRow(
  symbol: string,
  period: StoredPeriod,
  first: number,
  last: number,
  bars: number,
  data: Uint8Array,
  importId: bigint,
  seq: number,
): Buffer {
  const name = Buffer.from(symbol, 'utf8')
  const fixed = new Writer(1 + 8 + 8 + 4)
  fixed.byte(PERIOD_CODE[period])
  fixed.int64(first)
  fixed.int64(last)
  fixed.uint32(bars)
  const version = new Writer(12)
  version.uint64(importId)
  version.uint32(seq)
  return Buffer.concat([stringHead(name.length), name, fixed.buf, stringHead(data.length), data, version.buf])
}

/** A blob read's row: `SELECT symbol, first_ts, last_ts, bars, import_id, seq, data ... FORMAT RowBinary`. */
export interface BlobRow {
  readonly symbol: string
  readonly first: number
  readonly last: number
  readonly bars: number
  readonly importId: bigint
  readonly seq: number
  readonly data: Uint8Array
}

/** Decodes the rows of a blob read (BlobRow's columns in its order). */
export function decodeBlobRows(buf: Buffer): BlobRow[] {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const rows: BlobRow[] = []
  let at = 0
  const length = () => {
    let n = 0
    for (let mul = 1; ; mul *= 128) {
      const b = buf[at++]
      n += (b & 127) * mul
      if (b < 128) return n
    }
  }
  while (at < buf.length) {
    const nameLength = length()
    const symbol = buf.toString('utf8', at, at + nameLength)
    at += nameLength
    const first = tsAt(dv, at)
    const last = tsAt(dv, at + 8)
    const bars = dv.getUint32(at + 16, true)
    const importId = dv.getBigUint64(at + 20, true)
    const seq = dv.getUint32(at + 28, true)
    at += 32
    const dataLength = length()
    if (at + dataLength > buf.length) throw new Error(`blob read answer of ${buf.length} bytes ends inside a row`)
    rows.push({ symbol, first, last, bars, importId, seq, data: buf.subarray(at, at + dataLength) })
    at += dataLength
  }
  return rows
}

/** Bar rows per INSERT (the writer gathers many series into one): bounds the memory of a block. */
export const INSERT_BLOCK_ROWS = 500_000

/** Column types of the small tables written in RowBinary (18.16 parses floats from text inexactly: '7.956' is not 7.956). */
export type ColumnType =
  'String' | 'Nullable(String)' | 'Float64' | 'Nullable(Float64)' | 'Int64' | 'Nullable(Int64)' | 'UInt64' | 'UInt32'
export type Cell = string | number | bigint | null

/** A cell as a whole number (a bigint past 2^53), as BigInt would take it: anything else is refused. */
function whole(v: Cell): number | bigint {
  if (typeof v === 'bigint') return v
  const n = Number(v)
  if (Number.isSafeInteger(n)) return n
  return BigInt(n) // throws for a fraction, NaN or infinity
}

/** RowBinary of rows whose cells match `types` column by column, written in place into one buffer. */
export function encodeRows(types: readonly ColumnType[], rows: readonly (readonly Cell[])[]): Buffer {
  const columns = types.map((type) => {
    const nullable = type.startsWith('Nullable(')
    return { nullable, type: (nullable ? type.slice(9, -1) : type) as ColumnType }
  })
  const w = new Writer(1 << 12)
  for (const row of rows) {
    for (let k = 0; k < columns.length; k++) {
      const { nullable, type } = columns[k]
      const v = row[k]
      w.room(9)
      if (nullable) {
        w.byte(v === null ? 1 : 0)
        if (v === null) continue
      } else if (v === null) throw new Error(`column ${k} (${types[k]}) cannot be null`)
      if (type === 'String') w.string(String(v))
      else if (type === 'Float64') w.double(Number(v))
      else if (type === 'Int64' || type === 'UInt64') {
        const n = whole(v)
        if (type === 'UInt64' && n < 0) throw new RangeError(`column ${k} (UInt64): ${n} is negative`)
        if (typeof n === 'number') w.int64(n)
        else if (type === 'Int64') w.bigInt64(n)
        else w.uint64(n)
      } else {
        const n = Number(v)
        if (!(Number.isInteger(n) && n >= 0 && n < 2 ** 32))
          throw new RangeError(`column ${k} (UInt32): ${n} is out of range`)
        w.uint32(n)
      }
    }
  }
  return w.buf.subarray(0, w.at)
}
