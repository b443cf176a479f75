/**
 * @module The bounds of stored values under which every adjust mode and aggregate stays finite and
 * exact (docs/importing.md "Bounds"); imports refuse what lies outside them.
 */
import type { ExFactorEvent } from './ex-factors.js'

/**
 * The most 1m bars one aggregate sums (a US trading day of 6.5 hours, summed by a quote; a 60m bar
 * sums 60, a 1Y bar at most 262 daily bars).
 */
export const MAX_CONSTITUENTS = 390

/**
 * The smallest price: one unit of the 4th decimal, the precision adjusted prices are written at, so
 * an unadjusted bar read in an adjust mode never shows 0.0.
 */
export const MIN_PRICE = 0.0001

/**
 * The largest price. An adjusted price is written from price x 10^4 rounded to an integer, exact in a
 * double below 2^53 (9.007e15): up to 9.007e11. A price up to 10^8 (100 times Berkshire's A share)
 * keeps that for every cumulative factor up to 9,000 (AAPL's, splits and dividends since 1980, is a few hundred).
 */
export const MAX_PRICE = 1e8

/**
 * The largest volume: MAX_CONSTITUENTS of them sum to 3.9e15, below 2^53, so every aggregated volume
 * is an exact integer.
 */
export const MAX_VOLUME = 1e13

/**
 * The largest amount: as for volume, MAX_CONSTITUENTS amounts sum below 2^53, so an aggregate's sum
 * (of exact decimals, domain/aggregate.ts) is exact to the unit and the double nearest the exact sum
 * below it (a double holds cents up to 9e13). A whole market trades about 10^12 a day.
 */
export const MAX_AMOUNT = 1e13

/**
 * The most a symbol's ex-factors may move a price, as a power of ten: the product over its events of
 * max(f, 1/f), which bounds every cumulative factor of every adjust mode either way (and only shrinks
 * when events are deleted). 10^30 keeps MAX_PRICE x factor and MIN_PRICE / factor finite and non-zero;
 * a real history stays far inside (AAPL: 10^2.5).
 */
export const MAX_FACTOR_DIGITS = 30

/** log10 of the product of max(f, 1/f) over `events`: how far their factors can move a price. */
export function factorDigits(events: Iterable<ExFactorEvent>): number {
  let digits = 0
  for (const e of events) digits += Math.abs(Math.log10(e.exFactor))
  return digits
}
