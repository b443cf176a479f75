/** @module Exact decimal arithmetic on doubles: a column of decimals as scaled integers, for exact storage and sums. */

const POW10 = Array.from({ length: 31 }, (_, i) => 10 ** Math.abs(i - 15))
/** 10^|e| for -15 <= e <= 15, each an exact double. */
export const pow10 = (e: number): number => POW10[e + 15]
/** Scaled integers stay below 2^51, so sums of a few and deltas and zigzags stay exact doubles (< 2^53). */
export const MAX_SCALED = 2 ** 51
/** From |r| = 2^52 on, steps of 10^-e can be finer than the doubles near r / 10^e: several integers r give one double. */
const AMBIGUOUS = 2 ** 52

/** The double nearest to the decimal `units` / 10^e (e >= 0), for sums past 2^53 (read from its digits: one rounding). */
export function unscaleBig(units: bigint, e: number): number {
  const digits = (units < 0n ? -units : units).toString().padStart(e + 1, '0')
  const v = Number(`${digits.slice(0, digits.length - e)}.${digits.slice(digits.length - e)}`)
  return units < 0n ? -v : v
}

/**
 * v x 10^e as an integer: the r with unscale(r, e) === v when there is one. The product v x 10^e is
 * itself rounded, so past about 2^44 it can land one off (43274869311170.02 x 100 rounds to
 * ...003): the neighbours are tried before the rounded product is returned as it is. Past 2^52 several
 * r give v: the one of v's shortest text.
 */
export function scale(v: number, e: number): number {
  const r = Math.round(e >= 0 ? v * pow10(e) : v / pow10(e))
  if (e <= 0) return r
  const c = unscale(r, e) === v ? r : unscale(r - 1, e) === v ? r - 1 : unscale(r + 1, e) === v ? r + 1 : undefined
  if (c === undefined) return r
  return Math.abs(c) < AMBIGUOUS ? c : shortestScaled(v, e, c)
}

/**
 * v's shortest text (String(v), as an answer prints it) as an integer at exponent e, for a v that
 * several r give (|r| >= 2^52): so a sum of such amounts is the exact sum of the amounts printed.
 * `r` (one of them) when the text has more than e places or is in exponent form (neither happens
 * for an r that round-trips).
 */
function shortestScaled(v: number, e: number, r: number): number {
  const text = String(v)
  const dot = text.indexOf('.')
  const places = dot < 0 ? 0 : text.length - dot - 1
  return places > e || text.includes('e') ? r : Number(text.replace('.', '')) * pow10(e - places)
}

/** r x 10^-e: the double nearest to the decimal r / 10^e. */
export const unscale = (r: number, e: number): number => (e >= 0 ? r / pow10(e) : r * pow10(e))

/**
 * The smallest exponent e in [minExp, maxExp] with every value exactly v = r / 10^e for an integer
 * |r| < 2^51 (so 10.01 has e = 2, a multiple of 10,000 e = -4), or undefined (e.g. for pi, -0, NaN).
 * `scaled`, when given, receives each r at that e (the pass that proves e computes them anyway).
 * `from`/`to`: the part of `values` to look at (a bucket of a series: no subarray per bucket); `scaled`
 * is indexed as `values` is.
 */
export function exactExponent(
  values: Float64Array,
  minExp = -5,
  maxExp = 9,
  maxScaled = MAX_SCALED,
  scaled?: Float64Array,
  from = 0,
  to = values.length,
): number | undefined {
  next: for (let e = minExp; e <= maxExp; e++) {
    // scale() and unscale() inlined: this runs over every column of every chunk written.
    const p = pow10(e)
    for (let i = from; i < to; i++) {
      const v = values[i]
      let r: number
      if (e > 0) {
        r = Math.round(v * p)
        if (r / p !== v) {
          if ((r - 1) / p === v) r--
          else if ((r + 1) / p === v) r++
          else continue next
        }
        if (!(Math.abs(r) < AMBIGUOUS)) r = shortestScaled(v, e, r)
      } else {
        r = Math.round(v / p)
        if (r * p !== v) continue next
      }
      if (!(Math.abs(r) < maxScaled) || Object.is(v, -0)) continue next
      if (scaled) scaled[i] = r
    }
    return e
  }
  return undefined
}

/**
 * a - b, exact for decimals: both as integers at the smallest exponent (0..9) at which they are
 * exact, subtracted as integers (12345.67 - 12000.01 is 345.66, not 345.6599999999999). Doubles
 * that are no such decimals are subtracted as doubles.
 */
export function exactDifference(a: number, b: number): number {
  PAIR[0] = a
  PAIR[1] = b
  const e = exactExponent(PAIR, 0, 9, MAX_SCALED, PAIR_SCALED)
  return e === undefined ? a - b : unscale(PAIR_SCALED[0] - PAIR_SCALED[1], e)
}
/** exactDifference's operands and their integers, reused: it runs twice for every pushed quote. */
const PAIR = new Float64Array(2)
const PAIR_SCALED = new Float64Array(2)
