/** @module Bars already read, put in order in the process: time order, the newest of a range. */
import { BAR_FIELDS, allocBars, barCount, sliceBars, type Bars } from '../../domain/bars.js'

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

/** The last `limit` bars (a view). */
export function newest(bars: Bars, limit: number): Bars {
  const n = barCount(bars)
  return n <= limit ? bars : sliceBars(bars, n - limit, n)
}
