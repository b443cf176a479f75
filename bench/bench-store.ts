/** @module The benchmark store (the demo data set plus 624,000 1m bars of one symbol, W2-W4), and the daily price walk the store benches write. */
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { buildDemo } from '../src/cli/demo-command.js'
import { allocBars, type Bars } from '../src/domain/bars.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { openStores } from '../src/store/backends.js'

/** The demo store plus 2,600 days of 1m bars (624,000) for 601398.SH, so W4 can ask 10,000 60m bars. */
export async function buildBenchStore(db: string): Promise<{ key: string; firstMinute: number; lastMinute: number }> {
  await buildDemo(db)
  const sh = MARKETS.SH
  const ts: number[] = []
  for (let d = daysFromCivil(2015, 1, 5); ts.length < 2600 * 240; d++) {
    if (isoWeekday(d) >= 5) continue
    const midnight = sh.zone.midnightUtc(d)
    for (const s of sh.sessions) for (let m = s.open; m < s.close; m++) ts.push(midnight + m * 60_000)
  }
  const bars = allocBars(ts.length)
  let p = 5
  ts.forEach((t, i) => {
    const o = p
    p = Math.max(1, Math.round((p + (((i * 7919) % 7) - 3) / 100) * 100) / 100)
    bars.timestamp[i] = t
    bars.open[i] = o
    bars.close[i] = p
    bars.high[i] = Math.max(o, p) + 0.01
    bars.low[i] = Math.min(o, p) - 0.01
    bars.volume[i] = 100 + (i % 500)
    bars.amount[i] = Math.round(bars.volume[i] * 100 * p * 100) / 100
    bars.prevClose[i] = NaN
  })
  const { market: store, keys } = await openStores({ store: db, create: true })
  await store.write({
    instruments: [bareInstrument('601398.SH', { name: '工商银行', type: 'stock' })],
    bars: [{ symbol: '601398.SH', period: '1m', bars }],
    exFactors: [
      { symbol: '601398.SH', events: [{ timestamp: sh.zone.midnightUtc(daysFromCivil(2020, 7, 14)), exFactor: 1.05 }] },
    ],
  })
  const key = generateKey()
  // A quota no benchmark reaches: the limiter is measured, never refusing.
  await keys.createKey({ name: 'bench', hash: hashKey(key), ratePerMin: 1e12, burst: 1e12 })
  await Promise.all([store.close(), keys.close()])
  return { key, firstMinute: ts[0], lastMinute: ts[ts.length - 1] }
}

/** `days` daily bars of an SH symbol from 2010 (weekdays), a price walk of its own per `seed`. */
export function dailyWalk(days: number, seed = 0): Bars {
  const bars = allocBars(days)
  let price = 20 + seed / 10
  for (let d = daysFromCivil(2010, 1, 4), k = 0; k < days; d++) {
    if (isoWeekday(d) >= 5) continue
    const open = price
    price = Math.max(1, Math.round(price * (1 + ((((k + seed) * 7919) % 11) - 5) / 500) * 100) / 100)
    bars.timestamp[k] = MARKETS.SH.zone.midnightUtc(d)
    bars.open[k] = open
    bars.close[k] = price
    bars.high[k] = Math.max(open, price) + 0.05
    bars.low[k] = Math.min(open, price) - 0.05
    bars.volume[k] = 1e6 + k
    bars.amount[k] = Math.round(bars.volume[k] * price * 100) / 100
    bars.prevClose[k] = NaN
    k++
  }
  return bars
}
