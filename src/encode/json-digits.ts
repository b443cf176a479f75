/** @module Numbers as JSON digits stored into a DataView a table word at a time: the inner loops of json-bytes.ts. */
import { round4 } from '../domain/adjust.js'

/** Room for the longest number the fast paths write ("-" + 16 digits + "." + 4 digits + ","), plus the 8-byte table stores past its end. */
export const NUMBER_ROOM = 40
const MAX_FAST = 1e11

export type NumberStyle = 'integer' | 'float' | 'price4' | 'amount6'

/**
 * Digit tables, so a number is written a group of 4 digits a store instead of digit by digit: SHORT
 * holds 0..9999 without leading zeros, PAD4 0000..9999, FRAC ".d".."dddd" of 1..9999 / 10^4 without
 * trailing zeros (entry 0: ".0"), in two words, and FRAC_COMMA the same followed by ",". Each entry
 * is stored whole (4 or 8 bytes; NUMBER_ROOM leaves room past the end) and the write position moves
 * by its length. Words are little-endian.
 */
const SHORT = new Uint32Array(10_000)
const SHORT_LEN = new Uint8Array(10_000)
const PAD4 = new Uint32Array(10_000)
const FRAC = new Uint32Array(2 * 10_000)
const FRAC_LEN = new Uint8Array(10_000)
const FRAC_COMMA = new Uint32Array(2 * 10_000)
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
  FRAC_COMMA[2 * n] = word(`${frac},`, 0)
  FRAC_COMMA[2 * n + 1] = word(`${frac},`, 4)
}

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

/**
 * An adjusted price as written: rounded half up to 4 decimals, except that one which would round to
 * 0 (a price under 0.00005 after its factors) keeps 4 significant digits: a price is 0.0 only when
 * it is 0.
 */
export function price4(x: number): number {
  const r = round4(x)
  return r === 0 && x !== 0 ? Number(x.toPrecision(4)) : r
}

/**
 * An aggregated amount as written: float noise below 1e-6 dropped, the double nearest x rounded to 6
 * decimals. (x x 10^6 rounded and divided back moves a large amount that has no noise: 4419832049.68
 * to 4419832049.680001; toFixed rounds x itself, and runs only where that shortcut moved x.)
 */
export function amount6(x: number): number {
  const y = Math.round(x * 1e6) / 1e6
  return y === x || !Number.isFinite(x) ? y : Number(x.toFixed(6))
}

/** Writes x at `at` through a fast path and returns the end, or -1 when only String(x) writes it right. */
export function writeNumber(v: DataView, at: number, x: number, style: NumberStyle): number {
  if (style === 'amount6') {
    x = amount6(x)
    style = 'float'
  }
  if (style === 'price4') {
    const r = Math.round(x * 10_000)
    const ar = r < 0 ? -r : r
    if (!(ar < MAX_FAST * 10_000) || (r === 0 && x !== 0)) return -1
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
export function fallback(x: number, style: NumberStyle): string {
  if (style === 'price4') x = price4(x)
  else if (style === 'amount6') x = amount6(x)
  if (!Number.isFinite(x)) return 'null'
  const s = String(x)
  return style !== 'integer' && x === Math.floor(x) && Math.abs(x) < 1e21 ? `${s}.0` : s
}

/**
 * Where the last run stopped: the index of a value only `fallback` writes right, or the run's end.
 * (A second result without an allocation per run.)
 */
export let stoppedAt = 0

/**
 * Each of values[i, stop) followed by ",", written from `at` (the caller leaves NUMBER_ROOM per
 * value); returns the end. The common cases have loops of their own, so each number costs a few
 * table stores and no style dispatch: prices under 10,000 rounded to 4 decimals (`price4`), prices
 * and amounts under 10^11 with at most 4 decimals (`float`, and `amount6` once rounded to 6
 * decimals), non-negative integers (`integer`); other numbers take writeNumber, and one that only
 * String() writes right stops the run (see stoppedAt).
 */
export function writeRun(
  v: DataView,
  at: number,
  values: Float64Array,
  i: number,
  stop: number,
  style: NumberStyle,
): number {
  if (style === 'price4') return price4Run(v, at, values, i, stop)
  if (style === 'float') return floatRun(v, at, values, i, stop)
  if (style === 'integer') return integerRun(v, at, values, i, stop)
  return floatRun(v, at, values, i, stop, true)
}

function price4Run(v: DataView, at: number, values: Float64Array, i: number, stop: number): number {
  for (; i < stop; i++) {
    const r = Math.round(values[i] * 10_000)
    if (r > 0 && r < 100_000_000) {
      const ip = (r / 10_000) | 0
      const f = r - ip * 10_000
      v.setUint32(at, SHORT[ip], true)
      at += SHORT_LEN[ip]
      v.setUint32(at, FRAC_COMMA[2 * f], true)
      v.setUint32(at + 4, FRAC_COMMA[2 * f + 1], true)
      at += FRAC_LEN[f] + 1
      continue
    }
    const end = writeNumber(v, at, values[i], 'price4')
    if (end < 0) break
    v.setUint8(end, 44)
    at = end + 1
  }
  stoppedAt = i
  return at
}

function floatRun(v: DataView, at: number, values: Float64Array, i: number, stop: number, noise = false): number {
  for (; i < stop; i++) {
    // amount6: float noise below 1e-6 dropped first (as writeNumber does)
    const x = noise ? amount6(values[i]) : values[i]
    if (x >= 0 && x < MAX_FAST) {
      const r = Math.round(x * 10_000)
      if (r / 10_000 === x) {
        let f: number
        if (r < 100_000_000) {
          // Prices under 10,000: int32 arithmetic and table copies.
          const ip = (r / 10_000) | 0
          f = r - ip * 10_000
          v.setUint32(at, SHORT[ip], true)
          at += SHORT_LEN[ip]
        } else {
          // Amounts: the integer part's digits, then the same fraction.
          const ip = Math.floor(r / 10_000)
          f = r - ip * 10_000
          at = writeDigits(v, at, ip)
        }
        v.setUint32(at, FRAC_COMMA[2 * f], true)
        v.setUint32(at + 4, FRAC_COMMA[2 * f + 1], true)
        at += FRAC_LEN[f] + 1
        continue
      }
    }
    const end = writeNumber(v, at, x, 'float')
    if (end < 0) break
    v.setUint8(end, 44)
    at = end + 1
  }
  stoppedAt = i
  return at
}

function integerRun(v: DataView, at: number, values: Float64Array, i: number, stop: number): number {
  for (; i < stop; i++) {
    const x = values[i]
    let end: number
    if (x >= 0 && x <= Number.MAX_SAFE_INTEGER && x === Math.floor(x)) end = writeDigits(v, at, x)
    else {
      end = writeNumber(v, at, x, 'integer')
      if (end < 0) break
    }
    v.setUint8(end, 44)
    at = end + 1
  }
  stoppedAt = i
  return at
}
