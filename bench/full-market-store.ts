/**
 * @module The full-market benchmark store: 5,000 A-share symbols x 20 years of daily bars and 300 of
 * them x 250 days of 1m bars, generated once into ./data/bench (never committed) and reused.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { openStores } from '../src/store/backends.js'
import { allocBars, type Bars } from '../src/domain/bars.js'
import type { ExFactorEvent } from '../src/domain/ex-factors.js'
import { seededRandom } from '../src/demo/demo-data.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'

/** Bump when the generated data changes, so a stale store is rebuilt. */
const GENERATOR_VERSION = 2 // 2: stores carry rollup chunks (migration 5)

export interface FullMarketSpec {
  readonly dailySymbols: number
  readonly years: number
  readonly minuteSymbols: number
  readonly minuteDays: number
}

/** The sizes; `MDQ_BENCH_SYMBOLS` (daily) and `MDQ_BENCH_MINUTE_SYMBOLS` shrink it for a quick run. */
export function fullMarketSpec(env: NodeJS.ProcessEnv = process.env): FullMarketSpec {
  return {
    dailySymbols: Number(env.MDQ_BENCH_SYMBOLS ?? 5000),
    years: 20,
    minuteSymbols: Number(env.MDQ_BENCH_MINUTE_SYMBOLS ?? 300),
    minuteDays: 250,
  }
}

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

/** Opens (or first generates) the full-market store under `dir`. */
export async function fullMarketStore(
  dir = join('data', 'bench'),
  spec: FullMarketSpec = fullMarketSpec(),
): Promise<FullMarketStore> {
  const tag = `v${GENERATOR_VERSION}-${spec.dailySymbols}x${spec.years}y-${spec.minuteSymbols}x${spec.minuteDays}d`
  const db = join(dir, `full-market-${tag}.db`)
  const manifest = `${db}.json`
  if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')) as FullMarketStore
  mkdirSync(dir, { recursive: true })
  const keysDb = db.replace(/\.db$/, '.keys.db')
  for (const file of [db, keysDb]) for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })

  const zone = MARKETS.SH.zone
  const days = tradingDays(daysFromCivil(2005, 1, 3), spec.years * 243)
  const dailyTs = days.map((d) => zone.midnightUtc(d))
  const minuteDays = days.slice(-spec.minuteDays)
  const minuteTs: number[] = []
  for (const d of minuteDays)
    for (const s of MARKETS.SH.sessions)
      for (let m = s.open; m < s.close; m++) minuteTs.push(zone.midnightUtc(d) + m * 60_000)

  const symbols = Array.from({ length: spec.dailySymbols }, (_, i) => symbolOf(i, spec.dailySymbols))
  const minuteSymbols = symbols.slice(0, spec.minuteSymbols)
  const { market, keys } = await openStores({ store: db, create: true })
  const started = Date.now()
  const writer = await market.beginWrite()
  try {
    await writer.putInstruments(symbols.map((s, i) => bareInstrument(s, { name: `Bench ${i}`, type: 'stock' })))
    for (let i = 0; i < symbols.length; i++) {
      const rnd = seededRandom(i + 1)
      const daily = walk(dailyTs, rnd, 500 + Math.round(rnd() * 5000), 1e6)
      await writer.putBars(symbols[i], '1d', daily)
      // One cash dividend a year (about 1% of the price): factors that change every year.
      const events: ExFactorEvent[] = []
      for (let y = 1; y < spec.years; y++) events.push({ timestamp: dailyTs[y * 243 + 100], exFactor: 1.01 })
      await writer.putExFactors(symbols[i], events)
      if (i < spec.minuteSymbols) {
        const minutes = walk(
          minuteTs,
          rnd,
          Math.round(daily.close[daily.close.length - minuteDays.length - 1] * 100),
          1e4,
        )
        await writer.putBars(symbols[i], '1m', minutes)
      }
    }
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
    minuteSymbols,
    dailyBars: symbols.length * dailyTs.length,
    minuteBars: minuteSymbols.length * minuteTs.length,
    firstMinuteMs: minuteTs[0],
    lastMinuteMs: minuteTs[minuteTs.length - 1],
  }
  writeFileSync(manifest, JSON.stringify(store))
  console.log(
    `generated ${db}: ${store.dailyBars.toLocaleString('en')} daily + ${store.minuteBars.toLocaleString('en')} 1m bars in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  return store
}
