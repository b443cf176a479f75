/**
 * @module The ClickHouse bench's write workloads: an end-of-day import (one daily bar for every
 * symbol) through `mdq import`, one-minute appends (one 1m bar for many symbols) through the CLI and
 * through the writer API a live ingest uses, reads' latency meanwhile, and the parts they leave.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { allocBars, type Bars } from '../src/domain/bars.js'
import { MARKETS } from '../src/domain/market.js'
import { isoWeekday } from '../src/domain/time-zone.js'
import type { MarketStore } from '../src/store/market-store.js'
import { clickhouseSql } from '../test/helpers/clickhouse.js'
import { median } from './measure.js'
import { mdqBin } from './servers.js'
import { wrkLoad, type WrkFiles, type WrkLoad } from './wrk.js'

/** The next CN trading day after local day `day`. */
export function nextTradingDay(day: number): number {
  let d = day + 1
  while (isoWeekday(d) >= 5) d++
  return d
}

/** The first `n` session minutes (UTC ms) of local day `day` on SH. */
export function sessionMinutesOf(day: number, n: number): number[] {
  const zone = MARKETS.SH.zone
  const out: number[] = []
  for (const s of MARKETS.SH.sessions)
    for (let m = s.open; m < s.close && out.length < n; m++) out.push(zone.midnightUtc(day) + m * 60_000)
  return out
}

/** A bar CSV with one row per symbol at `ts` (prices vary by symbol so no two rows are alike). */
export function oneRowCsv(path: string, symbols: readonly string[], ts: number): string {
  const rows = symbols.map((s, i) => {
    const p = (10 + (i % 500) / 100).toFixed(2)
    return `${s},${ts},${p},${(Number(p) + 0.05).toFixed(2)},${(Number(p) - 0.05).toFixed(2)},${p},1000,${(Number(p) * 1000).toFixed(2)}`
  })
  writeFileSync(path, ['symbol,time,open,high,low,close,volume,amount', ...rows].join('\n') + '\n')
  return path
}

/** One bar at `ts` (the appends' rows through the writer API). */
export function oneBar(ts: number, i: number): Bars {
  const b = allocBars(1)
  const p = 10 + (i % 500) / 100
  b.timestamp[0] = ts
  b.open[0] = b.close[0] = p
  b.high[0] = p + 0.05
  b.low[0] = p - 0.05
  b.volume[0] = 1000
  b.amount[0] = Math.round(p * 1000 * 100) / 100
  b.prevClose[0] = NaN
  return b
}

/** `mdq --store STORE import bars CSV --period P` in a child process; its wall ms (exit 0 required). */
export async function cliImport(store: string, csv: string, period: '1d' | '1m'): Promise<number> {
  const t0 = performance.now()
  const child = spawn(process.execPath, [mdqBin, '--store', store, 'import', 'bars', csv, '--period', period], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const [code] = (await once(child, 'exit')) as [number]
  if (code !== 0) throw new Error(`mdq import into ${store} exited ${code}: ${err}`)
  return performance.now() - t0
}

/** One append through the writer API: a bar at `ts` for each symbol, one import; its ms. */
export async function apiAppend(store: MarketStore, symbols: readonly string[], ts: number): Promise<number> {
  const t0 = performance.now()
  const w = await store.beginWrite()
  try {
    for (const [i, s] of symbols.entries()) await w.putBars(s, '1m', oneBar(ts, i))
    await w.commit()
  } catch (err) {
    await w.rollback()
    throw err
  }
  return performance.now() - t0
}

/** Seconds of each reads' load: long enough that a slow server still completes requests in every one. */
const LOAD_SECONDS = 2

/**
 * wrk loads one after another while `work` runs (closed loop, or paced at `perS`): its result and the
 * p99 of each load that completed requests.
 */
export async function loadsDuring<T>(
  url: string,
  key: string,
  files: WrkFiles,
  work: () => Promise<T>,
  perS?: number,
): Promise<{ result: T; p99s: number[]; loads: WrkLoad[] }> {
  let done = false
  const loads: WrkLoad[] = []
  const loop = (async () => {
    while (!done) loads.push(await wrkLoad(url, key, files, LOAD_SECONDS, 32, perS === undefined ? {} : { perS }))
  })()
  let result: T
  try {
    result = await work()
  } finally {
    done = true
    await loop // the load under way when the work ended counts: it ran during it
  }
  return { result, p99s: loads.filter((l) => l.requests > 0).map((l) => l.p99), loads }
}

/** Median p99 and rate of `n` loads as long as loadsDuring's (paced at `perS`, if given): the reads with nothing else running. */
export async function quietLoads(
  url: string,
  key: string,
  files: WrkFiles,
  perS?: number,
  n = 5,
): Promise<{ p99: number; perS: number }> {
  const loads: WrkLoad[] = []
  for (let i = 0; i < n; i++)
    loads.push(await wrkLoad(url, key, files, LOAD_SECONDS, 32, perS === undefined ? {} : { perS }))
  return { p99: median(loads.map((l) => l.p99)), perS: median(loads.map((l) => l.perS)) }
}

/** Parts of a table: active and inactive, count and bytes on disk. */
export interface Parts {
  readonly active: number
  readonly activeBytes: number
  readonly inactive: number
  readonly inactiveBytes: number
}

/** Parts of a table on one ClickHouse server. */
export async function parts(httpUrl: string, db: string, table: string): Promise<Parts> {
  const sql = `SELECT countIf(active), sumIf(bytes_on_disk, active), countIf(NOT active), sumIf(bytes_on_disk, NOT active) FROM system.parts WHERE database = '${db}' AND table = '${table}' FORMAT TSV`
  const [active, activeBytes, inactive, inactiveBytes] = (await clickhouseSql(httpUrl, sql)).split('\t').map(Number)
  return { active, activeBytes, inactive, inactiveBytes }
}
