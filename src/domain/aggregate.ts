/** @module Aggregation of base bars into derived periods (contract "Aggregation"): one pass, no per-bar objects. */
import { allocBars, barCount, type Bars } from './bars.js'
import { bucketStarts } from './buckets.js'
import { exactExponent, scale, unscale, unscaleBig } from './decimal.js'
import type { Market } from './market.js'
import { basePeriodOf, type Period } from './period.js'

/**
 * Folds consecutive bars with equal bucket start into one: first open, last close, max high,
 * min low, summed volume and amount, prev_close of the first constituent. Amounts (decimals such
 * as 1234.56) are summed exactly as scaled integers: a float sum would answer 332647108674.49994.
 */
export function foldBuckets(src: Bars, bucketStart: Float64Array, amounts?: ScaledAmounts): Bars {
  const n = barCount(src)
  let m = 0
  for (let i = 0; i < n; i++) if (i === 0 || bucketStart[i] !== bucketStart[i - 1]) m++
  const out = allocBars(m)
  const { open, high, low, close, volume, amount, prevClose } = src
  const oHigh = out.high
  const oLow = out.low
  const oClose = out.close
  const oVolume = out.volume
  const oAmount = out.amount
  for (let i = 0, j = -1; i < n; i++) {
    if (i === 0 || bucketStart[i] !== bucketStart[i - 1]) {
      j++
      out.timestamp[j] = bucketStart[i]
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
    oAmount[j] += amount[i]
  }
  const e = amounts ? amounts.e : exactExponent(amount, 0, 9, Number.MAX_SAFE_INTEGER)
  if (e !== undefined && e > 0) sumScaled(amount, bucketStart, e, oAmount, amounts?.scaled)
  return out
}

/** A bar series' amounts as integers r / 10^e, worked out once for several folds of the same bars (the rollups). */
export interface ScaledAmounts {
  /** undefined when some amount is no exact decimal (they are then summed as doubles). */
  readonly e: number | undefined
  readonly scaled: Float64Array
}

export function scaledAmounts(amount: Float64Array): ScaledAmounts {
  const scaled = new Float64Array(amount.length)
  return { e: exactExponent(amount, 0, 9, Number.MAX_SAFE_INTEGER, scaled), scaled }
}

/**
 * out[j] = the double nearest to the exact decimal sum of bucket j's amounts, each v = r / 10^e
 * with integer r: summed as doubles while exact (below 2^53), in BigInt past that.
 */
function sumScaled(amount: Float64Array, bucketStart: Float64Array, e: number, out: Float64Array, scaled?: Float64Array): void {
  const n = amount.length
  for (let i = 0, j = 0; i < n; j++) {
    let acc = 0
    let big: bigint | undefined
    const start = bucketStart[i]
    for (; i < n && bucketStart[i] === start; i++) {
      const r = scaled ? scaled[i] : scale(amount[i], e)
      if (big === undefined && Math.abs(acc + r) < Number.MAX_SAFE_INTEGER) acc += r
      else big = (big ?? BigInt(acc)) + BigInt(r)
    }
    out[j] = big === undefined ? unscale(acc, e) : unscaleBig(big, e)
  }
}

/** Bars of `period` from bars of its base period (returned as is when `period` is the base). */
export function aggregate(base: Bars, period: Period, market: Market): Bars {
  if (period === basePeriodOf(period)) return base
  return foldBuckets(base, bucketStarts(base.timestamp, period, market))
}
