/**
 * @module A symbol's daily prev_close, filled once per data version for its whole daily history: a
 * minute window's day-first bars take theirs from it, where each window read and decoded its days'
 * daily bars again (about 50 us of a 1,000-bar window's 400). A version's first window still reads its
 * days (SymbolContext.dailyPrevCloses): the history is loaded for a version asked for again.
 */
import { barCount, lowerBound } from '../domain/bars.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import { fillDailyPrevClose } from '../domain/prev-close.js'
import type { Zone } from '../domain/time-zone.js'
import type { MarketStore } from '../store/market-store.js'

export interface DailyPrevCloses {
  readonly timestamp: Float64Array
  /** Filled with the bar before each (fillDailyPrevClose over the whole history). */
  readonly prevClose: Float64Array
  /** What each bar's prev_close is filled with when it is the first of a read: its imported one, else its open. */
  readonly alone: Float64Array
}

/** Bytes held per daily bar (three doubles): the cache's bound counts them. */
export const DAILY_PREV_CLOSE_BYTES_PER_BAR = 24

export async function loadDailyPrevCloses(
  store: MarketStore,
  symbol: string,
  events: readonly ExFactorEvent[],
): Promise<DailyPrevCloses> {
  const daily = await store.readBars({ symbol, period: '1d', limit: Number.MAX_SAFE_INTEGER })
  const alone = new Float64Array(barCount(daily))
  for (let i = 0; i < alone.length; i++)
    alone[i] = Number.isNaN(daily.prevClose[i]) ? daily.open[i] : daily.prevClose[i]
  // Filled in the fresh read (the imported values are in `alone` already), then two columns copied out
  // of its one buffer, so the cache holds 24 bytes a bar, not the read's 64.
  fillDailyPrevClose(daily, events, undefined, true)
  return { timestamp: daily.timestamp.slice(), prevClose: daily.prevClose.slice(), alone }
}

/**
 * Local day -> daily prev_close of the latest `limit` daily bars at or before `toMs`: exactly what
 * reading those bars and filling them gives (the first of them has no bar before it in such a read).
 */
export function dayPrevCloses(d: DailyPrevCloses, zone: Zone, toMs: number, limit: number): Map<number, number> {
  const hi = lowerBound(d.timestamp, toMs + 1)
  const lo = Math.max(0, hi - limit)
  const out = new Map<number, number>()
  for (let i = lo; i < hi; i++) out.set(zone.localDay(d.timestamp[i]), i === lo ? d.alone[i] : d.prevClose[i])
  return out
}
