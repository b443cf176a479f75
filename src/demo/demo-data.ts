/** @module A deterministic demo store: ten real tickers with synthetic prices, holidays and corporate actions. */
import { allocBars, concatBars, type Bars } from '../domain/bars.js'
import { NO_ACTION, referencePrice, type CorporateAction, type ExFactorEvent } from '../domain/ex-factors.js'
import { bareInstrument, type Instrument, type SecurityType } from '../domain/instrument.js'
import { MARKETS, parseSymbol, type Market, type Region } from '../domain/market.js'
import { civilFromDays, daysFromCivil, isoWeekday } from '../domain/time-zone.js'
import type { WriteBatch } from '../store/market-store.js'

interface DemoAction extends Partial<CorporateAction> {
  readonly date: string
}
interface DemoSpec {
  readonly symbol: string
  readonly name: string
  readonly type: SecurityType
  readonly listingDate: string
  readonly tick: number
  readonly startPrice: number
  readonly totalShares: number
  readonly floatShares: number
  /** Typical daily volume in the market's unit (lots for CN, shares for HK and US). */
  readonly volume: number
  readonly actions: readonly DemoAction[]
}

const yearly = (mmdd: string, cash: number, from = 2015, to = 2025): DemoAction[] =>
  Array.from({ length: to - from + 1 }, (_, i) => ({
    date: `${from + i}-${mmdd}`,
    cashDividend: cash * (1 + i * 0.05),
  }))
const quarterly = (days: readonly string[], cash: number, from = 2015, to = 2025): DemoAction[] =>
  Array.from({ length: to - from + 1 }, (_, i) =>
    days.map((d) => ({ date: `${from + i}-${d}`, cashDividend: cash * (1 + i * 0.04) })),
  ).flat()

/** Real tickers; synthetic prices. Every kind of corporate action appears at least once. */
export const DEMO_SPECS: readonly DemoSpec[] = [
  {
    symbol: '600000.SH',
    name: '浦发银行',
    type: 'stock',
    listingDate: '1999-11-10',
    tick: 0.01,
    startPrice: 15.2,
    totalShares: 29_352_000_000,
    floatShares: 29_352_000_000,
    volume: 400_000,
    actions: [...yearly('07-15', 0.5), { date: '2016-06-23', bonusRatio: 0.3, cashDividend: 0.2 }],
  },
  {
    symbol: '600519.SH',
    name: '贵州茅台',
    type: 'stock',
    listingDate: '2001-08-27',
    tick: 0.01,
    startPrice: 190,
    totalShares: 1_256_197_800,
    floatShares: 1_256_197_800,
    volume: 30_000,
    actions: [...yearly('06-24', 4.3), { date: '2016-07-01', bonusRatio: 0.1 }],
  },
  {
    symbol: '601318.SH',
    name: '中国平安',
    type: 'stock',
    listingDate: '2007-03-01',
    tick: 0.01,
    startPrice: 70,
    totalShares: 18_210_234_607,
    floatShares: 10_832_664_498,
    volume: 600_000,
    actions: [...yearly('07-10', 1.2), { date: '2015-07-27', bonusRatio: 1, cashDividend: 0.5 }],
  },
  {
    symbol: '000001.SZ',
    name: '平安银行',
    type: 'stock',
    listingDate: '1991-04-03',
    tick: 0.01,
    startPrice: 15,
    totalShares: 19_405_918_198,
    floatShares: 19_405_600_653,
    volume: 800_000,
    actions: [...yearly('06-14', 0.15), { date: '2017-09-20', rightsRatio: 0.3, rightsPrice: 6.5 }],
  },
  {
    symbol: '000858.SZ',
    name: '五粮液',
    type: 'stock',
    listingDate: '1998-04-27',
    tick: 0.01,
    startPrice: 24,
    totalShares: 3_881_608_005,
    floatShares: 3_881_608_005,
    volume: 150_000,
    actions: yearly('07-05', 0.8),
  },
  {
    symbol: '510300.SH',
    name: '沪深300ETF',
    type: 'etf',
    listingDate: '2012-05-28',
    tick: 0.001,
    startPrice: 3.5,
    totalShares: 36_000_000_000,
    floatShares: 36_000_000_000,
    volume: 3_000_000,
    actions: yearly('01-18', 0.05, 2016),
  },
  {
    symbol: '00700.HK',
    name: '腾讯控股',
    type: 'stock',
    listingDate: '2004-06-16',
    tick: 0.2,
    startPrice: 120,
    totalShares: 9_170_000_000,
    floatShares: 9_170_000_000,
    volume: 18_000_000,
    actions: yearly('05-17', 1.1),
  },
  {
    symbol: '09988.HK',
    name: '阿里巴巴-W',
    type: 'stock',
    listingDate: '2019-11-26',
    tick: 0.05,
    startPrice: 180,
    totalShares: 19_060_000_000,
    floatShares: 19_060_000_000,
    volume: 25_000_000,
    actions: [
      { date: '2023-12-21', cashDividend: 0.78 },
      { date: '2024-06-13', cashDividend: 0.97 },
    ],
  },
  {
    symbol: 'AAPL.US',
    name: 'Apple Inc.',
    type: 'stock',
    listingDate: '1980-12-12',
    tick: 0.01,
    startPrice: 420,
    totalShares: 14_840_390_000,
    floatShares: 14_820_000_000,
    volume: 55_000_000,
    actions: [...quarterly(['02-06', '05-07', '08-07', '11-06'], 0.2), { date: '2020-08-31', splitRatio: 4 }],
  },
  {
    symbol: 'SPY.US',
    name: 'SPDR S&P 500 ETF Trust',
    type: 'etf',
    listingDate: '1993-01-29',
    tick: 0.01,
    startPrice: 205,
    totalShares: 920_000_000,
    floatShares: 920_000_000,
    volume: 80_000_000,
    actions: quarterly(['03-20', '06-19', '09-18', '12-18'], 1.1),
  },
]

export const DEMO_FIRST_DAY = daysFromCivil(2015, 1, 5)
export const DEMO_LAST_DAY = daysFromCivil(2025, 12, 31)
export const DEMO_MINUTE_DAYS = 20

/** Lunar new year's day, 2015-2025 (the CN exchanges close for about a week, HK for three days). */
const LUNAR_NEW_YEAR = [
  '2015-02-19',
  '2016-02-08',
  '2017-01-28',
  '2018-02-16',
  '2019-02-05',
  '2020-01-25',
  '2021-02-12',
  '2022-02-01',
  '2023-01-22',
  '2024-02-10',
  '2025-01-29',
]

function dayOf(date: string): number {
  const [y, m, d] = date.split('-').map(Number)
  return daysFromCivil(y, m, d)
}

/** Major exchange holidays by region (fixed-date ones, lunar new year, US Thanksgiving). */
export function isHoliday(region: Region, day: number): boolean {
  const { year, month, day: dom } = civilFromDays(day)
  const md = month * 100 + dom
  const lunar = LUNAR_NEW_YEAR.map(dayOf).find((d) => civilFromDays(d).year === year)
  const sinceLunar = lunar === undefined ? -99 : day - lunar
  if (region === 'CN')
    return md === 101 || (md >= 501 && md <= 503) || (md >= 1001 && md <= 1007) || (sinceLunar >= -1 && sinceLunar <= 5)
  if (region === 'HK')
    return md === 101 || md === 701 || md === 1001 || md === 1225 || md === 1226 || (sinceLunar >= 0 && sinceLunar <= 2)
  const thanksgiving = month === 11 && isoWeekday(day) === 3 && dom >= 22 && dom <= 28
  return md === 101 || md === 704 || md === 1225 || thanksgiving
}

export function tradingDaysOf(market: Market, first = DEMO_FIRST_DAY, last = DEMO_LAST_DAY): number[] {
  const days: number[] = []
  for (let d = first; d <= last; d++) if (isoWeekday(d) < 5 && !isHoliday(market.region, d)) days.push(d)
  return days
}

/** mulberry32: a small, fast, seedable PRNG, so the demo is the same on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** TickFlow's ext.name_en, on CN instruments only. */
const NAME_EN: Readonly<Record<string, string>> = {
  '600000.SH': 'Shanghai Pudong Development Bank',
  '600519.SH': 'Kweichow Moutai',
  '601318.SH': 'Ping An Insurance',
  '000001.SZ': 'Ping An Bank',
  '000858.SZ': 'Wuliangye Yibin',
  '510300.SH': 'CSI 300 ETF',
}

function seedOf(symbol: string): number {
  let h = 2166136261
  for (const ch of symbol) h = Math.imul(h ^ ch.charCodeAt(0), 16777619)
  return h >>> 0
}

export interface DemoSeries {
  readonly instrument: Instrument
  readonly daily: Bars
  readonly minute: Bars
  readonly events: ExFactorEvent[]
}

const roundTo = (x: number, tick: number) => {
  const decimals = Math.max(0, Math.ceil(-Math.log10(tick) - 1e-9))
  return Number((Math.round(x / tick) * tick).toFixed(decimals))
}

export function demoSeries(spec: DemoSpec): DemoSeries {
  const { exchange } = parseSymbol(spec.symbol)
  const market = MARKETS[exchange]
  const rand = seededRandom(seedOf(spec.symbol))
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand())
  const days = tradingDaysOf(market)
  const actions = new Map(spec.actions.map((a) => [dayOf(a.date), { ...NO_ACTION, ...a }]))
  const shareUnit = market.region === 'CN' ? 100 : 1
  const minuteDays = new Set(days.slice(-DEMO_MINUTE_DAYS))
  const daily = allocBars(days.length)
  const minuteParts: Bars[] = []
  const events: ExFactorEvent[] = []
  let last = spec.startPrice
  let pendingAction: CorporateAction | undefined
  days.forEach((day, i) => {
    // An action whose date was a holiday or weekend applies on the next trading day.
    for (let d = i === 0 ? day : days[i - 1] + 1; d <= day; d++) if (actions.has(d)) pendingAction = actions.get(d)
    let prevClose = last
    if (pendingAction && i > 0) {
      prevClose = roundTo(referencePrice(last, pendingAction), spec.tick)
      events.push({ timestamp: market.zone.midnightUtc(day), exFactor: last / prevClose })
    }
    pendingAction = undefined
    const limit = market.region === 'CN' ? 0.1 : 0.3
    const clampMove = (x: number) => Math.min(prevClose * (1 + limit), Math.max(prevClose * (1 - limit), x))
    const open = roundTo(clampMove(prevClose * (1 + normal() * 0.004)), spec.tick)
    const close = roundTo(clampMove(open * (1 + normal() * 0.015 + 0.0002)), spec.tick)
    const high = roundTo(clampMove(Math.max(open, close) * (1 + Math.abs(normal()) * 0.006)), spec.tick)
    const low = roundTo(clampMove(Math.min(open, close) * (1 - Math.abs(normal()) * 0.006)), spec.tick)
    daily.timestamp[i] = market.zone.midnightUtc(day)
    daily.open[i] = open
    daily.close[i] = close
    daily.high[i] = Math.max(high, open, close)
    daily.low[i] = Math.min(low, open, close)
    daily.volume[i] = Math.round(spec.volume * Math.exp(normal() * 0.35))
    daily.amount[i] = Number(((daily.volume[i] * shareUnit * (open + close)) / 2).toFixed(2))
    daily.prevClose[i] = prevClose
    if (minuteDays.has(day)) {
      minuteParts.push(minuteBars(market, day, daily, i, rand, spec.tick, shareUnit))
    }
    last = close
  })
  const instrument = bareInstrument(spec.symbol, {
    name: spec.name,
    nameEn: NAME_EN[spec.symbol] ?? null,
    lotSize: market.region === 'HK' ? 100 : null,
    type: spec.type,
    listingDate: spec.listingDate,
    tickSize: spec.tick,
    totalShares: spec.totalShares,
    floatShares: spec.floatShares,
    // Daily price limits exist on the CN exchanges only; HK and US have none, so null there.
    limitUp: market.region === 'CN' ? roundTo(last * 1.1, spec.tick) : null,
    limitDown: market.region === 'CN' ? roundTo(last * 0.9, spec.tick) : null,
  })
  return { instrument, daily, minute: concatBars(minuteParts), events }
}

/**
 * One day of 1m bars bridging the day's open to its close; the daily bar of that day is then set
 * to their aggregate, so 1m and 1d agree. prev_close stays NaN: the service fills it at read time.
 */
function minuteBars(
  market: Market,
  day: number,
  daily: Bars,
  i: number,
  rand: () => number,
  tick: number,
  shareUnit: number,
): Bars {
  const { year, month, day: dom } = civilFromDays(day)
  const starts: number[] = []
  for (const s of market.sessions)
    for (let m = s.open; m < s.close; m++) starts.push(market.zone.utcOf(year, month, dom, m))
  const n = starts.length
  const bars = allocBars(n)
  const open = daily.open[i]
  const close = daily.close[i]
  let price = open
  for (let k = 0; k < n; k++) {
    const target = open + ((close - open) * (k + 1)) / n
    const next = k === n - 1 ? close : roundTo(Math.max(tick, target + (rand() - 0.5) * open * 0.004), tick)
    bars.timestamp[k] = starts[k]
    bars.open[k] = price
    bars.close[k] = next
    bars.high[k] = roundTo(Math.max(price, next) + tick * Math.floor(rand() * 3), tick)
    bars.low[k] = Math.max(tick, roundTo(Math.min(price, next) - tick * Math.floor(rand() * 3), tick))
    bars.volume[k] = Math.max(1, Math.round((daily.volume[i] / n) * (0.5 + rand())))
    bars.amount[k] = Number(((bars.volume[k] * shareUnit * (bars.open[k] + bars.close[k])) / 2).toFixed(2))
    bars.prevClose[k] = NaN
    price = next
  }
  let high = -Infinity
  let low = Infinity
  let volume = 0
  let amount = 0
  for (let k = 0; k < n; k++) {
    high = Math.max(high, bars.high[k])
    low = Math.min(low, bars.low[k])
    volume += bars.volume[k]
    amount += bars.amount[k]
  }
  daily.high[i] = high
  daily.low[i] = low
  daily.volume[i] = volume
  daily.amount[i] = Number(amount.toFixed(2))
  return bars
}

/** The whole demo as one write batch. */
export function demoBatch(): WriteBatch {
  const series = DEMO_SPECS.map(demoSeries)
  return {
    instruments: series.map((s) => s.instrument),
    bars: series.flatMap((s) => [
      { symbol: s.instrument.symbol, period: '1d' as const, bars: s.daily },
      { symbol: s.instrument.symbol, period: '1m' as const, bars: s.minute },
    ]),
    exFactors: series.map((s) => ({ symbol: s.instrument.symbol, events: s.events })),
  }
}
