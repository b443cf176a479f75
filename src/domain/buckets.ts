/** @module Bucket starts: which bar of a derived period each base bar falls in (contract "Bar timestamps"). */
import type { Market, Session } from './market.js'
import { MINUTES_OF, isMinutePeriod, type Period } from './period.js'
import { DAY_MS, MINUTE_MS, civilFromDays, daysFromCivil, isoWeekday, type Zone } from './time-zone.js'

/**
 * For every timestamp (ascending), the UTC ms start of the bucket of `period` holding it.
 * Minute buckets are anchored at each session's open and cut at its close; calendar buckets start
 * at local midnight of the ISO Monday / 1st of month / quarter / year.
 */
export function bucketStarts(ts: Float64Array, period: Period, market: Market): Float64Array {
  if (isMinutePeriod(period)) return minuteBucketStarts(ts, MINUTES_OF[period], market)
  if (period === '1d') return dayStarts(ts, market)
  return calendarBucketStarts(ts, period, market)
}

/**
 * Session-anchored minute buckets. Within one local day the offset is taken once at local noon:
 * regular sessions (09:30-16:00) never straddle a DST switch (02:00 local).
 */
export function minuteBucketStarts(ts: Float64Array, minutes: number, market: Market): Float64Array {
  const { zone, sessions } = market
  const out = new Float64Array(ts.length)
  const bucketMs = minutes * MINUTE_MS
  let dayLo = Infinity
  let dayHi = -Infinity
  let wallBase = 0 // UTC ms of local midnight as a wall reading: utc = wall - offset
  let offset = 0
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]
    if (t < dayLo || t >= dayHi) {
      const day = zone.localDay(t)
      dayLo = zone.midnightUtc(day)
      dayHi = zone.midnightUtc(day + 1)
      offset = noonOffsetMs(zone, day)
      wallBase = day * DAY_MS
    }
    const wallMs = t + offset - wallBase
    const anchor = sessionAnchorMs(wallMs, sessions)
    out[i] = wallBase + anchor + Math.floor((wallMs - anchor) / bucketMs) * bucketMs - offset
  }
  return out
}

/** A local day's UTC offset, taken once at its local noon (minute buckets use it for the whole day). */
export const noonOffsetMs = (zone: Zone, day: number): number =>
  zone.offsetMs(day * DAY_MS + 12 * 60 * MINUTE_MS - zone.offsetMs(day * DAY_MS))

/** Where a wall time's minute buckets are anchored: the open of the session holding it, else midnight (0). */
export function sessionAnchorMs(wallMs: number, sessions: readonly Session[]): number {
  for (let s = 0; s < sessions.length; s++) {
    const openMs = sessions[s].open * MINUTE_MS
    if (wallMs >= openMs && wallMs < sessions[s].close * MINUTE_MS) return openMs
  }
  return 0
}

/** Local midnight of each bar's trading day. */
export function dayStarts(ts: Float64Array, market: Market): Float64Array {
  const { zone } = market
  const out = new Float64Array(ts.length)
  let lastDay = NaN
  let lastStart = 0
  for (let i = 0; i < ts.length; i++) {
    const day = Math.floor((ts[i] + zone.offsetMs(ts[i])) / DAY_MS)
    if (day !== lastDay) {
      lastDay = day
      lastStart = zone.midnightUtc(day)
    }
    out[i] = lastStart
  }
  return out
}

/** First local day number of the calendar bucket holding local day `day`. */
export function calendarBucketDay(day: number, period: '1w' | '1M' | '1Q' | '1Y'): number {
  if (period === '1w') return day - isoWeekday(day)
  const { year, month } = civilFromDays(day)
  if (period === '1M') return daysFromCivil(year, month, 1)
  if (period === '1Q') return daysFromCivil(year, month - ((month - 1) % 3), 1)
  return daysFromCivil(year, 1, 1)
}

function calendarBucketStarts(ts: Float64Array, period: '1w' | '1M' | '1Q' | '1Y', market: Market): Float64Array {
  const { zone } = market
  const out = new Float64Array(ts.length)
  let lo = Infinity // current bucket covers local days [lo, hi)
  let hi = -Infinity
  let startUtc = 0
  for (let i = 0; i < ts.length; i++) {
    const day = Math.floor((ts[i] + zone.offsetMs(ts[i])) / DAY_MS)
    if (day < lo || day >= hi) {
      lo = calendarBucketDay(day, period)
      hi = period === '1w' ? lo + 7 : nextBucketDay(lo, period)
      startUtc = zone.midnightUtc(lo)
    }
    out[i] = startUtc
  }
  return out
}

function nextBucketDay(first: number, period: '1M' | '1Q' | '1Y'): number {
  const { year, month } = civilFromDays(first)
  const step = period === '1M' ? 1 : period === '1Q' ? 3 : 12
  const m = month - 1 + step
  return daysFromCivil(year + Math.floor(m / 12), (m % 12) + 1, 1)
}
