/** @module Kline periods: which are stored, which are derived and from what. */

export const PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m', '1d', '1w', '1M', '1Q', '1Y'] as const
export type Period = (typeof PERIODS)[number]
/** Periods a Store keeps; every other period is derived in domain/aggregate.ts. */
export type StoredPeriod = Extract<Period, '1m' | '1d'>
export const STORED_PERIODS = ['1m', '1d'] as const satisfies readonly StoredPeriod[]
export type MinutePeriod = Extract<Period, '1m' | '5m' | '10m' | '15m' | '30m' | '60m'>
export type CalendarPeriod = Extract<Period, '1w' | '1M' | '1Q' | '1Y'>

export const MINUTES_OF = { '1m': 1, '5m': 5, '10m': 10, '15m': 15, '30m': 30, '60m': 60 } as const satisfies Record<
  MinutePeriod,
  number
>

export function isPeriod(value: string): value is Period {
  return (PERIODS as readonly string[]).includes(value)
}

export function isMinutePeriod(p: Period): p is MinutePeriod {
  return p in MINUTES_OF
}

/** The stored period a period is aggregated from (itself when stored). */
export function basePeriodOf(p: Period): StoredPeriod {
  return isMinutePeriod(p) ? '1m' : '1d'
}
