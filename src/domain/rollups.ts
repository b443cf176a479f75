/** @module Intraday rollups: raw 5m..60m bars built per trading day from 1m bars, stored at import and adjusted after. */
import { foldBuckets, foldOpened } from './aggregate.js'
import { barCount, type Bars } from './bars.js'
import { bucketStarts, noonOffsetMs, sessionAnchorMs } from './buckets.js'
import type { ExFactorEvent } from './ex-factors.js'
import type { Market } from './market.js'
import type { Adjust } from './adjust.js'
import { MINUTES_OF } from './period.js'
import { DAY_MS, MINUTE_MS, type Zone } from './time-zone.js'

export const ROLLUP_PERIODS = ['5m', '10m', '15m', '30m', '60m'] as const
export type RollupPeriod = (typeof ROLLUP_PERIODS)[number]

export function isRollupPeriod(p: string): p is RollupPeriod {
  return (ROLLUP_PERIODS as readonly string[]).includes(p)
}

/**
 * Raw rollup bars of `period` from ascending 1m bars: one bar per (local day, bucket), stamped with
 * its FIRST 1m bar's timestamp (not the bucket start) so that adjusting and filling prev_close see
 * the same instant as they would for that 1m bar. prev_close is the first constituent's raw value
 * (NaN stays NaN: the query fills it exactly as it fills a 1m bar). Sums run in 1m order from 0,
 * as foldBuckets does on read, so they are bit-equal.
 */
export function buildRollups(minute: Bars, period: RollupPeriod, market: Market): Bars {
  const n = barCount(minute)
  const ts = minute.timestamp
  const starts = bucketStarts(ts, period, market)
  const zone = market.zone
  // Group key = index of the group's first bar: a new group at a new bucket or a new local day.
  const key = new Float64Array(n)
  let dayLo = Infinity
  let dayHi = -Infinity
  for (let i = 0; i < n; i++) {
    let newDay = false
    if (ts[i] < dayLo || ts[i] >= dayHi) {
      const day = zone.localDay(ts[i])
      dayLo = zone.midnightUtc(day)
      dayHi = zone.midnightUtc(day + 1)
      newDay = true
    }
    key[i] = i === 0 || newDay || starts[i] !== starts[i - 1] ? i : key[i - 1]
  }
  const out = foldBuckets(minute, key)
  for (let j = 0; j < barCount(out); j++) out.timestamp[j] = ts[out.timestamp[j]]
  return out
}

/**
 * buildRollups of every ROLLUP_PERIODS period, in that order, bit for bit (rollups.test.ts): one
 * pass finds each bar's day, session and bucket in all five periods (where a new rollup bar opens),
 * then each period folds its bars from those marks (foldOpened, as foldBuckets does). The import
 * builds rollups for every 1m bar it writes; five bucketStarts and key arrays, one per period, were
 * a fifth of its main thread.
 */
export function buildAllRollups(minute: Bars, market: Market): Bars[] {
  const n = barCount(minute)
  const ts = minute.timestamp
  const { zone, sessions } = market
  const periods = ROLLUP_PERIODS.length
  const bucketMs = ROLLUP_PERIODS.map((p) => MINUTES_OF[p] * MINUTE_MS)
  // Bit k of opens[i]: bar i opens a bar of ROLLUP_PERIODS[k].
  const opens = new Uint8Array(n)
  const counts = new Array<number>(periods).fill(0)
  const lastStart = new Float64Array(periods)
  // Per period, the last bucket computed as [lo, hi) of wallMs - anchor: a bar inside it, on the same
  // day and session, has the same start (no division; an integer offset, so inside means same floor).
  const bucketLo = new Float64Array(periods)
  const bucketHi = new Float64Array(periods)
  let lastAnchor = NaN
  let dayLo = Infinity
  let dayHi = -Infinity
  let wallBase = 0
  let offset = 0
  for (let i = 0; i < n; i++) {
    const t = ts[i]
    // As minuteBucketStarts: the day's offset taken once at local noon, buckets anchored at the session's open.
    let newDay = false
    if (t < dayLo || t >= dayHi) {
      const day = zone.localDay(t)
      dayLo = zone.midnightUtc(day)
      dayHi = zone.midnightUtc(day + 1)
      offset = noonOffsetMs(zone, day)
      wallBase = day * DAY_MS
      newDay = true
    }
    const wallMs = t + offset - wallBase
    const anchor = sessionAnchorMs(wallMs, sessions)
    const rel = wallMs - anchor
    const sameSession = !newDay && anchor === lastAnchor && (rel | 0) === rel
    lastAnchor = anchor
    let bits = 0
    for (let k = 0; k < periods; k++) {
      if (sameSession && rel >= bucketLo[k] && rel < bucketHi[k]) continue
      const q = Math.floor(rel / bucketMs[k])
      const start = wallBase + anchor + q * bucketMs[k] - offset
      if (i === 0 || newDay || start !== lastStart[k]) {
        bits |= 1 << k
        counts[k]++
      }
      lastStart[k] = start
      bucketLo[k] = q * bucketMs[k]
      bucketHi[k] = bucketLo[k] + bucketMs[k]
    }
    opens[i] = bits
  }
  const scaled = new Float64Array(n)
  return counts.map((m, k) => foldOpened(minute, opens, 1 << k, m, ts, scaled))
}

/**
 * Whether adjusting a rollup by its first bar's timestamp equals adjusting each of its 1m bars: every
 * event sits at a local midnight (so one factor holds all day) and, for the multiplicative modes,
 * every factor is positive and finite (so max/min commute with the scaling).
 */
export function rollupsAdjustExactly(events: readonly ExFactorEvent[], zone: Zone, mode: Adjust): boolean {
  for (const e of events) {
    if (zone.midnightUtc(zone.localDay(e.timestamp)) !== e.timestamp) return false
    if ((mode === 'forward' || mode === 'backward') && !(e.exFactor > 0 && Number.isFinite(e.exFactor))) return false
  }
  return true
}
