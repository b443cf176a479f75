/**
 * @module The ClickHouse bench's data: the full market (full-market-store.ts, its scale from the same
 * env vars) plus one symbol with 2,600 days of 1m bars (10,400 60m bars), in a SQLite store
 * (generated once into ./data/bench, reused), in mdq's ClickHouse store and in a DIY ClickHouse table
 * of the kind a quant writes by hand (`MergeTree ORDER BY (symbol, ts)`, Float64 prices).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { openStores } from '../src/store/backends.js'
import { barCount, type Bars } from '../src/domain/bars.js'
import type { ExFactorEvent } from '../src/domain/ex-factors.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { seededRandom } from '../src/demo/demo-data.js'
import type { MarketStore, StoreWriter } from '../src/store/market-store.js'
import {
  fullMarketCalendar,
  fullMarketSeries,
  fullMarketSpec,
  fullMarketSymbols,
  specTag,
  walk,
  writeFullMarket,
  type FullMarketCalendar,
  type FullMarketSpec,
} from './full-market-store.js'

/** Bump when the generated data changes, so a stale SQLite store is rebuilt. */
const GENERATOR_VERSION = 1
/** The 60m workload's symbol: 2,600 CN trading days of 1m bars (624,000), 8 dividends. */
export const LONG_SYMBOL = '688981.SH'
const LONG_DAYS = 2600

export interface BenchData {
  readonly spec: FullMarketSpec
  readonly cal: FullMarketCalendar
  readonly symbols: readonly string[]
  readonly minuteSymbols: readonly string[]
  readonly longMinuteTs: readonly number[]
  /** Bars in each store (the long symbol's included). */
  readonly dailyBars: number
  readonly minuteBars: number
}

export function benchData(spec: FullMarketSpec = fullMarketSpec()): BenchData {
  const cal = fullMarketCalendar(spec)
  const symbols = fullMarketSymbols(spec)
  const long = longCalendar()
  return {
    spec,
    cal,
    symbols,
    minuteSymbols: symbols.slice(0, spec.minuteSymbols),
    longMinuteTs: long.minuteTs,
    dailyBars: symbols.length * cal.dailyTs.length + long.dailyTs.length,
    minuteBars: spec.minuteSymbols * cal.minuteTs.length + long.minuteTs.length,
  }
}

function longCalendar(): { dailyTs: number[]; minuteTs: number[] } {
  const zone = MARKETS.SH.zone
  const dailyTs: number[] = []
  const minuteTs: number[] = []
  for (let d = daysFromCivil(2013, 1, 7); dailyTs.length < LONG_DAYS; d++) {
    if (isoWeekday(d) >= 5) continue
    dailyTs.push(zone.midnightUtc(d))
    for (const s of MARKETS.SH.sessions)
      for (let m = s.open; m < s.close; m++) minuteTs.push(dailyTs.at(-1)! + m * 60_000)
  }
  return { dailyTs, minuteTs }
}

function longSeries(): { daily: Bars; minutes: Bars; events: ExFactorEvent[] } {
  const { dailyTs, minuteTs } = longCalendar()
  const rnd = seededRandom(7)
  // A 1m bar moves at most 0.4%, so 624,000 of them stay a plausible price.
  const minutes = walk(minuteTs, rnd, 1000, 1e4, 0.004)
  const daily = walk(dailyTs, rnd, 1000, 1e6)
  const events = Array.from({ length: 8 }, (_, k) => ({ timestamp: dailyTs[200 + k * 300], exFactor: 1.02 + k / 100 }))
  return { daily, minutes, events }
}

/** Everything the bench serves, through one writer (not committed); `each` sees every series written. */
export async function writeBenchData(
  writer: StoreWriter,
  data: BenchData,
  each?: (symbol: string, period: '1d' | '1m', bars: Bars) => Promise<void>,
): Promise<void> {
  await writeFullMarket(writer, data.spec, data.cal, async (s) => {
    await each?.(s.symbol, '1d', s.daily)
    if (s.minutes) await each?.(s.symbol, '1m', s.minutes)
  })
  const long = longSeries()
  await writer.putInstruments([bareInstrument(LONG_SYMBOL, { name: 'Bench long', type: 'stock' })])
  await writer.putBars(LONG_SYMBOL, '1d', long.daily)
  await writer.putBars(LONG_SYMBOL, '1m', long.minutes)
  await writer.putExFactors(LONG_SYMBOL, long.events)
  await each?.(LONG_SYMBOL, '1d', long.daily)
  await each?.(LONG_SYMBOL, '1m', long.minutes)
}

/** The SQLite store of the bench data (generated once under ./data/bench) and its API key. */
export async function sqliteBenchStore(
  data: BenchData,
  dir = join('data', 'bench'),
): Promise<{ db: string; key: string }> {
  const db = join(dir, `clickhouse-bench-v${GENERATOR_VERSION}-${specTag(data.spec)}.db`)
  const manifest = `${db}.json`
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as { db: string; key: string }
  mkdirSync(dir, { recursive: true })
  for (const file of [db, db.replace(/\.db$/, '.keys.db')])
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const t0 = performance.now()
  const { market, keys } = await openStores({ store: db, create: true })
  const key = await fillStore(market, data)
  await keys.createKey({ name: 'bench', hash: hashKey(key), ratePerMin: 1e12, burst: 1e12 })
  await Promise.all([market.close(), keys.close()])
  writeFileSync(manifest, JSON.stringify({ db, key }))
  console.log(`generated ${db} in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  return { db, key }
}

/** Writes the bench data into `market` in one import; returns a fresh API key for the caller to store. */
export async function fillStore(
  market: MarketStore,
  data: BenchData,
  each?: (symbol: string, period: '1d' | '1m', bars: Bars) => Promise<void>,
): Promise<string> {
  const writer = await market.beginWrite()
  try {
    await writeBenchData(writer, data, each)
    await writer.commit()
  } catch (err) {
    await writer.rollback()
    throw err
  }
  return generateKey()
}

/** The DIY tables' statements: one per period, as a quant would make them. */
export const RAW_TABLES = ['raw_daily', 'raw_minute'].map(
  (t) =>
    `CREATE TABLE ${t} (symbol String, ts Int64, open Float64, high Float64, low Float64, close Float64, volume Float64, amount Float64) ENGINE = MergeTree ORDER BY (symbol, ts)`,
)
const RAW_BLOCK_ROWS = 1_000_000

/** Rows for the DIY tables as TabSeparated text, inserted a million rows at a time. */
export class RawRows {
  readonly #pending = { raw_daily: [] as string[], raw_minute: [] as string[] }
  readonly #rows = { raw_daily: 0, raw_minute: 0 }
  ms = 0

  constructor(private readonly insert: (table: string, body: string) => Promise<void>) {}

  async add(symbol: string, period: '1d' | '1m', bars: Bars): Promise<void> {
    const table = period === '1d' ? 'raw_daily' : 'raw_minute'
    const { timestamp, open, high, low, close, volume, amount } = bars
    const lines = this.#pending[table]
    for (let i = 0; i < barCount(bars); i++)
      lines.push(
        `${symbol}\t${timestamp[i]}\t${open[i]}\t${high[i]}\t${low[i]}\t${close[i]}\t${volume[i]}\t${amount[i]}\n`,
      )
    this.#rows[table] += barCount(bars)
    if (this.#rows[table] >= RAW_BLOCK_ROWS) await this.#flush(table)
  }

  async #flush(table: 'raw_daily' | 'raw_minute'): Promise<void> {
    const body = this.#pending[table].join('')
    this.#pending[table].length = 0
    this.#rows[table] = 0
    if (body === '') return
    const t0 = performance.now()
    await this.insert(table, body)
    this.ms += performance.now() - t0
  }

  async close(): Promise<void> {
    await this.#flush('raw_daily')
    await this.#flush('raw_minute')
  }
}

export { fullMarketSeries }
