/** @module fast-check arbitraries for bars and ex-factor events, plus plain oracles. */
import fc from 'fast-check'
import { allocBars, type Bars } from '../../src/domain/bars.js'
import type { ExFactorEvent } from '../../src/domain/ex-factors.js'
import { MARKETS, type Exchange } from '../../src/domain/market.js'
import { DAY_MS, civilFromDays, isoWeekday } from '../../src/domain/time-zone.js'

/** Consistent OHLC bars from a random walk; low <= open, close <= high; prev_close = previous close. */
export function walkBars(timestamps: readonly number[], seed: readonly number[]): Bars {
  const bars = allocBars(timestamps.length)
  let last = 10 + (seed[0] ?? 0) * 100
  timestamps.forEach((t, i) => {
    const r = seed[i % seed.length] ?? 0.5
    const open = Math.max(0.01, last * (1 + (r - 0.5) * 0.02))
    const close = Math.max(0.01, open * (1 + (((r * 7919) % 1) - 0.5) * 0.02))
    bars.timestamp[i] = t
    bars.open[i] = round2(open)
    bars.close[i] = round2(close)
    bars.high[i] = round2(Math.max(open, close) * (1 + r * 0.01))
    bars.low[i] = round2(Math.min(open, close) * (1 - r * 0.01))
    bars.volume[i] = Math.floor(r * 1e6)
    bars.amount[i] = round2(bars.volume[i] * close)
    bars.prevClose[i] = i === 0 ? bars.open[i] : bars.close[i - 1]
    last = bars.close[i]
  })
  return bars
}

const round2 = (x: number) => Math.round(x * 100) / 100

/** Weekday local midnights of an exchange from a start day. */
export function tradingDays(exchange: Exchange, firstDay: number, n: number): number[] {
  const zone = MARKETS[exchange].zone
  const out: number[] = []
  for (let d = firstDay; out.length < n; d++) if (isoWeekday(d) < 5) out.push(zone.midnightUtc(d))
  return out
}

/** Every 1m bar start of the regular sessions of the given local days. */
export function sessionMinutes(exchange: Exchange, days: readonly number[]): number[] {
  const { zone, sessions } = MARKETS[exchange]
  const out: number[] = []
  for (const d of days) {
    const { year, month, day } = civilFromDays(Math.round((d + zone.offsetMs(d)) / DAY_MS))
    for (const s of sessions) for (let m = s.open; m < s.close; m++) out.push(zone.utcOf(year, month, day, m))
  }
  return out
}

export const arbSeed = fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), {
  minLength: 1,
  maxLength: 50,
})

export const arbDailyCase = fc.record({
  exchange: fc.constantFrom<Exchange>('SH', 'HK', 'US'),
  firstDay: fc.integer({ min: 10_000, max: 20_000 }),
  n: fc.integer({ min: 1, max: 400 }),
  seed: arbSeed,
  eventPicks: fc.array(
    fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), f: fc.double({ min: 1.0001, max: 10, noNaN: true }) }),
    { maxLength: 8 },
  ),
})

/** Events on bar days picked by fraction, ascending; picks on one day merge into one event (the store keys events by day). */
export function pickEvents(ts: Float64Array, picks: readonly { at: number; f: number }[]): ExFactorEvent[] {
  const byDay = new Map<number, number>()
  for (const p of picks) {
    const t = ts[Math.min(ts.length - 1, Math.floor(p.at * ts.length))]
    byDay.set(t, (byDay.get(t) ?? 1) * p.f)
  }
  return [...byDay].map(([timestamp, exFactor]) => ({ timestamp, exFactor })).sort((a, b) => a.timestamp - b.timestamp)
}
