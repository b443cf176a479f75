/**
 * @module The full-market benchmark store: 5,000 A-share symbols x 20 years of daily bars and 300 of
 * them x 250 days of 1m bars, generated once into ./data/bench (never committed) and reused.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { openKeyStore, openStores } from '../src/store/backends.js'
import { allocBars, type Bars } from '../src/domain/bars.js'
import type { ExFactorEvent } from '../src/domain/ex-factors.js'
import { seededRandom } from '../src/demo/demo-data.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import type { StoreWriter } from '../src/store/market-store.js'

/** Bump when the generated data changes, so a stale store is rebuilt. */
const GENERATOR_VERSION = 3 // 2: stores carry rollup chunks (migration 5); 3: files made with a page map (auto_vacuum)

export interface FullMarketSpec {
  readonly dailySymbols: number
  readonly years: number
  readonly minuteSymbols: number
  readonly minuteDays: number
}

/**
 * The full market's sizes; `MDQ_BENCH_SYMBOLS` (daily), `MDQ_BENCH_YEARS`, `MDQ_BENCH_MINUTE_SYMBOLS`
 * and `MDQ_BENCH_MINUTE_DAYS` shrink it for a quick run.
 */
export function fullMarketSpec(env: NodeJS.ProcessEnv = process.env): FullMarketSpec {
  return {
    dailySymbols: Number(env.MDQ_BENCH_SYMBOLS ?? 5000),
    years: Number(env.MDQ_BENCH_YEARS ?? 20),
    minuteSymbols: Number(env.MDQ_BENCH_MINUTE_SYMBOLS ?? 300),
    minuteDays: Number(env.MDQ_BENCH_MINUTE_DAYS ?? 250),
  }
}

/** The spec as a label for figures and file names. */
export const specTag = (spec: FullMarketSpec): string =>
  `${spec.dailySymbols}x${spec.years}y-${spec.minuteSymbols}x${spec.minuteDays}d`

export interface FullMarketStore {
  /** The SQLite file (keys beside it, as the factory places them). */
  readonly db: string
  readonly key: string
  /** Daily symbols, ascending; the first `minuteSymbols` of them also have 1m bars. */
  readonly symbols: readonly string[]
  readonly minuteSymbols: readonly string[]
  readonly dailyBars: number
  readonly minuteBars: number
  /** First and last 1m bar of every minute symbol (they share one calendar). */
  readonly firstMinuteMs: number
  readonly lastMinuteMs: number
}

/** Symbol i: SH codes 600000.., then SZ codes 000001.. (half each). */
function symbolOf(i: number, n: number): string {
  const half = Math.ceil(n / 2)
  return i < half ? `${600000 + i}.SH` : `${String(1 + i - half).padStart(6, '0')}.SZ`
}

/**
 * A random walk in cents over the given bar starts; prev_close left to the reader (NaN). `step` is a
 * bar's largest move as a fraction of the price (4%: daily-like; a long 1m series wants far less).
 */
export function walk(
  timestamps: readonly number[],
  rnd: () => number,
  startCents: number,
  volumeScale: number,
  step = 0.04,
): Bars {
  const bars = allocBars(timestamps.length)
  let cents = startCents
  for (let i = 0; i < timestamps.length; i++) {
    const open = cents
    cents = Math.max(100, cents + Math.round((rnd() - 0.5) * cents * step))
    const high = Math.max(open, cents) + Math.round(rnd() * cents * 0.01)
    const low = Math.max(1, Math.min(open, cents) - Math.round(rnd() * cents * 0.01))
    const volume = Math.round(volumeScale * (0.5 + rnd()))
    bars.timestamp[i] = timestamps[i]
    bars.open[i] = open / 100
    bars.high[i] = high / 100
    bars.low[i] = low / 100
    bars.close[i] = cents / 100
    bars.volume[i] = volume
    bars.amount[i] = Math.round(volume * cents) / 100
    bars.prevClose[i] = NaN
  }
  return bars
}

function tradingDays(firstDay: number, count: number): number[] {
  const days: number[] = []
  for (let d = firstDay; days.length < count; d++) if (isoWeekday(d) < 5) days.push(d)
  return days
}

/** The trading days (SH calendar) of the daily bars, and the minutes of the last `minuteDays` of them. */
export interface FullMarketCalendar {
  readonly days: readonly number[]
  readonly dailyTs: readonly number[]
  readonly minuteTs: readonly number[]
}

export function fullMarketCalendar(spec: FullMarketSpec): FullMarketCalendar {
  const zone = MARKETS.SH.zone
  const days = tradingDays(daysFromCivil(2005, 1, 3), spec.years * 243)
  const minuteTs: number[] = []
  for (const d of days.slice(-spec.minuteDays))
    for (const s of MARKETS.SH.sessions)
      for (let m = s.open; m < s.close; m++) minuteTs.push(zone.midnightUtc(d) + m * 60_000)
  return { days, dailyTs: days.map((d) => zone.midnightUtc(d)), minuteTs }
}

export const fullMarketSymbols = (spec: FullMarketSpec): string[] =>
  Array.from({ length: spec.dailySymbols }, (_, i) => symbolOf(i, spec.dailySymbols))

/** One symbol's generated data: daily bars, a dividend a year, and 1m bars for the first `minuteSymbols`. */
export interface SymbolSeries {
  readonly symbol: string
  readonly daily: Bars
  readonly events: readonly ExFactorEvent[]
  readonly minutes?: Bars
}

/** Every symbol's data in symbol order, generated one at a time (seeded: every run and store the same). */
export function* fullMarketSeries(spec: FullMarketSpec, cal: FullMarketCalendar): Generator<SymbolSeries> {
  const symbols = fullMarketSymbols(spec)
  for (let i = 0; i < symbols.length; i++) {
    const rnd = seededRandom(i + 1)
    const daily = walk(cal.dailyTs, rnd, 500 + Math.round(rnd() * 5000), 1e6)
    // One cash dividend a year (about 1% of the price): factors that change every year.
    const events: ExFactorEvent[] = []
    for (let y = 1; y < spec.years; y++) events.push({ timestamp: cal.dailyTs[y * 243 + 100], exFactor: 1.01 })
    const minutes =
      i < spec.minuteSymbols
        ? walk(cal.minuteTs, rnd, Math.round(daily.close[daily.close.length - spec.minuteDays - 1] * 100), 1e4)
        : undefined
    yield { symbol: symbols[i], daily, events, minutes }
  }
}

/** Writes every symbol's instrument and data through one writer (not committed). */
export async function writeFullMarket(
  writer: StoreWriter,
  spec: FullMarketSpec,
  cal: FullMarketCalendar,
  each?: (series: SymbolSeries) => Promise<void>,
): Promise<void> {
  await writer.putInstruments(
    fullMarketSymbols(spec).map((s, i) => bareInstrument(s, { name: `Bench ${i}`, type: 'stock' })),
  )
  for (const series of fullMarketSeries(spec, cal)) {
    await writer.putBars(series.symbol, '1d', series.daily)
    await writer.putExFactors(series.symbol, series.events)
    if (series.minutes) await writer.putBars(series.symbol, '1m', series.minutes)
    await each?.(series)
  }
}

/** Opens (or first generates) the full-market store under `dir`. */
export async function fullMarketStore(
  dir = join('data', 'bench'),
  spec: FullMarketSpec = fullMarketSpec(),
): Promise<FullMarketStore> {
  const tag = `v${GENERATOR_VERSION}-${specTag(spec)}`
  const db = join(dir, `full-market-${tag}.db`)
  const manifest = `${db}.json`
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as FullMarketStore
  mkdirSync(dir, { recursive: true })
  const keysDb = db.replace(/\.db$/, '.keys.db')
  for (const file of [db, keysDb]) for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })

  const cal = fullMarketCalendar(spec)
  const symbols = fullMarketSymbols(spec)
  const { market, keys } = await openStores({ store: db, create: true })
  const started = Date.now()
  const writer = await market.beginWrite()
  try {
    await writeFullMarket(writer, spec, cal)
    await writer.commit()
  } catch (err) {
    await writer.rollback()
    throw err
  }
  const key = generateKey()
  await keys.createKey({ name: 'bench', hash: hashKey(key), ratePerMin: 1e12, burst: 1e12 })
  await Promise.all([market.close(), keys.close()])
  const store: FullMarketStore = {
    db,
    key,
    symbols,
    minuteSymbols: symbols.slice(0, spec.minuteSymbols),
    dailyBars: symbols.length * cal.dailyTs.length,
    minuteBars: spec.minuteSymbols * cal.minuteTs.length,
    firstMinuteMs: cal.minuteTs[0],
    lastMinuteMs: cal.minuteTs[cal.minuteTs.length - 1],
  }
  writeFileSync(manifest, JSON.stringify(store))
  console.log(
    `generated ${db}: ${store.dailyBars.toLocaleString('en')} daily + ${store.minuteBars.toLocaleString('en')} 1m bars in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  return store
}

/** A copy of a store file and its keys in `dir`, as `<name>.db`: a bench that writes leaves the original untouched. */
export function copyStore(db: string, dir: string, name: string): string {
  const to = join(dir, `${name}.db`)
  copyFileSync(db, to)
  copyFileSync(db.replace(/\.db$/, '.keys.db'), to.replace(/\.db$/, '.keys.db'))
  return to
}

/** A new key of the ingest scope (the feed's) in the store's key store. */
export async function ingestKey(db: string): Promise<string> {
  const keys = await openKeyStore({ store: db })
  const key = generateKey()
  await keys.createKey({ name: 'bench feed', hash: hashKey(key), scope: 'ingest', ratePerMin: null, burst: null })
  await keys.close()
  return key
}
