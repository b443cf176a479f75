/** @module Data of the ClickHouse kill test: generation G's bars carry G in every price, so a mix shows. */
import { allocBars, barCount, type Bars } from '../../src/domain/bars.js'

export const KILL_SYMBOLS = ['600000.SH', '600519.SH', 'AAPL.US', '00700.HK'] as const
export const KILL_BARS = 20_000
const T0 = Date.UTC(2024, 0, 2)

/** Generation g: KILL_BARS 1m bars (one fewer per generation, so a count mix shows too) priced g*1000 + i/100. */
export function generationBars(g: number): Bars {
  const n = KILL_BARS - g
  const b = allocBars(n)
  for (let i = 0; i < n; i++) {
    const p = g * 1000 + (i % 997) / 100
    b.timestamp[i] = T0 + i * 60_000
    b.open[i] = b.high[i] = b.low[i] = b.close[i] = p
    b.prevClose[i] = NaN
    b.volume[i] = i
    b.amount[i] = g
  }
  return b
}

/** The one generation a read answer is wholly of, or a description of the mix. */
export function generationOf(bars: Bars): number | string {
  const n = barCount(bars)
  if (n === 0) return 'empty'
  const g = bars.amount[0]
  for (let i = 0; i < n; i++) if (bars.amount[i] !== g || Math.floor(bars.close[i] / 1000) !== g) return `mixed at ${i}`
  return n === KILL_BARS - g ? g : `generation ${g} with ${n} bars`
}
