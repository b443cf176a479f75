/** @module Filling prev_close where none was imported (contract "Aggregation", prev_close rules). */
import { barCount, type Bars } from './bars.js'
import type { ExFactorEvent } from './ex-factors.js'
import type { Zone } from './time-zone.js'

/**
 * Product of the ex-factors of events with lo < timestamp <= hi (events ascending), from 1 in
 * ascending order; `from`: an index before which every event is at or before lo (a caller walking
 * bars in order passes its own, so the whole fill is O(n + events)).
 */
export function factorBetween(events: readonly ExFactorEvent[], lo: number, hi: number, from = 0): number {
  let f = 1
  for (let k = from; k < events.length && events[k].timestamp <= hi; k++)
    if (events[k].timestamp > lo) f *= events[k].exFactor
  return f
}

/**
 * Daily bars with every NaN prev_close replaced by the reference price: the previous bar's raw
 * close over the ex-factors of events since it. `before` is the bar preceding bars[0] in the store
 * (none: the first bar of a history has its open as prev_close). `inPlace`: fill the caller's own
 * column (freshly read bars) instead of a copy.
 */
export function fillDailyPrevClose(
  daily: Bars,
  events: readonly ExFactorEvent[],
  before?: { timestamp: number; close: number },
  inPlace = false,
): Bars {
  const n = barCount(daily)
  const { timestamp, close, open } = daily
  const prevClose = inPlace ? daily.prevClose : daily.prevClose.slice()
  // Events with timestamp <= the previous bar's are behind every later bar: `next` walks them once (O(n + events)).
  let next = 0
  for (let i = 0; i < n; i++) {
    if (!Number.isNaN(prevClose[i])) continue
    const prevTs = i > 0 ? timestamp[i - 1] : before?.timestamp
    const prevRaw = i > 0 ? close[i - 1] : before?.close
    if (prevTs === undefined || prevRaw === undefined) {
      prevClose[i] = open[i]
      continue
    }
    while (next < events.length && events[next].timestamp <= prevTs) next++
    prevClose[i] = prevRaw / factorBetween(events, prevTs, timestamp[i], next)
  }
  return inPlace ? daily : { ...daily, prevClose }
}

/**
 * Minute bars with every NaN prev_close filled: the previous 1m close within a trading day; for a
 * day's first bar, that day's daily prev_close from `dayPrevClose` (local day number -> price) when
 * known, else the previous 1m close over the day's ex-factors.
 */
export function fillMinutePrevClose(
  minute: Bars,
  events: readonly ExFactorEvent[],
  zone: Zone,
  dayPrevClose: ReadonlyMap<number, number>,
  before?: { timestamp: number; close: number },
): Bars {
  const n = barCount(minute)
  const { timestamp, close, open } = minute
  const prevClose = minute.prevClose.slice()
  let lastDay = before ? zone.localDay(before.timestamp) : NaN
  let dayLo = Infinity // bars in [dayLo, dayHi) are on local day lastDay
  let dayHi = -Infinity
  for (let i = 0; i < n; i++) {
    const t = timestamp[i]
    let firstOfDay = false
    if (t < dayLo || t >= dayHi) {
      const day = zone.localDay(t)
      firstOfDay = day !== lastDay
      lastDay = day
      dayLo = zone.midnightUtc(day)
      dayHi = zone.midnightUtc(day + 1)
    }
    const day = lastDay
    if (!Number.isNaN(prevClose[i])) continue
    const prevTs = i > 0 ? timestamp[i - 1] : before?.timestamp
    const prevRaw = i > 0 ? close[i - 1] : before?.close
    if (!firstOfDay && prevRaw !== undefined) prevClose[i] = prevRaw
    else if (dayPrevClose.has(day)) prevClose[i] = dayPrevClose.get(day)!
    else if (prevTs !== undefined && prevRaw !== undefined)
      prevClose[i] = prevRaw / factorBetween(events, prevTs, timestamp[i])
    else prevClose[i] = open[i]
  }
  return { ...minute, prevClose }
}
