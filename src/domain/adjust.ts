/** @module Price adjustment in five modes over columnar bars (contract "Ex-factors and price adjustment"). */
import { PRICE_FIELDS, barCount, lowerBound, type Bars } from './bars.js'
import type { ExFactorEvent } from './ex-factors.js'

export const ADJUSTS = ['none', 'forward', 'backward', 'forward_additive', 'backward_additive'] as const
export type Adjust = (typeof ADJUSTS)[number]

/** Whether a mode adds the events' gaps (forward_additive, backward_additive) rather than multiplying by their factors. */
export const isAdditive = (mode: Adjust): boolean => mode === 'forward_additive' || mode === 'backward_additive'
/** Whether a mode leaves the latest bars raw and moves the earlier ones (forward, forward_additive). */
export const isForward = (mode: Adjust): boolean => mode === 'forward' || mode === 'forward_additive'

/**
 * Adjusted prices (open, high, low, close, prevClose); timestamp, volume and amount are shared, never
 * adjusted. `events` ascending by timestamp, at most one per ex-date (the store keys them so);
 * `gaps[k]` is event k's additive gap (read by the additive modes only). A bar on day d is before
 * event e iff its timestamp < e's. O(n + events): the bars between two ex-dates form one segment
 * with one coefficient. The result goes to fresh arrays, or into `target`'s price columns (which
 * may be `bars` itself, for callers that own freshly decoded arrays: no allocation, no page faults).
 */
export function adjustBars(
  bars: Bars,
  events: readonly ExFactorEvent[],
  mode: Adjust,
  gaps?: Float64Array,
  target?: Bars,
): Bars {
  if (mode === 'none' || events.length === 0) return bars
  const n = barCount(bars)
  const k = events.length
  const additive = isAdditive(mode)
  if (additive && (!gaps || gaps.length !== k)) throw new Error('adjustBars: additive modes need one gap per event')
  // coef[s] for segment s = bars with exactly s events at or before them.
  const coef = new Float64Array(k + 1)
  if (isForward(mode)) {
    coef[k] = additive ? 0 : 1
    for (let s = k - 1; s >= 0; s--) coef[s] = additive ? coef[s + 1] - gaps![s] : coef[s + 1] * events[s].exFactor
  } else {
    coef[0] = additive ? 0 : 1
    for (let s = 1; s <= k; s++) coef[s] = additive ? coef[s - 1] + gaps![s - 1] : coef[s - 1] * events[s - 1].exFactor
  }
  const out = target
    ? { ...target, timestamp: bars.timestamp, volume: bars.volume, amount: bars.amount }
    : freshPrices(bars)
  let from = 0
  for (let s = 0; s <= k; s++) {
    const to = s < k ? lowerBound(bars.timestamp, events[s].timestamp, from) : n
    // A ratio of 1 (forward after the last event, backward before the first: the latest bars of the
    // common forward query) leaves every double as it is: bars adjusted in place are done already.
    const same = coef[s] === 1 && !additive
    if (to > from && !(same && out.open === bars.open)) {
      for (const f of PRICE_FIELDS) {
        if (same) out[f].set(bars[f].subarray(from, to), from)
        else if (mode === 'forward') divideRange(bars[f], out[f], from, to, coef[s])
        else if (mode === 'backward') multiplyRange(bars[f], out[f], from, to, coef[s])
        else shiftRange(bars[f], out[f], from, to, coef[s])
      }
    }
    from = to
  }
  return out
}

/** Bars sharing timestamp, volume and amount with `bars`, with new (zeroed) price columns. */
function freshPrices(bars: Bars): Bars {
  const n = barCount(bars)
  const prices = new Float64Array(n * PRICE_FIELDS.length)
  return {
    timestamp: bars.timestamp,
    volume: bars.volume,
    amount: bars.amount,
    open: prices.subarray(0, n),
    high: prices.subarray(n, 2 * n),
    low: prices.subarray(2 * n, 3 * n),
    close: prices.subarray(3 * n, 4 * n),
    prevClose: prices.subarray(4 * n, 5 * n),
  }
}

function divideRange(src: Float64Array, dst: Float64Array, from: number, to: number, d: number): void {
  for (let i = from; i < to; i++) dst[i] = src[i] / d
}
function multiplyRange(src: Float64Array, dst: Float64Array, from: number, to: number, m: number): void {
  for (let i = from; i < to; i++) dst[i] = src[i] * m
}
function shiftRange(src: Float64Array, dst: Float64Array, from: number, to: number, c: number): void {
  for (let i = from; i < to; i++) dst[i] = src[i] + c
}

/** Adjusted prices leave the service rounded to 4 decimals; the math before stays in doubles. */
export function round4(x: number): number {
  const r = Math.round(x * 10_000) / 10_000
  return Number.isFinite(r) ? r : x // beyond 1.8e304 scaling overflows; such a double has no decimals anyway
}
