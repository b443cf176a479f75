/** @module Parsing one CSV field into a checked value; every failure names file, line and column. */
import { isUtf8 } from 'node:buffer'
import { MdqError } from '../domain/errors.js'
import { MARKETS, parseSymbol, type Market, type SymbolParts } from '../domain/market.js'
import { MIN_EPOCH_MS } from '../domain/epoch-ms.js'
import { civilFromDays, daysFromCivil, isoWeekday } from '../domain/time-zone.js'
import { batchOfFields, fieldText, type CsvBatch, type CsvFile } from './csv-reader.js'
import { ImportError } from './import-error.js'

/** Reads fields of one row; `col` is the 0-based position from columnsOf. */
export class FieldReader {
  #bytes: Buffer = EMPTY.bytes
  #bounds: Int32Array = EMPTY.bounds
  #base = 0
  /** 1-based line of the row being read. */
  line = 0
  readonly #width: number
  #lastSymbolBytes: Buffer = Buffer.alloc(0)
  #lastSymbol?: SymbolParts
  /** Symbols read so far by a hash of their field's bytes (the same bytes always parse the same). */
  readonly #known = new Map<number, { bytes: Buffer; parts: SymbolParts }[]>()
  constructor(readonly file: CsvFile) {
    this.#width = file.header.length
  }

  /** Makes row i of the batch the one read. */
  at(batch: CsvBatch, i: number): void {
    this.#bytes = batch.bytes
    this.#bounds = batch.bounds
    this.#base = i * this.#width * 2
    this.line = batch.lines[i]
  }

  fail(col: number, reason: string): never {
    throw new ImportError(this.file.path, this.line, col + 1, reason)
  }

  text(col: number | undefined): string {
    if (col === undefined) return ''
    const s = this.#bounds[this.#base + 2 * col]
    const e = this.#bounds[this.#base + 2 * col + 1]
    const text = fieldText(this.#bytes, s, e)
    // Decoding puts U+FFFD for each byte that is not UTF-8: such text would be stored garbled.
    if (text.includes('\uFFFD') && !isUtf8(this.#bytes.subarray(s, e)))
      return this.fail(col, 'is not UTF-8 text (files are read as UTF-8: convert it first, e.g. iconv -f GBK -t UTF-8)')
    return text
  }

  /** A finite number; `fallback` when the column is absent or the field empty (undefined = required). */
  number(col: number | undefined, name: string, fallback?: number): number {
    if (col !== undefined) {
      // The common plain decimal straight from the bytes (parseDecimal's fast path); anything else as text.
      const b = this.#bytes
      let i = this.#bounds[this.#base + 2 * col]
      const e = this.#bounds[this.#base + 2 * col + 1]
      if (i === e && fallback !== undefined) return fallback
      const first = b[i]
      const negative = first === 45
      if (negative || first === 43) i++
      let mantissa = 0
      let digits = 0
      let decimals = -1
      for (; i < e; i++) {
        const c = b[i]
        if (c >= 48 && c <= 57) {
          mantissa = mantissa * 10 + (c - 48)
          digits++
          if (decimals >= 0) decimals++
        } else if (c === 46 && decimals < 0) decimals = 0
        else break
      }
      if (i === e && digits > 0 && digits <= 15) {
        const v = decimals > 0 ? mantissa / POW10[decimals] : mantissa
        return negative ? -v : v
      }
    }
    const s = this.text(col)
    if (s === '') {
      if (fallback !== undefined) return fallback
      return this.fail(col ?? 0, `${name} is required`)
    }
    const v = parseDecimal(s)
    if (Number.isNaN(v)) return this.fail(col!, `${name} '${clip(s)}' is not a number`)
    return v
  }

  symbol(col: number | undefined, fixed?: SymbolParts): SymbolParts {
    if (col === undefined) {
      if (fixed) return fixed
      return this.fail(0, "no 'symbol' column: give --symbol")
    }
    // A file sorted by symbol repeats the last one: compared as bytes, no string made.
    const b = this.#bytes
    const s = this.#bounds[this.#base + 2 * col]
    const e = this.#bounds[this.#base + 2 * col + 1]
    const last = this.#lastSymbolBytes
    if (this.#lastSymbol && e - s === last.length) {
      let k = 0
      while (k < last.length && b[s + k] === last[k]) k++
      if (k === last.length) return this.#lastSymbol
    }
    // A file interleaved over the market changes symbol every row: each field's bytes are looked up
    // by a hash (a string and a parse per row were a third of its parse thread).
    let h = e - s
    for (let k = s; k < e; k++) h = (Math.imul(h, 31) + b[k]) | 0
    const known = this.#known.get(h)
    if (known) {
      for (const entry of known) {
        if (entry.bytes.length !== e - s) continue
        let k = 0
        while (k < entry.bytes.length && b[s + k] === entry.bytes[k]) k++
        if (k === entry.bytes.length) {
          this.#lastSymbolBytes = entry.bytes
          return (this.#lastSymbol = entry.parts)
        }
      }
    }
    const text = this.text(col)
    try {
      this.#lastSymbol = parseSymbol(text)
      this.#lastSymbolBytes = Buffer.from(b.subarray(s, e))
      if (this.#known.size >= MAX_KNOWN_SYMBOLS) this.#known.clear()
      const entry = { bytes: this.#lastSymbolBytes, parts: this.#lastSymbol }
      if (known) known.push(entry)
      else this.#known.set(h, [entry])
      return this.#lastSymbol
    } catch (err) {
      if (err instanceof MdqError) return this.fail(col, err.message.replace("Parameter 'symbol': ", ''))
      throw err
    }
  }

  /** `YYYY-MM-DD` or `YYYYMMDD` as a local day number (days since 1970-01-01); impossible dates refused. */
  date(col: number, name: string): number {
    const s = this.text(col)
    const m = DASHED_DATE.exec(s) ?? COMPACT_DATE.exec(s)
    if (!m) return this.fail(col, `${name} '${clip(s)}' is not a date YYYY-MM-DD or YYYYMMDD`)
    const day = calendarDay(Number(m[1]), Number(m[2]), Number(m[3]))
    if (day === undefined) return this.fail(col, `${name} '${s}' is not a calendar date`)
    return day
  }

  /**
   * A bar time, returned as UTC ms within 1970-2099: epoch milliseconds (11 to 13 digits), or a
   * local `YYYY-MM-DD` / `YYYYMMDD` (the Tushare, Baostock and LEAN form), each optionally with
   * ` HH:MM[:SS]`, in the exchange's zone. Impossible dates and times are refused.
   */
  time(col: number, market: Market): number {
    const fast = this.#fastTime(col, market)
    return Number.isNaN(fast) ? this.#textTime(col, market) : fast
  }

  /**
   * The usual forms read from the bytes: epoch ms, or `YYYY-MM-DD HH:MM[:SS]`; NaN for anything
   * else or anything wrong, which #textTime then reads again and names.
   */
  #fastTime(col: number, market: Market): number {
    const b = this.#bytes
    const s = this.#bounds[this.#base + 2 * col]
    const n = this.#bounds[this.#base + 2 * col + 1] - s
    if (n >= 11 && n <= 15 && b[s] !== 48) {
      let ms = 0
      for (let i = s; i < s + n; i++) {
        const c = b[i] - 48
        if (c < 0 || c > 9) return NaN
        ms = ms * 10 + c
      }
      return ms >= MIN_EPOCH_MS && ms < MAX_MS ? ms : NaN
    }
    if (
      (n !== 16 && n !== 19) ||
      b[s + 4] !== 45 ||
      b[s + 7] !== 45 ||
      (b[s + 10] !== 32 && b[s + 10] !== 84) ||
      b[s + 13] !== 58 ||
      (n === 19 && b[s + 16] !== 58)
    )
      return NaN
    const y = digits2(b, s) * 100 + digits2(b, s + 2)
    const mo = digits2(b, s + 5)
    const d = digits2(b, s + 8)
    const hh = digits2(b, s + 11)
    const mm = digits2(b, s + 14)
    const ss = n === 19 ? digits2(b, s + 17) : 0
    if (!(y >= MIN_YEAR && y <= MAX_YEAR && hh <= 23 && mm <= 59 && ss <= 59) || calendarDay(y, mo, d) === undefined)
      return NaN
    return market.zone.utcOf(y, mo, d, hh * 60 + mm) + ss * 1000
  }

  #textTime(col: number, market: Market): number {
    const t = timeOfText(this.text(col), market)
    return typeof t === 'string' ? this.fail(col, t) : t
  }
}

/**
 * A bar time as text (a file's field, or a pushed row's string): epoch milliseconds, or a local
 * `YYYY-MM-DD` / `YYYYMMDD` optionally with ` HH:MM[:SS]`, as UTC ms within 1970-2099; or why not.
 */
export function timeOfText(s: string, market: Market): number | string {
  if (s.length !== 8 && isDigits(s)) {
    if (s.length > 1 && s[0] === '0')
      return `time '${clip(s)}' has a leading zero: epoch milliseconds are written without one (give epoch milliseconds, YYYYMMDD or YYYY-MM-DD)`
    return epochMsOf(s.length <= 16 ? Number(s) : Infinity, s)
  }
  const m = DASHED_TIME.exec(s) ?? COMPACT_TIME.exec(s)
  if (!m)
    return `time '${clip(s)}' is neither epoch milliseconds nor a local 'YYYY-MM-DD[ HH:MM]' or 'YYYYMMDD[ HH:MM]'`
  const [y, mo, d, hh, mm, ss] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number)
  const day = calendarDay(y, mo, d)
  if (day === undefined) return `time '${s}': ${m[1]}-${m[2]}-${m[3]} is not a calendar date`
  if (hh > 23 || mm > 59 || ss > 59) return `time '${s}' is not a valid time of day`
  if (y < MIN_YEAR || y > MAX_YEAR) return `time '${s}' is outside ${MIN_YEAR}-${MAX_YEAR}`
  return market.zone.utcOf(y, mo, d, hh * 60 + mm) + ss * 1000
}

/** Epoch milliseconds as given (`text` for messages), or why they are not: seconds are refused with a hint. */
export function epochMsOf(ms: number, text: string = String(ms)): number | string {
  if (!Number.isInteger(ms) && Number.isFinite(ms))
    return `time '${clip(text)}' is not a whole number of epoch milliseconds`
  if (ms < MIN_EPOCH_MS) {
    const asSeconds = ms * 1000 < MAX_MS ? ` (as epoch seconds: ${new Date(ms * 1000).toISOString()})` : ''
    return `time '${text}' is too small for epoch milliseconds (before 1970-04-27)${asSeconds}: give epoch milliseconds, YYYYMMDD or YYYY-MM-DD`
  }
  if (!(ms < MAX_MS))
    return `time '${clip(text)}' as epoch milliseconds is after ${MAX_YEAR}: times must lie in ${MIN_YEAR}-${MAX_YEAR}`
  return ms
}

const EMPTY = batchOfFields([])
/** Bounds the symbols FieldReader remembers (a market has a few tens of thousands). */
const MAX_KNOWN_SYMBOLS = 1 << 16

/** Two ASCII digits as a number; NaN-like (> 99) when they are not digits, which every caller's range check refuses. */
function digits2(b: Buffer, at: number): number {
  const h = b[at] - 48
  const l = b[at + 1] - 48
  return h >= 0 && h <= 9 && l >= 0 && l <= 9 ? h * 10 + l : 1000
}

const DASHED_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const COMPACT_DATE = /^(\d{4})(\d{2})(\d{2})$/
const DASHED_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/
const COMPACT_TIME = /^(\d{4})(\d{2})(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/
const MIN_YEAR = 1970
const MAX_YEAR = 2099
const MAX_MS = Date.UTC(MAX_YEAR + 1, 0, 1)

/** The day number of a proleptic Gregorian date, or undefined when there is no such day (2024-02-30). */
function calendarDay(y: number, mo: number, d: number): number | undefined {
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return undefined
  const day = daysFromCivil(y, mo, d)
  const back = civilFromDays(day)
  return back.month === mo && back.day === d ? day : undefined
}

export function marketOfParts(p: SymbolParts): Market {
  return MARKETS[p.exchange]
}

export function isWeekday(market: Market, utcMs: number): boolean {
  return isoWeekday(market.zone.localDay(utcMs)) < 5
}

/** Whether a bar starting at utcMs lies inside one of the market's regular sessions [open, close). */
export function inSession(market: Market, utcMs: number): boolean {
  const minute = market.zone.localMinute(utcMs)
  const sessions = market.sessions
  for (let i = 0; i < sessions.length; i++) if (minute >= sessions[i].open && minute < sessions[i].close) return true
  return false
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k)

/**
 * A plain decimal (`-12.345`, `1e-3`) or NaN. Up to 15 significant digits without exponent take
 * the exact fast path (an integer below 2^53 over an exact power of ten rounds once, as strtod
 * does); anything else goes to Number() after a check that rejects hex, binary, octal, Infinity.
 */
export function parseDecimal(s: string): number {
  let i = 0
  let negative = false
  const first = s.charCodeAt(0)
  if (first === 45 || first === 43) {
    negative = first === 45
    i = 1
  }
  let mantissa = 0
  let digits = 0
  let decimals = -1
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      mantissa = mantissa * 10 + (c - 48)
      digits++
      if (decimals >= 0) decimals++
    } else if (c === 46 && decimals < 0) decimals = 0
    else return slowDecimal(s)
  }
  if (digits === 0) return NaN
  if (digits > 15) return slowDecimal(s)
  const v = decimals > 0 ? mantissa / POW10[decimals] : mantissa
  return negative ? -v : v
}

function slowDecimal(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || c === 46 || c === 45 || c === 43 || c === 101 || c === 69)) return NaN
  }
  const v = Number(s)
  return Number.isFinite(v) ? v : NaN
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

function clip(s: string): string {
  return s.length > 30 ? `${s.slice(0, 30)}...` : s
}
