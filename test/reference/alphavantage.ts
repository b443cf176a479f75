/** @module Reader for Alpha Vantage TIME_SERIES_DAILY_ADJUSTED exports (../shared/data/us-lean/README.md). */
import { readLines } from '../helpers/shared-data.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'

export interface AvRow {
  day: number
  date: string
  open: number
  high: number
  low: number
  close: number
  adjustedClose: number
  volume: number
  dividend: number
  split: number
}

export const AV = 'us-lean/reference/alphavantage_daily_adjusted/SenolIsci_20201125'

/** Rows oldest first (the file is newest first). */
export function readAlphaVantage(ticker: 'AAPL' | 'SPY'): AvRow[] {
  const [, ...lines] = readLines(`${AV}/daily_adjusted_${ticker}.csv`)
  return lines
    .map((line) => {
      const [date, o, h, l, c, adj, v, div, split] = line.split(',')
      const [y, m, d] = date.split('-').map(Number)
      return {
        day: daysFromCivil(y, m, d),
        date,
        open: Number(o),
        high: Number(h),
        low: Number(l),
        close: Number(c),
        adjustedClose: Number(adj),
        volume: Number(v),
        dividend: Number(div),
        split: Number(split),
      }
    })
    .reverse()
}
