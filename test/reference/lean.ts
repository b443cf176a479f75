/** @module Readers for QuantConnect LEAN sample data (see ../shared/data/us-lean/README.md). */
import { allocBars, type BarRow, type Bars } from '../../src/domain/bars.js'
import type { ExFactorEvent } from '../../src/domain/ex-factors.js'
import { MARKETS } from '../../src/domain/market.js'
import { MINUTE_MS, daysFromCivil } from '../../src/domain/time-zone.js'
import { readLines } from '../helpers/shared-data.js'

const NY = MARKETS.US.zone
export const LEAN = 'us-lean/Data/equity/usa'

/** `yyyyMMdd` -> local day number. */
export function dayOfYmd(ymd: string): number {
  return daysFromCivil(Number(ymd.slice(0, 4)), Number(ymd.slice(4, 6)), Number(ymd.slice(6, 8)))
}

/** Daily (`daily/`) or hour (`hour/`) bars; prices / 10000; prev_close NaN (LEAN has none). */
export function readLeanBars(kind: 'daily' | 'hour', ticker: string): Bars {
  const lines = readLines(`${LEAN}/${kind}/${ticker}.csv`)
  const bars = allocBars(lines.length)
  lines.forEach((line, i) => {
    const [stamp, o, h, l, c, v] = line.split(',')
    const [ymd, hhmm] = stamp.split(' ')
    const minute = Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))
    bars.timestamp[i] = NY.utcOf(...ymdParts(ymd), minute)
    bars.open[i] = Number(o) / 10000
    bars.high[i] = Number(h) / 10000
    bars.low[i] = Number(l) / 10000
    bars.close[i] = Number(c) / 10000
    bars.volume[i] = Number(v)
    bars.prevClose[i] = NaN
  })
  return bars
}

function ymdParts(ymd: string): [number, number, number] {
  return [Number(ymd.slice(0, 4)), Number(ymd.slice(4, 6)), Number(ymd.slice(6, 8))]
}

export type MinuteRow = Omit<BarRow, 'amount' | 'prevClose'> & {
  /** Minutes since local midnight. */
  minute: number
}

/** One day of LEAN minute bars (extended hours included), as stamped: bar starts. */
export function readLeanMinuteDay(ticker: string, ymd: string): MinuteRow[] {
  const midnight = NY.utcOf(...ymdParts(ymd), 0)
  return readLines(`${LEAN}/minute/${ticker}/${ymd}_${ticker}_minute_trade.csv`).map((line) => {
    const [ms, o, h, l, c, v] = line.split(',').map(Number)
    return {
      timestamp: midnight + ms,
      open: o / 10000,
      high: h / 10000,
      low: l / 10000,
      close: c / 10000,
      volume: v,
      minute: ms / MINUTE_MS,
    }
  })
}

export const LEAN_MINUTE_DAYS = {
  spy: ['20131004', '20131007', '20131008', '20131009', '20131010', '20131011'],
  aapl: ['20140605', '20140606', '20140609'],
} as const

export interface FactorRow {
  day: number
  priceFactor: number
  splitFactor: number
  referencePrice: number
}

export function readFactorFile(ticker: string): FactorRow[] {
  return readLines(`${LEAN}/factor_files/${ticker}.csv`).map((line) => {
    const [d, pf, sf, ref] = line.split(',')
    return { day: dayOfYmd(d), priceFactor: Number(pf), splitFactor: Number(sf), referencePrice: Number(ref) }
  })
}

/**
 * Per-event ex-factors implied by a factor file: between rows i and i+1, f = factor_{i+1} / factor_i,
 * ex-date = the first trading day (of `tradingDays`, ascending local day numbers) after row i's date.
 */
export function factorFileEvents(rows: readonly FactorRow[], tradingDays: readonly number[]): ExFactorEvent[] {
  const events: ExFactorEvent[] = []
  for (let i = 0; i + 1 < rows.length; i++) {
    const f = (rows[i + 1].priceFactor * rows[i + 1].splitFactor) / (rows[i].priceFactor * rows[i].splitFactor)
    if (Math.abs(f - 1) < 1e-12) continue
    const exDay = tradingDays.find((d) => d > rows[i].day)
    if (exDay === undefined) continue
    events.push({ timestamp: NY.midnightUtc(exDay), exFactor: f })
  }
  return events
}
