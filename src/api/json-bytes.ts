/** @module JSON text of bars written as bytes, digit by digit, into 16 KB Buffers: the one writer of every klines answer. */
import { round4 } from '../domain/adjust.js'
import type { Bars } from '../domain/bars.js'

/** 16 KB: small enough for V8's young generation as a string. */
const CHUNK = 1 << 14
/** Room for the longest number we write through the fast paths ("-" + 16 digits + "." + 4 digits) or a short fallback. */
const NUMBER_ROOM = 40
const MAX_FAST = 1e11

export type NumberStyle = 'integer' | 'float' | 'price4' | 'amount6'

/**
 * Appends ASCII into Buffers of 16 KB; `take()` hands out the filled ones. A batch answer takes
 * them after each symbol, so no more than one symbol's answer is ever held.
 */
export class JsonBytes<T extends Buffer | string = Buffer> {
  #buf = Buffer.allocUnsafe(CHUNK)
  /** The same bytes: numbers are written 4 bytes a store (DataView stores are unaligned-safe). */
  #view = viewOf(this.#buf)
  #at = 0
  #chunks: T[] = []

  /**
   * @param text Hand out strings and reuse one Buffer: a streamed answer's pieces are then small
   * young-generation strings, collected at once, instead of fresh 64 KB ArrayBuffers that V8
   * reclaims only when their external memory adds up (measured on 100 x 10,000 bars: peak RSS +64 MB
   * with Buffers, +37 to +43 MB with strings).
   */
  constructor(readonly text: T extends string ? true : false = false as T extends string ? true : false) {}

  /** ASCII text (JSON punctuation, keys, numbers from String()). */
  ascii(s: string): void {
    if (this.#at + s.length > CHUNK) this.#next()
    if (s.length > CHUNK) {
      this.#chunks.push((this.text ? s : Buffer.from(s, 'latin1')) as T)
      return
    }
    this.#at += this.#buf.write(s, this.#at, 'latin1')
  }

  #next(): void {
    if (this.#at === 0) return
    if (this.text) this.#chunks.push(this.#buf.toString('latin1', 0, this.#at) as T)
    else {
      this.#chunks.push(this.#buf.subarray(0, this.#at) as T)
      this.#buf = Buffer.allocUnsafe(CHUNK)
      this.#view = viewOf(this.#buf)
    }
    this.#at = 0
  }

  /** The text written since the last take. */
  take(): T[] {
    this.#next()
    const out = this.#chunks
    this.#chunks = []
    return out
  }

  /**
   * One number, the same text as wire.ts's formatters: `integer` as formatNumber (what
   * JSON.stringify writes), `float` as formatFloat (always a fraction part), `price4` as
   * formatPrice4 (rounded half up to 4 decimals), `amount6` as float noise below 1e-6 dropped.
   */
  number(x: number, style: NumberStyle): void {
    if (this.#at + NUMBER_ROOM > CHUNK) this.#next()
    const at = writeNumber(this.#view, this.#at, x, style)
    if (at < 0) this.ascii(fallback(x, style))
    else this.#at = at
  }

  /** `[n,n,...]`: the hot loop of every klines answer, on locals. */
  column(values: Float64Array, style: NumberStyle): void {
    this.ascii('[')
    let view = this.#view
    let at = this.#at
    for (let i = 0; i < values.length; i++) {
      if (at + NUMBER_ROOM + 1 > CHUNK) {
        this.#at = at
        this.#next()
        view = this.#view
        at = 0
      }
      if (i > 0) view.setUint8(at++, 44)
      const next = writeNumber(view, at, values[i], style)
      if (next >= 0) at = next
      else {
        this.#at = at
        this.ascii(fallback(values[i], style))
        view = this.#view
        at = this.#at
      }
    }
    this.#at = at
    this.ascii(']')
  }
}

/**
 * Digit tables, so a number is written a group of 4 digits a store instead of digit by digit: SHORT
 * holds 0..9999 without leading zeros, PAD4 0000..9999, FRAC ".d".."dddd" of 1..9999 / 10^4 without
 * trailing zeros (entry 0: ".0"), in two words. Each entry is stored whole (4 or 8 bytes; NUMBER_ROOM
 * leaves room past the end) and the write position moves by its length. Words are little-endian.
 */
const SHORT = new Uint32Array(10_000)
const SHORT_LEN = new Uint8Array(10_000)
const PAD4 = new Uint32Array(10_000)
const FRAC = new Uint32Array(2 * 10_000)
const FRAC_LEN = new Uint8Array(10_000)
const word = (s: string, from: number) => [0, 1, 2, 3].reduce((w, i) => w + (s.charCodeAt(from + i) || 0) * 256 ** i, 0)
for (let n = 0; n < 10_000; n++) {
  const short = String(n)
  const frac = n === 0 ? '.0' : `.${String(n).padStart(4, '0').replace(/0+$/, '')}`
  SHORT[n] = word(short, 0)
  SHORT_LEN[n] = short.length
  PAD4[n] = word(short.padStart(4, '0'), 0)
  FRAC[2 * n] = word(frac, 0)
  FRAC[2 * n + 1] = word(frac, 4)
  FRAC_LEN[n] = frac.length
}

const viewOf = (buf: Buffer) => new DataView(buf.buffer, buf.byteOffset, buf.byteLength)

/** 0 <= n < 10^4 without leading zeros. */
function writeShort(v: DataView, at: number, n: number): number {
  v.setUint32(at, SHORT[n], true)
  return at + SHORT_LEN[n]
}

/** 0 <= n < 10^4 as exactly 4 digits. */
function writePad4(v: DataView, at: number, n: number): number {
  v.setUint32(at, PAD4[n], true)
  return at + 4
}

/** An integer 0 <= n < 10^8. */
function writeInt8(v: DataView, at: number, n: number): number {
  if (n < 10_000) return writeShort(v, at, n)
  const hi = (n / 10_000) | 0
  return writePad4(v, writeShort(v, at, hi), n - hi * 10_000)
}

/** Digits of an integer 0 <= n <= 2^53, as a high part (< 10^8) and 8 padded low digits. */
function writeDigits(v: DataView, at: number, n: number): number {
  if (n < 100_000_000) return writeInt8(v, at, n)
  let hi = Math.floor(n / 1e8)
  let lo = n - hi * 1e8
  if (lo < 0) {
    // n / 1e8 may round across an integer
    hi -= 1
    lo += 1e8
  } else if (lo >= 1e8) {
    hi += 1
    lo -= 1e8
  }
  at = writeInt8(v, at, hi)
  const mid = (lo / 10_000) | 0
  return writePad4(v, writePad4(v, at, mid), lo - mid * 10_000)
}

/** `ip`, then "." and the 4 scaled decimals `frac` (0..9999) without trailing zeros ("" or ".0" when 0). */
function writeDecimal(v: DataView, at: number, ip: number, frac: number, zeroFraction: boolean): number {
  at = writeDigits(v, at, ip)
  return frac === 0 && !zeroFraction ? at : writeFraction(v, at, frac)
}

/** "." and the 4 scaled decimals `frac` (0..9999) without trailing zeros (".0" when 0). */
function writeFraction(v: DataView, at: number, frac: number): number {
  v.setUint32(at, FRAC[2 * frac], true)
  v.setUint32(at + 4, FRAC[2 * frac + 1], true)
  return at + FRAC_LEN[frac]
}

/** Writes x at `at` through a fast path and returns the end, or -1 when only String(x) writes it right. */
function writeNumber(v: DataView, at: number, x: number, style: NumberStyle): number {
  if (style === 'amount6') {
    x = Math.round(x * 1e6) / 1e6
    style = 'float'
  }
  if (style === 'price4') {
    const r = Math.round(x * 10_000)
    const ar = r < 0 ? -r : r
    if (!(ar < MAX_FAST * 10_000)) return -1
    if (r < 0) v.setUint8(at++, 45)
    if (ar < 100_000_000) {
      // Prices under 10,000: int32 arithmetic and two table copies.
      const ip = (ar / 10_000) | 0
      return writeFraction(v, writeShort(v, at, ip), ar - ip * 10_000)
    }
    const ip = Math.floor(ar / 10_000)
    return writeDecimal(v, at, ip, ar - ip * 10_000, true)
  }
  const abs = x < 0 ? -x : x
  if (abs <= Number.MAX_SAFE_INTEGER && x === Math.floor(x)) {
    if (x < 0) v.setUint8(at++, 45)
    at = writeDigits(v, at, abs)
    if (style === 'float') {
      v.setUint8(at++, 46)
      v.setUint8(at++, 48)
    }
    return at
  }
  if (abs < MAX_FAST) {
    const r = Math.round(abs * 10_000)
    if (r / 10_000 === abs) {
      if (x < 0) v.setUint8(at++, 45)
      const ip = Math.floor(r / 10_000)
      return writeDecimal(v, at, ip, r - ip * 10_000, style === 'float')
    }
  }
  return -1
}

/** The shortest round-trip form, as JSON.stringify writes it (plus ".0" for a whole float). */
function fallback(x: number, style: NumberStyle): string {
  if (style === 'price4') x = round4(x)
  else if (style === 'amount6') x = Math.round(x * 1e6) / 1e6
  if (!Number.isFinite(x)) return 'null'
  const s = String(x)
  return style !== 'integer' && x === Math.floor(x) && Math.abs(x) < 1e21 ? `${s}.0` : s
}

export interface KlinesFormat {
  readonly adjusted: boolean
  readonly aggregated: boolean
}

/**
 * `{timestamp, open, ..., prev_close}` of one symbol: the one writer of bars, for /v1/klines and
 * every batch. Adjusted prices are rounded to 4 decimals here and only here; raw prices go out
 * exactly as stored; prices and amounts always with a fraction part. Summed amounts of aggregated
 * bars drop float noise below 1e-6.
 */
export function writeKlinesColumns<T extends Buffer | string>(out: JsonBytes<T>, bars: Bars, opts: KlinesFormat): void {
  const price: NumberStyle = opts.adjusted ? 'price4' : 'float'
  out.ascii('{"timestamp":')
  out.column(bars.timestamp, 'integer')
  for (const [key, values] of [['open', bars.open], ['high', bars.high], ['low', bars.low], ['close', bars.close]] as const) {
    out.ascii(`,"${key}":`)
    out.column(values, price)
  }
  out.ascii(',"volume":')
  out.column(bars.volume, 'integer')
  out.ascii(',"amount":')
  out.column(bars.amount, opts.aggregated ? 'amount6' : 'float')
  out.ascii(',"prev_close":')
  out.column(bars.prevClose, price)
  out.ascii('}')
}
