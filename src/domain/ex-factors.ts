/** @module Ex-rights/ex-dividend events: per-event ratios derived from prev_close, computed from corporate actions, or given. */
import { barCount, lowerBound, type Bars } from './bars.js'

/**
 * One ex-factor event (contract "Ex-factors and price adjustment"): `timestamp` is local midnight of
 * the ex-date (the first trading day of the new basis); `exFactor` = P / R, per event, not cumulative.
 */
export interface ExFactorEvent {
  readonly timestamp: number
  readonly exFactor: number
}

/** Per share: a 10送3派1.6 is cashDividend 0.16 + bonusRatio 0.3; a 4-for-1 split is splitRatio 4. */
export interface CorporateAction {
  readonly cashDividend: number
  readonly bonusRatio: number
  readonly rightsRatio: number
  readonly rightsPrice: number
  readonly splitRatio: number
}

export const NO_ACTION: CorporateAction = {
  cashDividend: 0,
  bonusRatio: 0,
  rightsRatio: 0,
  rightsPrice: 0,
  splitRatio: 1,
}

/** Exchange ex-rights reference price R = (P - cash + rightsPrice x rightsRatio) / ((1 + bonus + rights) x split). */
export function referencePrice(lastClose: number, a: CorporateAction): number {
  return (
    (lastClose - a.cashDividend + a.rightsPrice * a.rightsRatio) / ((1 + a.bonusRatio + a.rightsRatio) * a.splitRatio)
  )
}

/** f = P / R for a corporate action whose last close before the ex-date was P. */
export function exFactorOfAction(lastClose: number, a: CorporateAction): number {
  return lastClose / referencePrice(lastClose, a)
}

/** Half of the smallest quoted tick (0.0001): differences below it are rounding, not an event. */
export const PREV_CLOSE_TOLERANCE = 0.00005

/**
 * Events implied by daily bars whose `prevClose` (the exchange reference price) differs from the
 * previous bar's close: f = close[i-1] / prevClose[i], stamped at bar i.
 */
export function deriveExFactors(daily: Bars, tolerance = PREV_CLOSE_TOLERANCE): ExFactorEvent[] {
  const { close, prevClose, timestamp } = daily
  const events: ExFactorEvent[] = []
  for (let i = 1; i < barCount(daily); i++) {
    const pc = prevClose[i]
    if (pc > 0 && Math.abs(pc - close[i - 1]) > tolerance)
      events.push({ timestamp: timestamp[i], exFactor: close[i - 1] / pc })
  }
  return events
}

/**
 * Events of corporate actions over daily bars: P is the raw close of the last bar before each
 * ex-date. Actions with no bar before them, and actions that change nothing (f = 1), give no event.
 */
export function actionExFactors(
  daily: Bars,
  actions: readonly { timestamp: number; action: CorporateAction }[],
): ExFactorEvent[] {
  const events: ExFactorEvent[] = []
  for (const { timestamp, action } of actions) {
    const i = lowerBound(daily.timestamp, timestamp) - 1
    if (i < 0) continue
    const f = exFactorOfAction(daily.close[i], action)
    if (f !== 1) events.push({ timestamp, exFactor: f })
  }
  return events
}

/**
 * Additive gap g_e = P_e x (1 - 1/f_e) of each event, P_e being `closeBefore(e)`, the raw close of
 * the last trading day before the ex-date (0 gap where there is none).
 */
export function gapsOf(events: readonly ExFactorEvent[], closeBefore: (e: ExFactorEvent) => number): Float64Array {
  const gaps = new Float64Array(events.length)
  events.forEach((e, k) => {
    const p = closeBefore(e)
    gaps[k] = Number.isFinite(p) ? p * (1 - 1 / e.exFactor) : 0
  })
  return gaps
}
