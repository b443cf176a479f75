/**
 * @module Stored rollups on ClickHouse: each 1m put but a live one also writes its own rollups (5m..60m,
 * the domain's buildAllRollups over the put's bars), so a bucket whose 1m bars came from several
 * imports (a day of one-minute appends) has several partial rollups, which reads fold into one
 * exactly as the bucket's 1m bars fold (FORMAT.md "Rollups").
 */
import { foldOpened } from '../../domain/aggregate.js'
import { barCount, lowerBound, type Bars } from '../../domain/bars.js'
import { bucketStarts } from '../../domain/buckets.js'
import { exactExponent } from '../../domain/decimal.js'
import type { Market } from '../../domain/market.js'
import { ROLLUP_PERIODS, buildAllRollups, type RollupPeriod } from '../../domain/rollups.js'
import { RAW_SCALE } from './row-binary.js'

/** A partial's exact amount sum stays below this as a scaled integer, so its double names one decimal. */
const MAX_PARTIAL_SCALED = 2 ** 51
const MAX_SAFE = Number.MAX_SAFE_INTEGER

export interface PartialRollups {
  readonly period: RollupPeriod
  readonly bars: Bars
  /** 1 where the rollup may not be folded with another (its volume and amount then go as raw doubles). */
  readonly rawVolume: Uint8Array
}

/** The rollups of one 1m put, each flagged whether a read may fold it with other partials of its bucket. */
export function partialRollups(minute: Bars, market: Market): PartialRollups[] {
  if (barCount(minute) !== 1) return partialRollupsOf(minute, market)
  // A put of one bar (a live minute): every period's rollup is that bar folded alone, the same five times.
  const bars = foldOpened(minute, Uint8Array.of(1), 1, 1, minute.timestamp, new Float64Array(1))
  const rawVolume = Uint8Array.of(foldable(minute, 0, 1, new Float64Array(1)) ? 0 : 1)
  return ROLLUP_PERIODS.map((period) => ({ period, bars, rawVolume }))
}

/** partialRollups of any number of bars. */
export function partialRollupsOf(minute: Bars, market: Market): PartialRollups[] {
  const ts = minute.timestamp
  const scratch = new Float64Array(barCount(minute))
  return buildAllRollups(minute, market).map((bars, k) => {
    const n = barCount(bars)
    const rawVolume = new Uint8Array(n)
    for (let j = 0; j < n; j++) {
      const from = lowerBound(ts, bars.timestamp[j])
      const to = j + 1 < n ? lowerBound(ts, bars.timestamp[j + 1], from) : barCount(minute)
      rawVolume[j] = foldable(minute, from, to, scratch) ? 0 : 1
    }
    return { period: ROLLUP_PERIODS[k], bars, rawVolume }
  })
}

/**
 * Whether sums over bars [from, to) can be folded with other partials and still equal the fold of
 * all the bucket's bars: whole, non-negative volumes (their float sum is then exact, in any grouping)
 * and non-negative amounts that are exact decimals (summed exactly, below MAX_PARTIAL_SCALED).
 */
function foldable(minute: Bars, from: number, to: number, scratch: Float64Array): boolean {
  const { volume, amount } = minute
  let volumes = 0
  for (let i = from; i < to; i++) {
    if (!(Number.isInteger(volume[i]) && volume[i] >= 0 && amount[i] >= 0)) return false
    volumes += volume[i]
  }
  if (!(volumes < MAX_SAFE)) return false
  if (exactExponent(amount, 0, 9, MAX_SAFE, scratch, from, to) === undefined) return false
  let sum = 0
  for (let i = from; i < to; i++) sum += scratch[i]
  return sum < MAX_PARTIAL_SCALED
}

/**
 * Partials read in time order (one series and rollup period) folded into one rollup per bucket and
 * local day, stamped with its first partial: what buildRollups gives for all the bucket's 1m bars.
 * Undefined when a bucket of several partials holds one that may not be folded: the caller then
 * rolls the 1m bars up itself.
 */
export function foldPartials(
  partials: Bars,
  vscales: Uint8Array,
  period: RollupPeriod,
  market: Market,
): Bars | undefined {
  const n = barCount(partials)
  const ts = partials.timestamp
  const starts = bucketStarts(ts, period, market)
  const zone = market.zone
  const opens = new Uint8Array(n)
  let groups = 0
  let several = false
  let lastDay = NaN
  for (let i = 0; i < n; i++) {
    const day = zone.localDay(ts[i])
    if (i === 0 || starts[i] !== starts[i - 1] || day !== lastDay) {
      opens[i] = 1
      groups++
    } else several = true
    lastDay = day
  }
  if (!several) return partials
  const scratch = new Float64Array(n)
  for (let i = 0, first = 0; i <= n; i++) {
    if (i < n && !opens[i]) continue
    if (i - first > 1) {
      for (let k = first; k < i; k++) if (vscales[k] === RAW_SCALE) return undefined
      if (exactExponent(partials.amount, 0, 9, MAX_SAFE, scratch, first, i) === undefined) return undefined
    }
    first = i
  }
  return foldOpened(partials, opens, 1, groups, ts, scratch)
}
