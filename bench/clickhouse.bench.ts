// mdq over ClickHouse against the route it replaces: the same data in mdq's ClickHouse store, in a
// DIY `MergeTree ORDER BY (symbol, ts)` table queried with raw SQL over ClickHouse's HTTP interface,
// and in mdq's SQLite store; every read workload for the three (alternating rounds, wrk as the client),
// then an end-of-day import and one-minute appends with reads' p99 meanwhile (closed loop and paced at half
// the quiet rate, each beside its floor: a CPU hog of the cores the work keeps busy alone) and the parts left behind.
// Run: npm run bench -- clickhouse
// Scale: MDQ_BENCH_SYMBOLS (5000), MDQ_BENCH_YEARS (20), MDQ_BENCH_MINUTE_SYMBOLS (300), MDQ_BENCH_MINUTE_DAYS
// (250); BENCH_SECONDS (5) per load, BENCH_ROUNDS (3), BENCH_PULL_SECONDS (10), BENCH_HOUR_ROUNDS (21);
// BENCH_APPENDS (240) one-minute appends of BENCH_APPEND_SYMBOLS (5000) symbols; BENCH_ONLY: a comma list of
// latest, batch, windows, hour, bulk, writes (default all).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { hashKey } from '../src/auth/api-keys.js'
import { openStores } from '../src/store/backends.js'
import type { Bars } from '../src/domain/bars.js'
import { MARKETS } from '../src/domain/market.js'
import type { StoreWriter } from '../src/store/market-store.js'
import { ClickHouseStores, parseClickHouseUrl } from '../src/store/clickhouse/clickhouse-stores.js'
import { ClickHouseServer, clickhouseSql as sql } from '../test/helpers/clickhouse.js'
import { LONG_SYMBOL, RAW_TABLES, RawRows, benchData, sqliteBenchStore, writeBenchData } from './clickhouse-data.js'
import { alternate, pulls, sequential, timedGet, workloads, type Target } from './clickhouse-reads.js'
import {
  apiAppend,
  cliImport,
  loadsDuring,
  nextTradingDay,
  oneRowCsv,
  parts,
  type Parts,
  quietLoads,
  sessionMinutesOf,
} from './clickhouse-writes.js'
import { specTag } from './full-market-store.js'
import { busyCores, loadAverage, median, startHog } from './measure.js'
import { mdqBin, startServer, stopServer, type Server } from './servers.js'
import { Agent } from 'node:http'
import { requireWrk, wrkFiles } from './wrk.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PULL_SECONDS = Number(process.env.BENCH_PULL_SECONDS ?? 10)
const HOUR_ROUNDS = Number(process.env.BENCH_HOUR_ROUNDS ?? 21)
const APPENDS = Number(process.env.BENCH_APPENDS ?? 240)
const ONLY = new Set((process.env.BENCH_ONLY ?? 'latest,batch,windows,hour,bulk,writes').split(','))
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-ch-'))
const servers: Server[] = []
let server: ClickHouseServer | undefined

/** A writer whose calls are timed (the generator's own time left out of the import's figure). */
function timed(w: StoreWriter): StoreWriter & { ms: number } {
  const t: StoreWriter & { ms: number } = {
    ms: 0,
    putInstruments: (l) => time(() => w.putInstruments(l)),
    putBars: (s, p, b) => time(() => w.putBars(s, p, b)),
    putExFactors: (s, e) => time(() => w.putExFactors(s, e)),
    putUniverses: (l) => time(() => w.putUniverses(l)),
    deleteBars: (r) => time(() => w.deleteBars(r)),
    deleteExFactors: (r) => time(() => w.deleteExFactors(r)),
    deleteInstruments: (l) => time(() => w.deleteInstruments(l)),
    putFinancials: (b) => time(() => w.putFinancials(b)),
    deleteFinancials: (r) => time(() => w.deleteFinancials(r)),
    putLive: (l) => time(() => w.putLive(l)),
    putLiveQuotes: (l) => time(() => w.putLiveQuotes(l)),
    putDepth: (l) => time(() => w.putDepth(l)),
    commit: () => time(() => w.commit()),
    rollback: () => w.rollback(),
  }
  async function time(call: () => Promise<void>): Promise<void> {
    const t0 = performance.now()
    await call()
    t.ms += performance.now() - t0
  }
  return t
}

const mdqServe = (store: string) =>
  startServer([mdqBin, '--store', store, 'serve', '--port', '0', '--cache-mb', '0', '--rate-limit', 'off'])
/** A printed row: a wide first column (the workload), then the figures. */
const row = (...cells: (string | number)[]) =>
  console.log(cells.map((c, i) => String(c).padEnd(i === 0 ? 58 : 14)).join(''))
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ratio = (a: number, b: number) => (a / b).toFixed(2)
/** The median p99 of the loads run during a write ('none' when no load completed a request). */
/** Appends run alone first, to measure the cores they keep busy. */
const PROBE_APPENDS = 10
/** Appends one every PACE_MS, with the reads' p99 meanwhile, before the rest go back to back. */
const PACED_APPENDS = 10
const PACE_MS = 2_000
/** The longest a hog stands in for the appends beside the reads. */
const FLOOR_MS = 20_000

/** A CPU hog of `cores` for `ms`. */
async function hogFor(cores: number, ms: number): Promise<void> {
  const hog = await startHog(cores)
  await sleep(ms)
  hog.kill()
}

const tail = (p99s: readonly number[]) => (p99s.length ? median(p99s).toFixed(1) : 'none')
/** A row of reads' p99 alone: quiet, and the median of the loads during some work. */
const p99Row = (label: string, quiet: number, during: { p99s: readonly number[] }) =>
  row(label, '', '', '', quiet.toFixed(1), tail(during.p99s))

try {
  requireWrk()
  const data = benchData()
  const scale = `${specTag(data.spec)} + ${LONG_SYMBOL} (624,000 1m bars): ${fmt(data.dailyBars)} daily, ${fmt(data.minuteBars)} 1m bars`
  console.log(`\nClickHouse bench, scale ${scale}; ${availableParallelism()} cores; load ${loadAverage()}`)
  const sqlite = await sqliteBenchStore(data)
  const srv = await ClickHouseServer.start()
  server = srv
  const ch = srv.storeUrl('mdq')
  const version = await sql(srv.httpUrl, 'SELECT version()')

  // The history into mdq's ClickHouse store and the DIY tables, from one pass of the generator.
  const { market, keys } = await ClickHouseStores.open(parseClickHouseUrl(ch))
  for (const t of RAW_TABLES) await sql(srv.httpUrl, t)
  const raw = new RawRows(async (table, body) => void (await sql(srv.httpUrl, `INSERT INTO ${table} FORMAT TSV`, body)))
  const writer = timed(await market.beginWrite())
  await writeBenchData(writer, data, (symbol, period, bars: Bars) => raw.add(symbol, period, bars))
  await writer.commit()
  await raw.close()
  await keys.createKey({ name: 'bench', hash: hashKey(sqlite.key), ratePerMin: 1e12, burst: 1e12 })
  await Promise.all([market.close(), keys.close()])
  const t0 = performance.now()
  await srv.settled()
  console.log(
    `history import: mdq ClickHouse ${(writer.ms / 1000).toFixed(1)} s (writer calls), DIY tables ${(raw.ms / 1000).toFixed(1)} s (INSERTs of 1M rows); merges settled ${((performance.now() - t0) / 1000).toFixed(0)} s later; ClickHouse ${version}`,
  )
  // A small read's cost on the server grows with the active parts it searches (docs/benchmarks.md).
  const activeParts = await sql(
    srv.httpUrl,
    "SELECT concat(database, '.', table, ' ', toString(count())) FROM system.parts WHERE active AND table IN ('bars', 'raw_daily', 'raw_minute') GROUP BY database, table ORDER BY table",
  )
  console.log(`active parts: ${activeParts.split('\n').join(', ')}`)
  const key = sqlite.key
  const [onSqlite, onCh] = [await mdqServe(sqlite.db), await mdqServe(ch)]
  servers.push(onSqlite, onCh)
  const w = workloads(data)

  // Byte-identical answers first: a bench of wrong answers would measure nothing.
  const agent = new Agent({ keepAlive: true })
  for (const path of [
    w.latest.mdq[0],
    w.latest.mdq.at(-1)!,
    w.batch.mdq[0],
    ...w.windows.mdq.slice(0, 20),
    w.hour.mdq,
    w.bulk.mdq[0],
  ]) {
    const [a, b] = [await timedGet(agent, onSqlite.url + path, key), await timedGet(agent, onCh.url + path, key)]
    if (!a.body.equals(b.body)) throw new Error(`mdq on ClickHouse answers ${path} unlike mdq on SQLite`)
  }
  agent.destroy()

  if (['latest', 'batch', 'windows', 'hour', 'bulk'].some((p) => ONLY.has(p))) {
    const rawUrl = srv.httpUrl
    const t = (name: string, url: string, paths: readonly string[]): Target => ({ name, url, paths })
    // The DIY route as a quant writes it, and the same SQL told to use one thread a query (as mdq does).
    const tuned = (paths: readonly string[]) => paths.map((p) => `${p}&max_threads=1`)
    console.log(
      `\nreads, scale ${scale}: ${ROUNDS} alternating rounds, medians; mdq --cache-mb 0, adjust=forward; raw SQL unadjusted (JSONCompact), server defaults; load ${loadAverage()}`,
    )
    row('workload', 'mdq SQLite', 'mdq CH', 'raw CH SQL', 'CH/raw', 'CH/SQLite', 'CH p99 ms', 'raw p99 ms')
    const loaded = async (
      label: string,
      paths: { mdq: string[]; raw: string[] },
      extra: [string, string[]][],
      connections?: number,
    ) => {
      const [sq, ch, raw, ...more] = await alternate(
        dir,
        key,
        [
          t('sqlite', onSqlite.url, paths.mdq),
          t('ch', onCh.url, paths.mdq),
          t('raw', rawUrl, paths.raw),
          ...extra.map(([name, p]) => t(name, rawUrl, p)),
        ],
        SECONDS,
        ROUNDS,
        connections,
      )
      row(
        label,
        fmt(sq.perS),
        fmt(ch.perS),
        fmt(raw.perS),
        ratio(ch.perS, raw.perS),
        ratio(ch.perS, sq.perS),
        ch.p99.toFixed(1),
        raw.p99.toFixed(1),
      )
      for (const [k, [name]] of extra.entries())
        row(
          `  raw, ${name} (req/s)`,
          '',
          '',
          fmt(more[k].perS),
          ratio(ch.perS, more[k].perS),
          '',
          '',
          more[k].p99.toFixed(1),
        )
    }
    if (ONLY.has('latest'))
      await loaded('latest 100 daily, random symbol (req/s)', w.latest, [['max_threads = 1', tuned(w.latest.raw)]])
    if (ONLY.has('batch'))
      // Four screens at a time: each request is 100 reads.
      await loaded(
        'latest 100 daily of 100 symbols a request, 4 at once (req/s)',
        w.batch,
        [['a 200-day bound', w.batch.bounded]],
        4,
      )
    if (ONLY.has('windows'))
      await loaded('random 1,000-bar 1m windows (req/s)', w.windows, [
        ['a 14-day bound', w.windows.bounded],
        ['a 14-day bound, max_threads = 1', tuned(w.windows.bounded)],
      ])
    if (ONLY.has('hour')) {
      const [hs, hc, hr] = await sequential(
        [
          { url: onSqlite.url, path: w.hour.mdq },
          { url: onCh.url, path: w.hour.mdq },
          { url: rawUrl, path: w.hour.raw },
        ],
        key,
        HOUR_ROUNDS,
      )
      row(
        '10,000 60m bars, one at a time (ms)',
        hs.toFixed(1),
        hc.toFixed(1),
        hr.toFixed(1),
        ratio(hr, hc),
        ratio(hs, hc),
      )
    }
    if (ONLY.has('bulk')) {
      const [bs, bc, br] = await pulls(
        dir,
        key,
        [t('sqlite', onSqlite.url, w.bulk.mdq), t('ch', onCh.url, w.bulk.mdq), t('raw', rawUrl, w.bulk.raw)],
        w.bulk.barsPerBatch,
        PULL_SECONDS,
        ROUNDS,
      )
      const m = (r: number) => `${(r / 1e6).toFixed(2)}M`
      row('whole market daily, 100 a request, 8 at once (bars/s)', m(bs), m(bc), m(br), ratio(bc, br), ratio(bc, bs))
    }
    console.log(`  (ratios: higher is better for mdq ClickHouse; 60m as raw ms / CH ms; load ${loadAverage()})`)
  }

  if (ONLY.has('writes')) {
    // Writes go to a copy of the SQLite store, served by its own mdq, so the cached store stays as generated.
    const copy = join(dir, 'writes.db')
    copyFileSync(sqlite.db, copy)
    copyFileSync(sqlite.db.replace(/\.db$/, '.keys.db'), join(dir, 'writes.keys.db'))
    const onCopy = await mdqServe(copy)
    servers.push(onCopy)
    mkdirSync(join(dir, 'reads'))
    const readFiles = wrkFiles(join(dir, 'reads'), w.latest.mdq)
    const day = nextTradingDay(data.cal.days.at(-1)!)
    const eod = oneRowCsv(join(dir, 'eod.csv'), data.symbols, MARKETS.SH.zone.midnightUtc(day))
    console.log(
      `\nwrites, scale ${scale}; reads meanwhile: latest 100 daily at 32 connections (2 s wrk loads, the median p99); load ${loadAverage()}`,
    )
    row('workload', 'mdq SQLite', 'mdq CH', 'raw CH SQL', 'CH p99 before', 'CH p99 during', 'SQLite p99 before/during')
    const quietCh = await quietLoads(onCh.url, key, readFiles)
    const quiet = { ch: quietCh.p99, sqlite: (await quietLoads(onCopy.url, key, readFiles)).p99 }
    // Reads below saturation too: paced at half the quiet rate, as a server with headroom sees them.
    const halfRate = quietCh.perS / 2
    const quietPaced = await quietLoads(onCh.url, key, readFiles, halfRate)
    const eodSqlite = await loadsDuring(onCopy.url, key, readFiles, () => cliImport(copy, eod, '1d'))
    const eodCh = await loadsDuring(onCh.url, key, readFiles, () => cliImport(ch, eod, '1d'))
    const eodRaw = performance.now()
    await sql(srv.httpUrl, 'INSERT INTO raw_daily FORMAT CSVWithNames', readFileSync(eod, 'utf8'))
    const eodRawMs = performance.now() - eodRaw
    // The floor: the same reads beside a process that only burns what the import keeps busy on its
    // own (the same file imported again alone, which changes no answer), for as long as it took.
    const eodAlone = await busyCores(() => cliImport(ch, eod, '1d'))
    const eodFloor = await loadsDuring(onCh.url, key, readFiles, () => hogFor(eodAlone.cores, eodCh.result))
    const eodPaced = await loadsDuring(onCh.url, key, readFiles, () => cliImport(ch, eod, '1d'), halfRate)
    const eodFloorPaced = await loadsDuring(
      onCh.url,
      key,
      readFiles,
      () => hogFor(eodAlone.cores, eodCh.result),
      halfRate,
    )
    row(
      `end-of-day import, ${fmt(data.symbols.length)} rows, mdq import (s)`,
      (eodSqlite.result / 1000).toFixed(2),
      (eodCh.result / 1000).toFixed(2),
      (eodRawMs / 1000).toFixed(2),
      quiet.ch.toFixed(1),
      tail(eodCh.p99s),
      `${quiet.sqlite.toFixed(1)} / ${tail(eodSqlite.p99s)}`,
    )
    p99Row(`  the same again, reads paced at ${Math.round(halfRate)}/s (half the quiet rate)`, quietPaced.p99, eodPaced)
    p99Row(`  floor: beside a CPU hog of the import's ${eodAlone.cores.toFixed(2)} cores`, quiet.ch, eodFloor)
    p99Row('  the same floor, reads paced at half the quiet rate', quietPaced.p99, eodFloorPaced)
    await srv.settled()

    const symbols = data.symbols.slice(0, Number(process.env.BENCH_APPEND_SYMBOLS ?? 5000))
    const minutes = sessionMinutesOf(day, APPENDS)
    const before = await parts(srv.httpUrl, 'mdq', 'bars')
    const blobsBefore = await parts(srv.httpUrl, 'mdq', 'blobs')
    const rawBefore = await parts(srv.httpUrl, 'default', 'raw_minute')
    const sqliteBefore = statSync(copy).size
    // The first three appends through the CLI (what an operator runs), the rest through the writer API (a live ingest).
    const cli = { sqlite: [] as number[], ch: [] as number[] }
    for (const ts of minutes.slice(0, 3)) {
      const csv = oneRowCsv(join(dir, `minute-${ts}.csv`), symbols, ts)
      cli.sqlite.push(await cliImport(copy, csv, '1m'))
      cli.ch.push(await cliImport(ch, csv, '1m'))
    }
    const stores = {
      sqlite: await openStores({ store: copy, create: false }),
      ch: await ClickHouseStores.open(parseClickHouseUrl(ch)),
    }
    const api = { sqlite: [] as number[], ch: [] as number[], raw: [] as number[] }
    // Reads are measured during mdq ClickHouse's appends alone (SQLite's and raw SQL's run apart),
    // after the cores the appends keep busy with nothing else running are measured on a few of them.
    const probed = minutes.slice(3, 3 + PROBE_APPENDS)
    const alone = await busyCores(async () => {
      for (const ts of probed) api.ch.push(await apiAppend(stores.ch.market, symbols, ts))
    })
    // Then one append every 2 s (each load of the reads holds about one), then the rest back to back.
    const pacedFrom = 3 + PROBE_APPENDS
    /** PACED_APPENDS appends from minute `from` on, one every PACE_MS. */
    const pacedAppends = (from: number) => async () => {
      for (const ts of minutes.slice(from, from + PACED_APPENDS)) {
        const t0 = performance.now()
        api.ch.push(await apiAppend(stores.ch.market, symbols, ts))
        await sleep(PACE_MS - (performance.now() - t0))
      }
    }
    const paced = await loadsDuring(onCh.url, key, readFiles, pacedAppends(pacedFrom))
    const pacedBoth = await loadsDuring(onCh.url, key, readFiles, pacedAppends(pacedFrom + PACED_APPENDS), halfRate)
    const loadedFrom = performance.now()
    const during = await loadsDuring(onCh.url, key, readFiles, async () => {
      for (const ts of minutes.slice(pacedFrom + 2 * PACED_APPENDS))
        api.ch.push(await apiAppend(stores.ch.market, symbols, ts))
    })
    const appendsFloorMs = Math.min(performance.now() - loadedFrom, FLOOR_MS)
    const appendsFloor = await loadsDuring(onCh.url, key, readFiles, () => hogFor(alone.cores, appendsFloorMs))
    const appendsFloorPaced = await loadsDuring(
      onCh.url,
      key,
      readFiles,
      () => hogFor(alone.cores, appendsFloorMs),
      halfRate,
    )
    for (const ts of minutes.slice(3)) {
      api.sqlite.push(await apiAppend(stores.sqlite.market, symbols, ts))
      const body = symbols.map((s, i) => `${s}\t${ts}\t${10 + (i % 500) / 100}\t10.1\t9.9\t10\t1000\t10000\n`).join('')
      const r0 = performance.now()
      await sql(srv.httpUrl, 'INSERT INTO raw_minute FORMAT TSV', body)
      api.raw.push(performance.now() - r0)
    }
    for (const s of Object.values(stores)) await Promise.all([s.market.close(), s.keys.close()])
    row(
      `one-minute append, ${fmt(symbols.length)} rows, mdq import (s)`,
      (median(cli.sqlite) / 1000).toFixed(2),
      (median(cli.ch) / 1000).toFixed(2),
      '',
      '',
      '',
    )
    row(
      `  the same through the writer API, x${api.ch.length}; reads meanwhile: back to back (s)`,
      (median(api.sqlite) / 1000).toFixed(3),
      (median(api.ch) / 1000).toFixed(3),
      (median(api.raw) / 1000).toFixed(3),
      quiet.ch.toFixed(1),
      tail(during.p99s),
    )
    p99Row(`  reads meanwhile, one append every ${PACE_MS / 1000} s`, quiet.ch, paced)
    p99Row(`  the same, reads paced at ${Math.round(halfRate)}/s (half the quiet rate)`, quietPaced.p99, pacedBoth)
    p99Row(`  floor: beside a CPU hog of the appends' ${alone.cores.toFixed(2)} cores`, quiet.ch, appendsFloor)
    p99Row('  the same floor, reads paced at half the quiet rate', quietPaced.p99, appendsFloorPaced)
    const after = await parts(srv.httpUrl, 'mdq', 'bars')
    const blobsAfter = await parts(srv.httpUrl, 'mdq', 'blobs')
    const rawAfter = await parts(srv.httpUrl, 'default', 'raw_minute')
    const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`
    const onDisk = (p: Parts) => p.activeBytes + p.inactiveBytes
    console.log(
      `after ${minutes.length} appends: mdq bars ${before.active} -> ${after.active} active parts (+${after.inactive} inactive), ${mb(before.activeBytes)} -> ${mb(onDisk(after))} on disk; mdq blobs ${blobsBefore.active} -> ${blobsAfter.active} active parts (+${blobsAfter.inactive}), ${mb(blobsBefore.activeBytes)} -> ${mb(onDisk(blobsAfter))}; raw_minute ${rawBefore.active} -> ${rawAfter.active} active (+${rawAfter.inactive}), ${mb(rawBefore.activeBytes)} -> ${mb(onDisk(rawAfter))}; SQLite file +${mb(statSync(copy).size - sqliteBefore)}`,
    )
    await srv.settled()
    await sql(srv.httpUrl, 'OPTIMIZE TABLE mdq.bars FINAL')
    await sql(srv.httpUrl, 'OPTIMIZE TABLE mdq.blobs FINAL')
    const merged = await parts(srv.httpUrl, 'mdq', 'bars')
    const mergedBlobs = await parts(srv.httpUrl, 'mdq', 'blobs')
    const live = merged.activeBytes + mergedBlobs.activeBytes
    console.log(
      `  mdq bars and blobs once merged (OPTIMIZE FINAL): ${mb(merged.activeBytes)} + ${mb(mergedBlobs.activeBytes)} live; on disk after the appends ${ratio(onDisk(after) + onDisk(blobsAfter), live)} x that`,
    )
  }
} finally {
  for (const s of servers) await stopServer(s)
  await server?.destroy()
  rmSync(dir, { recursive: true, force: true })
}
