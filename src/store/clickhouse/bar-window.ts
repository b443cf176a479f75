/** @module Bars already read, cut in the process: a time window of a held history, the newest of a range, time order. */
import { BAR_FIELDS, allocBars, barCount, lowerBound, type Bars } from '../../domain/bars.js'

/**
 * The newest `limit` bars of `all` (ascending) inside [fromMs, toMs], as a copy: the query layer
 * adjusts bars in place, and a held history must stay as stored.
 */
export function cutWindow(all: Bars, fromMs: number, toMs: number, limit: number): Bars {
  const end = lowerBound(all.timestamp, Math.floor(toMs) + 1)
  const start = Math.min(end, Math.max(lowerBound(all.timestamp, Math.ceil(fromMs), 0, end), end - Math.max(0, limit)))
  const out = allocBars(end - start)
  for (const f of BAR_FIELDS) out[f].set(all[f].subarray(start, end))
  return out
}

/** Bars in time order: a range scan answers part by part, usually already in order. */
export function sortedByTime(bars: Bars): Bars {
  const ts = bars.timestamp
  let sorted = true
  for (let i = 1; i < ts.length && sorted; i++) sorted = ts[i - 1] < ts[i]
  if (sorted) return bars
  const order = Array.from({ length: ts.length }, (_, i) => i).sort((a, b) => ts[a] - ts[b])
  const out = allocBars(ts.length)
  for (const f of BAR_FIELDS) order.forEach((from, to) => (out[f][to] = bars[f][from]))
  return out
}

/** The last `limit` bars. */
export function newest(bars: Bars, limit: number): Bars {
  const n = barCount(bars)
  if (n <= limit) return bars
  const out = allocBars(limit)
  for (const f of BAR_FIELDS) out[f].set(bars[f].subarray(n - limit))
  return out
}
