/** @module Aggregation of base bars into derived periods (contract "Aggregation"): one pass, no per-bar objects. */
import { allocBars, barCount, type Bars } from './bars.js'
import { bucketStarts } from './buckets.js'
import { exactExponent, unscale, unscaleBig } from './decimal.js'
import type { Market } from './market.js'
import { basePeriodOf, type Period } from './period.js'

/**
 * Folds consecutive bars with equal bucket start into one, stamped with that start (see foldOpened).
 * Each bucket's sum depends on its own bars only (never on the other bars read with it), so a
 * bucket answers the same amount whatever window it is read in, and stored rollups equal
 * aggregate-on-read.
 */
export function foldBuckets(src: Bars, bucketStart: Float64Array): Bars {
  const n = barCount(src)
  const opens = new Uint8Array(n)
  let m = 0
  for (let i = 0; i < n; i++) {
    if (i === 0 || bucketStart[i] !== bucketStart[i - 1]) {
      opens[i] = 1
      m++
    }
  }
  return foldOpened(src, opens, 1, m, bucketStart, new Float64Array(n))
}

/**
 * Folds the bars into `m` groups, each opening at a bar whose `opens` has `bit` (bar 0 opens the
 * first) and stamped with `stamps` at that bar: first open, last close, max high, min low, summed
 * volume and amount, prev_close of the first constituent. Amounts (decimals such as 1234.56) are
 * summed exactly as scaled integers: a float sum would answer 332647108674.49994. `scaled` is
 * scratch of the bars' length. The one fold of aggregate-on-read and of the stored rollups.
 */
export function foldOpened(
  src: Bars,
  opens: Uint8Array,
  bit: number,
  m: number,
  stamps: Float64Array,
  scaled: Float64Array,
): Bars {
  const n = barCount(src)
  const out = allocBars(m)
  const { open, high, low, close, volume, amount, prevClose } = src
  const { high: oHigh, low: oLow, close: oClose, volume: oVolume, amount: oAmount } = out
  let first = 0
  for (let i = 0, j = -1; i < n; i++) {
    if (opens[i] & bit) {
      if (j >= 0) oAmount[j] = bucketAmount(amount, first, i, scaled)
      j++
      first = i
      out.timestamp[j] = stamps[i]
      out.open[j] = open[i]
      out.prevClose[j] = prevClose[i]
      oHigh[j] = high[i]
      oLow[j] = low[i]
    } else {
      if (high[i] > oHigh[j]) oHigh[j] = high[i]
      if (low[i] < oLow[j]) oLow[j] = low[i]
    }
    oClose[j] = close[i]
    oVolume[j] += volume[i]
  }
  if (m > 0) oAmount[m - 1] = bucketAmount(amount, first, n, scaled)
  return out
}

/**
 * The double nearest to the exact decimal sum of bars [from, to)'s amounts: each v = r / 10^e with
 * integer r (the group's smallest exact e), summed as doubles while exact (below 2^53), in BigInt
 * past that. A group with an amount that is no exact decimal is summed as doubles, in order.
 * `scaled` is scratch indexed as `amount`.
 */
function bucketAmount(amount: Float64Array, from: number, to: number, scaled: Float64Array): number {
  const e = exactExponent(amount, 0, 9, Number.MAX_SAFE_INTEGER, scaled, from, to)
  return e === undefined ? floatSum(amount, from, to) : exactSum(scaled, from, to, e)
}

function floatSum(amount: Float64Array, from: number, to: number): number {
  let acc = 0
  for (let i = from; i < to; i++) acc += amount[i]
  return acc
}

function exactSum(scaled: Float64Array, from: number, to: number, e: number): number {
  let acc = 0
  let big: bigint | undefined
  for (let i = from; i < to; i++) {
    const r = scaled[i]
    if (big === undefined && Math.abs(acc + r) < Number.MAX_SAFE_INTEGER) acc += r
    else big = (big ?? BigInt(acc)) + BigInt(r)
  }
  return big === undefined ? unscale(acc, e) : unscaleBig(big, e)
}

/** Bars of `period` from bars of its base period (returned as is when `period` is the base). */
export function aggregate(base: Bars, period: Period, market: Market): Bars {
  if (period === basePeriodOf(period)) return base
  return foldBuckets(base, bucketStarts(base.timestamp, period, market))
}
