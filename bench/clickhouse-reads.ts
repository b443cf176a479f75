/**
 * @module The ClickHouse bench's read workloads: each the same requests to mdq on SQLite, mdq on
 * ClickHouse and raw SQL over ClickHouse's HTTP interface (the DIY tables), in alternating rounds.
 */
import { mkdirSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { seededRandom } from '../src/demo/demo-data.js'
import { LONG_SYMBOL, type BenchData } from './clickhouse-data.js'
import { median } from './measure.js'
import { wrkFiles, wrkLoad, type WrkLoad } from './wrk.js'

/** One target of a workload: a base URL and the paths it is asked. */
export interface Target {
  readonly name: string
  readonly url: string
  readonly paths: readonly string[]
}

export const rawPath = (sql: string): string => `/?query=${encodeURIComponent(sql)}`
const COLUMNS = 'ts, open, high, low, close, volume, amount'

export interface Workloads {
  readonly latest: { mdq: string[]; raw: string[] }
  readonly batch: { mdq: string[]; raw: string[]; bounded: string[] }
  readonly windows: { mdq: string[]; raw: string[]; bounded: string[] }
  readonly hour: { mdq: string; raw: string }
  readonly bulk: { mdq: string[]; raw: string[]; barsPerBatch: number[] }
}

/** Every workload's requests, drawn once (seeded): the same for every target and run. */
export function workloads(data: BenchData): Workloads {
  const latest = {
    mdq: data.symbols.map((s) => `/v1/klines?symbol=${s}&period=1d&count=100&adjust=forward`),
    raw: data.symbols.map((s) =>
      rawPath(`SELECT ${COLUMNS} FROM raw_daily WHERE symbol = '${s}' ORDER BY ts DESC LIMIT 100 FORMAT JSONCompact`),
    ),
  }
  // The latest 100 daily bars of 100 symbols a request (a screen of a watchlist), the DIY way with
  // LIMIT BY, and with the 200 days before the last bar as a bound (100 trading days fit in them).
  const batch = { mdq: [] as string[], raw: [] as string[], bounded: [] as string[] }
  const since = data.cal.dailyTs[data.cal.dailyTs.length - 1] - 200 * 86_400_000
  for (let i = 0; i + 100 <= data.symbols.length; i += 100) {
    const some = data.symbols.slice(i, i + 100)
    batch.mdq.push(`/v1/klines/batch?symbols=${some.join(',')}&period=1d&count=100&adjust=forward`)
    const where = `symbol IN (${some.map((s) => `'${s}'`).join(', ')})`
    const sql = (bound: string) =>
      rawPath(
        `SELECT symbol, ${COLUMNS} FROM raw_daily WHERE ${where}${bound} ORDER BY symbol, ts DESC LIMIT 100 BY symbol FORMAT JSONCompact`,
      )
    batch.raw.push(sql(''))
    batch.bounded.push(sql(` AND ts >= ${since}`))
  }
  const rnd = seededRandom(42)
  const ts = data.cal.minuteTs
  const windows = { mdq: [] as string[], raw: [] as string[], bounded: [] as string[] }
  for (let i = 0; i < 400; i++) {
    const s = data.minuteSymbols[Math.floor(rnd() * data.minuteSymbols.length)]
    const end = ts[1000 + Math.floor(rnd() * (ts.length - 1000))]
    windows.mdq.push(`/v1/klines?symbol=${s}&period=1m&count=1000&adjust=forward&end_time=${end}`)
    const where = `symbol = '${s}' AND ts <= ${end}`
    windows.raw.push(
      rawPath(`SELECT ${COLUMNS} FROM raw_minute WHERE ${where} ORDER BY ts DESC LIMIT 1000 FORMAT JSONCompact`),
    )
    windows.bounded.push(
      rawPath(
        `SELECT ${COLUMNS} FROM raw_minute WHERE ${where} AND ts >= ${end - 14 * 86_400_000} ORDER BY ts DESC LIMIT 1000 FORMAT JSONCompact`,
      ),
    )
  }
  // CN sessions (UTC+8, 09:30-11:30 and 13:00-15:00), 60-minute buckets anchored at each session's open.
  const hour = {
    mdq: `/v1/klines?symbol=${LONG_SYMBOL}&period=60m&count=10000&adjust=forward`,
    raw: rawPath(`SELECT * FROM (
      SELECT t, argMin(open, ts), max(high), min(low), argMax(close, ts), sum(volume), sum(amount) FROM (
        SELECT ts, open, high, low, close, volume, amount,
          intDiv(ts + 28800000, 86400000) AS day, intDiv((ts + 28800000) % 86400000, 60000) AS m,
          day * 86400000 + if(m < 690, 570 + intDiv(m - 570, 60) * 60, 780 + intDiv(m - 780, 60) * 60) * 60000 - 28800000 AS t
        FROM raw_minute WHERE symbol = '${LONG_SYMBOL}')
      GROUP BY t ORDER BY t DESC LIMIT 10000) ORDER BY t FORMAT JSONCompact`),
  }
  const bulk = { mdq: [] as string[], raw: [] as string[], barsPerBatch: [] as number[] }
  for (let i = 0; i < data.symbols.length; i += 100) {
    const batch = data.symbols.slice(i, i + 100)
    bulk.mdq.push(`/v1/klines/batch?symbols=${batch.join(',')}&period=1d&adjust=forward&count=10000`)
    bulk.raw.push(
      rawPath(
        `SELECT symbol, ${COLUMNS} FROM raw_daily WHERE symbol IN (${batch.map((s) => `'${s}'`).join(', ')}) ORDER BY symbol, ts FORMAT JSONCompact`,
      ),
    )
    bulk.barsPerBatch.push(batch.length * data.cal.dailyTs.length)
  }
  return { latest, batch, windows, hour, bulk }
}

/** wrk loads of each target in turn, `rounds` times after a warm-up second each; each target's median round. */
export async function alternate(
  dir: string,
  key: string,
  targets: readonly Target[],
  seconds: number,
  rounds: number,
  connections = 32,
): Promise<WrkLoad[]> {
  const files = targets.map((t, i) => {
    const sub = join(dir, `t${i}-${Date.now()}`)
    mkdirSync(sub, { recursive: true })
    return wrkFiles(sub, t.paths)
  })
  for (const [i, t] of targets.entries()) await wrkLoad(t.url, key, files[i], 1, connections)
  const loads = targets.map(() => [] as WrkLoad[])
  for (let r = 0; r < rounds; r++)
    for (const [i, t] of targets.entries()) loads[i].push(await wrkLoad(t.url, key, files[i], seconds, connections))
  return loads.map((l) => [...l].sort((a, b) => a.perS - b.perS)[l.length >> 1])
}

/** One GET's body (status 200 required) and its ms. */
export function timedGet(agent: Agent, url: string, key: string): Promise<{ body: Buffer; ms: number }> {
  const t0 = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key, 'Accept-Encoding': 'identity' } }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () =>
        res.statusCode === 200
          ? resolve({ body: Buffer.concat(parts), ms: performance.now() - t0 })
          : reject(
              new Error(`${url.slice(0, 200)}: ${res.statusCode} ${Buffer.concat(parts).toString().slice(0, 300)}`),
            ),
      )
    })
    req.on('error', reject)
    req.end()
  })
}

/** Sequential requests, the targets taking turns; each target's median ms (after `warm` unmeasured turns). */
export async function sequential(
  targets: readonly { url: string; path: string }[],
  key: string,
  rounds: number,
  warm = 5,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times = targets.map(() => [] as number[])
  for (let r = 0; r < warm + rounds; r++)
    for (const [i, t] of targets.entries()) {
      const { ms } = await timedGet(agent, t.url + t.path, key)
      if (r >= warm) times[i].push(ms)
    }
  agent.destroy()
  return times.map((t) => median(t))
}

/** Each batch's body bytes from one whole pull over `connections` keep-alive connections. */
export async function batchBytes(
  url: string,
  paths: readonly string[],
  key: string,
  connections = 8,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const bytes: number[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < paths.length) {
        const i = next++
        bytes[i] = (await timedGet(agent, url + paths[i], key)).body.length
      }
    }),
  )
  agent.destroy()
  return bytes
}

/** Bars a second of a pull: wrk's bytes walked along the batches it asked in turn (answers in flight count by the share read). */
export function pulledBars(load: WrkLoad, bytes: readonly number[], bars: readonly number[]): number {
  let total = 0
  for (let left = load.bytes, i = 0; left > 0; i = (i + 1) % bytes.length) {
    total += Math.min(1, left / bytes[i]) * bars[i]
    left -= bytes[i]
  }
  return total / load.seconds
}

/** The whole-market pull of each target, `rounds` alternating rounds of `seconds`, wrk taking the batches in turn. */
export async function pulls(
  dir: string,
  key: string,
  targets: readonly Target[],
  bars: readonly number[],
  seconds: number,
  rounds: number,
): Promise<number[]> {
  const bytes: number[][] = []
  for (const t of targets) bytes.push(await batchBytes(t.url, t.paths, key))
  const files = targets.map((t, i) => {
    const sub = join(dir, `pull${i}-${Date.now()}`)
    mkdirSync(sub, { recursive: true })
    return wrkFiles(sub, t.paths)
  })
  const rates = targets.map(() => [] as number[])
  for (let r = 0; r < rounds; r++)
    for (const [i, t] of targets.entries()) {
      const load = await wrkLoad(t.url, key, files[i], seconds, 8, { order: 'cycle' })
      rates[i].push(pulledBars(load, bytes[i], bars))
    }
  return rates.map((r) => median(r))
}
