// Store backends side by side: SQLite (the baseline) and ClickHouse (one real server, started here).
// Import rows/s of 1m bars through each store's writer, bytes per bar on disk, and uncached p50/p99
// of readKlines for 100 daily, 10,000 1m and 10,000 60m bars.
// Run: npm run bench -- store   (MDQ_BENCH_STORE_ROWS=2000000 for a quick run; default 10,000,000;
// MDQ_BENCH_STORE_READS=1000 for steadier p99s)
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { allocBars, type Bars } from '../src/domain/bars.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { MARKETS } from '../src/domain/market.js'
import type { Period } from '../src/domain/period.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { readKlines } from '../src/query/klines.js'
import { SymbolContexts } from '../src/query/symbol-context.js'
import { ClickHouseStores, parseClickHouseUrl } from '../src/store/clickhouse/clickhouse-stores.js'
import type { MarketStore } from '../src/store/market-store.js'
import { SqliteMarketStore } from '../src/store/sqlite/sqlite-market-store.js'
import { ClickHouseServer } from '../test/helpers/clickhouse.js'
import { dailyWalk } from './bench-store.js'
import { loadAverage, rate, row } from './measure.js'

const ROWS = Number(process.env.MDQ_BENCH_STORE_ROWS ?? 10_000_000)
const SYMBOLS = ['600000.SH', '600519.SH', '601398.SH', '601988.SH']
const DAILY = 3000
/** Reads per figure (`MDQ_BENCH_STORE_READS`): with 100, p99 is the second-slowest read. */
const READS = Number(process.env.MDQ_BENCH_STORE_READS ?? 100)

/** Writes `ROWS` 1m bars over SYMBOLS (CN sessions from 2010) and DAILY daily bars each; yields per symbol. */
function* minuteSeries(): Generator<[string, Bars]> {
  const sh = MARKETS.SH
  const per = Math.ceil(ROWS / SYMBOLS.length)
  for (const [s, symbol] of SYMBOLS.entries()) {
    const bars = allocBars(per)
    let price = 10 + s
    let k = 0
    for (let d = daysFromCivil(2010, 1, 4); k < per; d++) {
      if (isoWeekday(d) >= 5) continue
      const midnight = sh.zone.midnightUtc(d)
      for (const session of sh.sessions) {
        for (let m = session.open; m < session.close && k < per; m++, k++) {
          const open = price
          price = Math.max(1, Math.round((price + (((k * 7919) % 7) - 3) / 100) * 100) / 100)
          bars.timestamp[k] = midnight + m * 60_000
          bars.open[k] = open
          bars.close[k] = price
          bars.high[k] = Math.max(open, price) + 0.01
          bars.low[k] = Math.min(open, price) - 0.01
          bars.volume[k] = 100 + ((k * 31) % 900)
          bars.amount[k] = Math.round(bars.volume[k] * 100 * price * 100) / 100
          bars.prevClose[k] = NaN
        }
      }
    }
    yield [symbol, bars]
  }
}

/** Imports everything through one write transaction; returns ms spent in the store (generation excluded). */
async function importAll(store: MarketStore): Promise<number> {
  await store.write({
    instruments: SYMBOLS.map((s) => bareInstrument(s, { type: 'stock' })),
    bars: SYMBOLS.map((symbol) => ({ symbol, period: '1d', bars: dailyWalk(DAILY) })),
  })
  const w = await store.beginWrite()
  let ms = 0
  for (const [symbol, bars] of minuteSeries()) {
    const t0 = performance.now()
    await w.putBars(symbol, '1m', bars)
    ms += performance.now() - t0
  }
  const t0 = performance.now()
  await w.commit()
  return ms + performance.now() - t0
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/**
 * p50/p99 ms of readKlines on each store, with a random end time each call (no answer is asked twice):
 * the stores take turns with the same request, so load from other processes falls on all alike.
 */
async function latencies(
  stores: readonly MarketStore[],
  period: Period,
  count: number,
  endFrom: number,
  endTo: number,
): Promise<string[]> {
  const contexts = stores.map((store) => new SymbolContexts(store))
  const times: number[][] = stores.map(() => [])
  for (let i = 0; i < READS + 10; i++) {
    const endTime = Math.round(endFrom + Math.random() * (endTo - endFrom))
    for (const [k, store] of stores.entries()) {
      const t0 = performance.now()
      const bars = await readKlines(store, contexts[k], {
        symbol: SYMBOLS[i % SYMBOLS.length],
        period,
        count,
        endTime,
        adjust: 'none',
      })
      if (i >= 10) times[k].push(performance.now() - t0)
      if (bars.timestamp.length === 0) throw new Error(`no ${period} bars read`)
    }
  }
  return times.map((t) => {
    t.sort((a, b) => a - b)
    return `${quantile(t, 0.5).toFixed(2)} / ${quantile(t, 0.99).toFixed(2)} ms`
  })
}

const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-store-'))
const server = await ClickHouseServer.start()
try {
  console.log(
    `\nStore backends: ${ROWS.toLocaleString('en')} 1m bars over ${SYMBOLS.length} symbols (+${DAILY} daily bars each); reads: readKlines, random end time, p50 / p99 of ${READS}`,
  )
  row('', 'SQLite'.padEnd(20), 'ClickHouse 18.16')
  const db = join(dir, 'bench.db')
  const sqlite = SqliteMarketStore.open(db)
  const sqliteMs = await importAll(sqlite)
  const { market: ch, keys } = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('bench')))
  const chMs = await importAll(ch)
  row('import 1m bars (rows/s)', rate(ROWS, sqliteMs).padEnd(20), rate(ROWS, chMs))
  console.log(`  (load average after the imports: ${loadAverage()} on ${availableParallelism()} cores)`)

  await sqlite.close() // checkpoints the WAL into the file
  const vacuum = new Database(db) // as the import bench measures it: after VACUUM
  vacuum.exec('VACUUM')
  vacuum.close()
  const sqliteBytes = statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0)
  // Bytes on disk of the bars table once merged into one part (what it settles to).
  await fetch(`${server.httpUrl}/?query=${encodeURIComponent('OPTIMIZE TABLE bench.bars FINAL')}`, { method: 'POST' })
  const parts = await (
    await fetch(
      `${server.httpUrl}/?query=${encodeURIComponent("SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench' AND table = 'bars' AND active")}`,
    )
  ).text()
  const total = ROWS + DAILY * SYMBOLS.length
  row('bytes per bar on disk', (sqliteBytes / total).toFixed(1).padEnd(20), (Number(parts) / total).toFixed(1))

  const first = Date.UTC(2011, 0, 1)
  const last = Date.UTC(2010 + Math.max(2, Math.floor(ROWS / SYMBOLS.length / 240 / 250)), 0, 1)
  const sqliteReader = SqliteMarketStore.open(db)
  row('', 'SQLite'.padEnd(20), 'ClickHouse')
  // Other processes share this machine: the load beside the read figures says how much.
  console.log(`load average before the reads: ${loadAverage()}`)
  for (const [label, period, count] of [
    ['100 daily bars', '1d', 100],
    ['10,000 1m bars', '1m', 10_000],
    ['10,000 60m bars', '60m', 10_000],
  ] as const) {
    const [a, b] = await latencies([sqliteReader, ch], period, count, first, last)
    row(`readKlines ${label}`, a.padEnd(20), b)
  }
  console.log(`load average after the reads: ${loadAverage()}`)
  await sqliteReader.close()
  await keys.close()
  await ch.close()
} finally {
  await server.destroy()
  rmSync(dir, { recursive: true, force: true })
}
