/** @module Readers for the Chinese A-share reference data (../shared/data/cn/README.md). */
import { allocBars, type Bars } from '../../src/domain/bars.js'
import type { CorporateAction } from '../../src/domain/ex-factors.js'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { readLines } from '../helpers/shared-data.js'

const SH = MARKETS.SH.zone
export const CN_CODES = ['600000', '600519', '601318'] as const

function dayOf(date: string): number {
  const [y, m, d] = date.includes('-')
    ? date.split('-').map(Number)
    : [date.slice(0, 4), date.slice(4, 6), date.slice(6, 8)].map(Number)
  return daysFromCivil(y, m, d)
}

export interface BaostockRow {
  date: string
  open: number
  high: number
  low: number
  close: number
  preclose: number
  volumeShares: number
  amount: number
  traded: boolean
}

export function readBaostock(code: string): BaostockRow[] {
  const [header, ...lines] = readLines(`cn/baostock_raw_daily/sh.${code}.csv`)
  const col = Object.fromEntries(header.split(',').map((name, i) => [name, i]))
  return lines.map((line) => {
    const f = line.split(',')
    return {
      date: f[col.date],
      open: Number(f[col.open]),
      high: Number(f[col.high]),
      low: Number(f[col.low]),
      close: Number(f[col.close]),
      preclose: Number(f[col.preclose]),
      volumeShares: Number(f[col.volume]),
      amount: Number(f[col.amount]),
      traded: f[col.tradestatus] === '1',
    }
  })
}

/** Traded Baostock days as daily Bars, the exchange's preclose as prev_close, volume in shares (Baostock's unit; in lots it would not be whole). */
export function baostockBars(code: string): Bars {
  const rows = readBaostock(code).filter((r) => r.traded)
  const bars = allocBars(rows.length)
  rows.forEach((r, i) => {
    bars.timestamp[i] = SH.midnightUtc(dayOf(r.date))
    bars.open[i] = r.open
    bars.high[i] = r.high
    bars.low[i] = r.low
    bars.close[i] = r.close
    bars.volume[i] = r.volumeShares
    bars.amount[i] = r.amount
    bars.prevClose[i] = r.preclose
  })
  return bars
}

/** Tushare qfq closes by local midnight timestamp. */
export function readTushareCloses(code: string): Map<number, number> {
  const [, ...lines] = readLines(`cn/tushare_qfq_daily/${code}.csv`)
  return new Map(
    lines.map((line) => {
      const [date, , close] = line.split(',')
      return [SH.midnightUtc(dayOf(date)), Number(close)]
    }),
  )
}

export function hikyuuBars(): Bars {
  const [, ...lines] = readLines('cn/hikyuu_test_data/csv/day_raw_SH600000.csv')
  const bars = allocBars(lines.length)
  lines.forEach((line, i) => {
    const [date, o, h, l, c, amountK, lots] = line.split(',')
    bars.timestamp[i] = SH.midnightUtc(dayOf(date))
    bars.open[i] = Number(o)
    bars.high[i] = Number(h)
    bars.low[i] = Number(l)
    bars.close[i] = Number(c)
    bars.volume[i] = Number(lots)
    bars.amount[i] = Number(amountK) * 1000
    bars.prevClose[i] = NaN
  })
  return bars
}

/** Hikyuu corporate actions in this service's per-share terms (送 and 转增 are both bonus shares). */
export function hikyuuActions(): { timestamp: number; date: string; action: CorporateAction }[] {
  const [, ...lines] = readLines('cn/hikyuu_test_data/csv/stkweight_SH600000.csv')
  return lines.map((line) => {
    const f = line.split(',')
    const [gift, rights, rightsPrice, cash, transfer] = f.slice(4, 9).map(Number)
    return {
      timestamp: SH.midnightUtc(dayOf(f[3])),
      date: f[3],
      action: {
        cashDividend: cash / 10,
        bonusRatio: (gift + transfer) / 10,
        rightsRatio: rights / 10,
        rightsPrice,
        splitRatio: 1,
      },
    }
  })
}

export interface HikyuuReference {
  mode: string
  date: string
  timestamp: number
  open: number
  high: number
  low: number
  close: number
}

export function hikyuuReference(): HikyuuReference[] {
  const [, ...lines] = readLines('cn/hikyuu_test_data/reference/hikyuu_test_getKData_recover_SH600000.csv')
  return lines.map((line) => {
    const [mode, , date, o, h, l, c] = line.split(',')
    return {
      mode,
      date,
      timestamp: SH.midnightUtc(dayOf(date)),
      open: Number(o),
      high: Number(h),
      low: Number(l),
      close: Number(c),
    }
  })
}
