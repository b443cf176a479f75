// Live ingest on the full-market store (5,000 symbols), each figure beside a baseline from the same run:
// A. one minute of quotes for 5,000 symbols (3+ snapshots each) pushed in batches of 500 to a real
//    `mdq serve --ingest-port` (SQLite): accepted snapshots/s beside a bare node:http server that only
//    parses the same bodies, and the minute's 5,000 bars written the way appends went before the tail
//    (each symbol's last chunk and its rollups rewritten); and the time from the minute's last answer
//    to its last pushed symbol reading the minute, beside that read alone (uncached).
// B. the same minute on ClickHouse, pushed to one instance and read on another (BENCH_LIVE_CLICKHOUSE=0
//    skips it, BENCH_LIVE_SQLITE=0 skips the others), beside the bare server and beside raw ClickHouse
//    (the snapshots inserted as rows of a plain MergeTree, an INSERT a push; then the same with the
//    engine making their minute bars, a materialized view; then that behind the bare server relaying
//    the pushes, one INSERT at a time: the least a service in front of ClickHouse does); the same minutes pushed to an instance
//    answering once logged (`--ingest-answer logged`), then to one writing behind at most every 500 ms
//    (`--ingest-write-every`), then to one answering once logged in files of its own (`--ingest-log`),
//    then to the same with V8's young generation at 64 MB semi-spaces (NODE_OPTIONS), then to one logged
//    in files writing behind at most every 2 s (a minute's burst written once, after it); each minute
//    timed until its last pushed symbol reads it on the instance pushed to and on B; then an hour of the day
//    pushed at 12 times the market's pace: the server's CPU for the reads that run all day (each reader's poll of the spans, the latest
//    quotes) at its end beside the same at its start.
// C. 240 minutes of appends: read p99 (cached and uncached, wrk) while a feed runs at BENCH_LIVE_SPEED
//    times the market's cadence (default 10), beside the same reads with no feed, beside the same feed
//    leaving out the cached reads' own symbols (none of their answers computed again), beside the same feed
//    spread at the market's own pace (and that leaving out the cached reads' symbols; the answers computed
//    again counted, and the server's CPU for a wave of them beside the same answers from the cache), and
//    beside the same feed pushed to the bare server instead (what a
//    feed on the same cores costs reads at least); then the rest of the
//    day at full speed, and store bytes per 1m bar (after the background fold) beside the same bars
//    imported in one file.
// D. end of day: one daily bar for each of the 5,000 symbols through `mdq import bars --period 1d`,
//    beside writing them by rewriting each symbol's last chunk.
// F. C's paced reads at the market's own pace on servers of their own: without stand-ins, with
//    `--stale-while-revalidate` (BENCH_LIVE_SQLITE=stand-ins runs F alone), and without them with the
//    feed leaving out the cached reads' symbols (the floor), each beside its own quiet reads.
// E. reads on a ClickHouse instance (the full market's history copied in) while another takes a feed at
//    BENCH_LIVE_SPEED times the market's pace, beside the same reads with no feed; answers other than
//    2xx counted (BENCH_LIVE_ANSWER=logged: A answers pushes once logged). BENCH_LIVE_CLICKHOUSE=minute
//    runs B alone, =reads E alone.
// Run: npm run bench -- live   (BENCH_SECONDS per read load, default 5)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { allocBars, barCount, sliceBars, type Bars } from '../src/domain/bars.js'
import { MARKETS } from '../src/domain/market.js'
import type { StoredPeriod } from '../src/domain/period.js'
import { putBarsWith } from '../src/store/sqlite/chunks.js'
import { TouchedDays } from '../src/store/sqlite/rollups.js'
import { MIGRATIONS } from '../src/store/sqlite/schema.js'
import { migrate, openDb } from '../src/store/sqlite/sqlite-db.js'
import { storeStatements } from '../src/store/sqlite/sqlite-statements.js'
import { FREE_PAGES_KEPT } from '../src/store/sqlite/sqlite-writer.js'
import { TAIL_FOLD_ROWS } from '../src/store/sqlite/tail.js'
import { WrittenChunks } from '../src/store/sqlite/written-chunks.js'
import { clickhouseServer } from '../test/helpers/requirements.js'
import { ClickHouseServer, clickhouseSql } from '../test/helpers/clickhouse.js'
import { copyStore, fullMarketStore, ingestKey, type FullMarketStore } from './full-market-store.js'
import { liveDay, minuteBodies, nextWeekday, type LiveDay } from './live-plan.js'
import { cpuMs, median, row, startHog, threadsCpuMs } from './measure.js'
import { getBody, mdqBin, startMdqWithIngest, startServer, stopServer, type Server } from './servers.js'
import { requireWrk, wrkFiles, wrkLoad, type WrkFiles, type WrkLoad } from './wrk.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const SPEED = Number(process.env.BENCH_LIVE_SPEED ?? 10)
const BATCH = 500
const IN_FLIGHT = 4
/** E's instance A answers pushes once `written` (default) or once `logged` (BENCH_LIVE_ANSWER; `mdq serve --ingest-answer`). */
const ANSWER = process.env.BENCH_LIVE_ANSWER === 'logged' ? 'logged' : 'written'

/** A feed handler that keeps more pushes open (on ClickHouse the quote pushes waiting on a write go into the next one together). */
const IN_FLIGHT_WIDE = 16
/** B's third instance writes behind at most this often (`--ingest-write-every`). */
const WRITE_EVERY_MS = 500
/** B's last logged instance writes behind at most this often: a minute's burst is written once, after it. */
const WRITE_SELDOM_MS = 2000
/** The V8 flag of one of B's logged instances: a young generation of 64 MB semi-spaces (the default is 16). */
const YOUNG_GENERATION = '--max-semi-space-size=64'
const MEASURED_MINUTES = 5
/** Waves of answers computed again measured in C, with no other load beside them. */
const WAVES = 5
/** A market minute in the paced hour on ClickHouse: 12 times the market's pace, so the writer's once-a-minute removals of superseded live rows run as they do in a day. */
const PACED_MINUTE_MS = 5000

const here = import.meta.dirname
const tmp = mkdtempSync(join(tmpdir(), 'mdq-bench-live-'))
const servers: Server[] = []

const ms = (x: number) => `${x.toFixed(0)} ms`
/** The median of per-run rates, as a row cell. */
const medianRate = (rates: number[]) => `${Math.round(median(rates)).toLocaleString('en-US')}/s`
const perS = (n: number, msTaken: number) => `${Math.round((n / msTaken) * 1000).toLocaleString('en-US')}/s`

/** The file's bytes once its WAL is checkpointed into it, and those of its pages in use (not on the free list). */
function storeBytes(path: string): { file: number; used: number } {
  const db = new Database(path)
  db.pragma('wal_checkpoint(TRUNCATE)')
  const page = (name: string) => db.pragma(name, { simple: true }) as number
  const used = (page('page_count') - page('freelist_count')) * page('page_size')
  db.close()
  return { file: statSync(path).size, used }
}

/**
 * Waits (up to `maxMs`) until no tail series holds TAIL_FOLD_ROWS rows and no more than
 * FREE_PAGES_KEPT pages are free: the background fold has caught up and the store, at rest, has
 * given its free pages back. Returns the seconds it took, or undefined if it did not settle.
 */
async function atRest(path: string, maxMs: number): Promise<number | undefined> {
  const t0 = performance.now()
  while (performance.now() - t0 < maxMs) {
    const db = new Database(path, { readonly: true })
    const unfolded = db
      .prepare('SELECT count(*) FROM (SELECT 1 FROM tail GROUP BY symbol, period HAVING count(*) >= ?)')
      .pluck()
      .get(TAIL_FOLD_ROWS) as number
    const free = db.pragma('freelist_count', { simple: true }) as number
    db.close()
    if (unfolded === 0 && free <= FREE_PAGES_KEPT) return (performance.now() - t0) / 1000
    await sleep(1000)
  }
  return undefined
}

/** `send` of each body, `inFlight` at a time, in order of starting. */
async function eachInFlight(
  bodies: readonly string[],
  inFlight: number,
  send: (body: string) => Promise<unknown>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < bodies.length) await send(bodies[next++])
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
}

/**
 * The feed's connections: kept alive, as a feed handler's are. node:http rather than fetch, so the
 * pusher, which shares the two cores with the server, takes as little of them as a client can
 * (fetch cost about three times node:http's CPU a snapshot).
 */
const feedAgent = new Agent({ keepAlive: true })

/** One push of `body` to `url`: the answer's status and text. */
function post(url: string, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'X-API-Key': key, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }
    const req = request(`${url}/v1/ingest/quotes`, { method: 'POST', agent: feedAgent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** POSTs the bodies, `inFlight` at a time; every answer must be a 200. */
function pushAll(url: string, key: string, bodies: readonly string[], inFlight = IN_FLIGHT): Promise<void> {
  return eachInFlight(bodies, inFlight, async (body) => {
    const { status, text } = await post(url, key, body)
    if (status !== 200) throw new Error(`push: ${status} ${text}`)
  })
}

/**
 * Pushes the minutes `next()` gives (until it gives none, or `stop()`) at `speed` times the market's
 * pace, a minute every 60/speed s: `burst`, each minute's batches back to back at the start of its
 * slot; `spread`, the batches spread over the slot as the market's snapshots come. Once stopped, the
 * rest of the minute under way goes at once.
 */
async function feedAtPace(
  ingest: string,
  key: string,
  live: LiveDay,
  next: () => number | undefined,
  stop: () => boolean,
  shape: 'burst' | 'spread',
  keep?: (symbol: string) => boolean,
  speed = SPEED,
): Promise<void> {
  const slot = 60_000 / speed
  const until = (at: number) => sleep(stop() ? 0 : Math.max(0, at - performance.now()))
  while (!stop()) {
    const m = next()
    if (m === undefined) return
    const started = performance.now()
    const { bodies } = minuteBodies(live, m, BATCH, keep)
    if (shape === 'burst') await pushAll(ingest, key, bodies, 1)
    else
      for (const [i, body] of bodies.entries()) {
        await until(started + (i * slot) / bodies.length)
        await pushAll(ingest, key, [body], 1)
      }
    await until(started + slot)
  }
}

const cachedSymbols = (fm: FullMarketStore) => fm.symbols.slice(0, 200)
/** The cached load's requests: the latest 100 daily bars of each of its symbols. */
const cachedPaths = (fm: FullMarketStore) => cachedSymbols(fm).map((s) => `/v1/klines?symbol=${s}&period=1d&count=100`)

/**
 * The read loads beside a feed: `cached`, the latest 100 daily bars of 200 symbols (repeated, so
 * answered from the response cache while their version stands); `uncached`, 20,000 distinct 1m
 * windows of 1,000 bars (adjusted forward) of the minute symbols, up to 200 days back.
 */
function readLoads(fm: FullMarketStore): { cached: WrkFiles; uncached: WrkFiles } {
  const windowPaths: string[] = []
  for (let i = 0; i < 20_000; i++) {
    const s = fm.minuteSymbols[i % fm.minuteSymbols.length]
    const end = fm.lastMinuteMs - Math.floor((((i * 7919) % 997) / 997) * 200) * 86_400_000
    windowPaths.push(`/v1/klines?symbol=${s}&period=1m&count=1000&adjust=forward&end_time=${end}`)
  }
  return {
    cached: wrkFiles(mkdtempSync(join(tmp, 'cached-')), cachedPaths(fm)),
    uncached: wrkFiles(mkdtempSync(join(tmp, 'uncached-')), windowPaths),
  }
}

/** The latest 1m bar of each of `symbols` (at most 100) on `base`: its start. */
async function latestMinutes(base: string, key: string, symbols: readonly string[]) {
  const r = await fetch(`${base}/v1/klines/batch?symbols=${symbols.join(',')}&period=1m&count=1&adjust=none`, {
    headers: { 'X-API-Key': key },
  })
  const body = (await r.json()) as { data?: Record<string, { timestamp: number[] }> }
  if (r.status !== 200) throw new Error(`read: ${r.status} ${JSON.stringify(body)}`)
  return symbols.map((s) => body.data?.[s]?.timestamp.at(-1))
}

/** The latest 1m bar's start of one symbol on `base` (`/v1/klines`, the route a single symbol's reader takes). */
async function latestMinute(base: string, key: string, symbol: string, count = 1): Promise<number | undefined> {
  const r = await fetch(`${base}/v1/klines?symbol=${symbol}&period=1m&count=${count}&adjust=none`, {
    headers: { 'X-API-Key': key },
  })
  const body = (await r.json()) as { data?: { timestamp: number[] } }
  if (r.status !== 200) throw new Error(`read: ${r.status} ${JSON.stringify(body)}`)
  return body.data?.timestamp.at(-1)
}

/** Resolves when every symbol of `symbols` (at most 100) reads minute `minuteMs` as its latest 1m bar on `base`. */
async function readable(base: string, key: string, symbols: readonly string[], minuteMs: number): Promise<void> {
  while (!(await latestMinutes(base, key, symbols)).every((t) => t === minuteMs)) await sleep(5)
}

/** Resolves when `symbol` reads minute `minuteMs` as its latest 1m bar on `base`. */
async function readableOne(base: string, key: string, symbol: string, minuteMs: number): Promise<void> {
  while ((await latestMinute(base, key, symbol)) !== minuteMs) await sleep(5)
}

/** The symbols of a body's rows. */
const symbolsOf = (body: string): string[] => [
  ...new Set((JSON.parse(body) as { symbol: string }[]).map((q) => q.symbol)),
]

/**
 * Pushes minutes `from`..`to` (exclusive) and times each: snapshots/s of its pushes, and ms from its
 * last answer until the minute's last pushed symbol reads it on `readAt` (another instance, or the
 * same) and, given `pushedAt` (the instance pushed to, when `readAt` is another), there first.
 */
async function pushMinutes(
  live: LiveDay,
  ingest: string,
  feedKey: string,
  readAt: string,
  readKey: string,
  from: number,
  to: number,
  inFlight = IN_FLIGHT,
  pushedAt?: string,
): Promise<{ perS: number[]; readableMs: number[]; ownReadableMs: number[]; readMs: number[] }> {
  const rates: number[] = []
  const readables: number[] = []
  const ownReadables: number[] = []
  const reads: number[] = []
  for (let m = from; m < to; m++) {
    const { bodies, snapshots } = minuteBodies(live, m, BATCH)
    const t0 = performance.now()
    await pushAll(ingest, feedKey, bodies, inFlight)
    const t1 = performance.now()
    // Timed on the minute's last pushed symbol; then 100 of the last push's symbols must show it too.
    const lastSymbols = symbolsOf(bodies[bodies.length - 1]).slice(-100)
    const last = lastSymbols[lastSymbols.length - 1]
    if (pushedAt) {
      await readableOne(pushedAt, readKey, last, live.minuteMs[m])
      ownReadables.push(performance.now() - t1)
    }
    await readableOne(readAt, readKey, last, live.minuteMs[m])
    const t2 = performance.now()
    await readable(readAt, readKey, lastSymbols, live.minuteMs[m])
    // The baseline: the same one-symbol read once more, uncached (count=2), with nothing left to catch up.
    const t3 = performance.now()
    await latestMinute(readAt, readKey, last, 2)
    rates.push((snapshots / (t1 - t0)) * 1000)
    readables.push(t2 - t1)
    reads.push(performance.now() - t3)
  }
  return { perS: rates, readableMs: readables, ownReadableMs: ownReadables, readMs: reads }
}

/** The same bars written as appends were before the tail: each symbol's last chunk rewritten, rollups rebuilt (rolled back). */
function rewritingChunks(
  db: string,
  symbols: readonly string[],
  barsOf: (k: number) => Bars,
  period: StoredPeriod,
): number {
  const conn = openDb(db)
  migrate(conn, MIGRATIONS, 'store') // a store generated by an earlier build: its statements need the current tables
  const st = storeStatements(conn)
  try {
    conn.exec('BEGIN IMMEDIATE')
    const t0 = performance.now()
    const written = new WrittenChunks()
    const touched = new TouchedDays(st, written)
    symbols.forEach((symbol, k) => {
      const bars = barsOf(k)
      putBarsWith(st, symbol, period, bars, written)
      if (period === '1m') touched.add(symbol, bars.timestamp[0], bars.timestamp[barCount(bars) - 1])
    })
    touched.rebuildAll()
    return performance.now() - t0
  } finally {
    if (conn.inTransaction) conn.exec('ROLLBACK')
    conn.close()
  }
}

/**
 * Snapshots/s of minutes `from`..`to` (exclusive) pushed as to mdq, to a bare server that only parses
 * them, or with `insertUrl` also relays them to ClickHouse (bare-ingest-server.ts).
 */
async function bareRates(
  key: string,
  live: LiveDay,
  from: number,
  to: number,
  inFlight = IN_FLIGHT,
  insertUrl?: string,
): Promise<number[]> {
  const bare = await startServer([join(here, 'bare-ingest-server.js'), ...(insertUrl === undefined ? [] : [insertUrl])])
  try {
    const rates: number[] = []
    for (let m = from; m < to; m++) {
      const { bodies, snapshots } = minuteBodies(live, m, BATCH)
      const t0 = performance.now()
      await pushAll(bare.url, key, bodies, inFlight)
      rates.push((snapshots / (performance.now() - t0)) * 1000)
    }
    return rates
  } finally {
    await stopServer(bare)
  }
}

/** Creates the raw baseline's table (and with `minuteBars` its materialized view of minute bars); its name. */
async function rawTables(ch: ClickHouseServer, minuteBars: boolean): Promise<string> {
  const table = minuteBars ? 'live.raw_quotes_barred' : 'live.raw_quotes'
  await clickhouseSql(
    ch.httpUrl,
    `CREATE TABLE IF NOT EXISTS ${table} (symbol String, timestamp Int64, last_price Float64, open Float64,
       high Float64, low Float64, prev_close Float64, volume Float64, amount Float64, region String)
     ENGINE = MergeTree ORDER BY (symbol, timestamp)`,
  )
  if (minuteBars) {
    await clickhouseSql(
      ch.httpUrl,
      `CREATE TABLE IF NOT EXISTS live.raw_minutes (symbol String, minute Int64,
         open AggregateFunction(argMin, Float64, Int64), high AggregateFunction(max, Float64),
         low AggregateFunction(min, Float64), close AggregateFunction(argMax, Float64, Int64),
         volume AggregateFunction(argMax, Float64, Int64), amount AggregateFunction(argMax, Float64, Int64))
       ENGINE = AggregatingMergeTree ORDER BY (symbol, minute)`,
    )
    await clickhouseSql(
      ch.httpUrl,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS live.raw_minutes_made TO live.raw_minutes AS
       SELECT symbol, intDiv(timestamp, 60000) * 60000 AS minute, argMinState(last_price, timestamp) AS open,
         maxState(last_price) AS high, minState(last_price) AS low, argMaxState(last_price, timestamp) AS close,
         argMaxState(volume, timestamp) AS volume, argMaxState(amount, timestamp) AS amount
       FROM ${table} GROUP BY symbol, minute`,
    )
  }
  return table
}

/**
 * The route mdq replaces on ClickHouse: a feed handler that inserts each push's snapshots as rows of
 * a plain `MergeTree ORDER BY (symbol, timestamp)` (one INSERT a push, `inFlight` at once, JSON rows
 * as pushed). `minuteBars`: the engine makes minute bars of them as they go in (a materialized view
 * into an `AggregatingMergeTree` by symbol and minute: open, high, low and close of the last price,
 * the day's volume and amount at the minute's last snapshot), the least a desk needs for what mdq
 * serves; otherwise no bars. Per minute its snapshots/s, and the server's CPU per snapshot overall.
 */
async function rawClickHouseRates(
  ch: ClickHouseServer,
  live: LiveDay,
  from: number,
  to: number,
  inFlight: number,
  minuteBars = false,
): Promise<{ perS: number[]; serverUs: number }> {
  const table = await rawTables(ch, minuteBars)
  const rates: number[] = []
  let snapshotsAll = 0
  const server0 = cpuMs(ch.pid!)
  for (let m = from; m < to; m++) {
    const { bodies, snapshots } = minuteBodies(live, m, BATCH)
    // One JSON object a line, as JSONEachRow takes them in 18.16.
    const rows = bodies.map((b) => b.slice(1, -1).replaceAll('},{', '}\n{'))
    const t0 = performance.now()
    await eachInFlight(rows, inFlight, (body) =>
      clickhouseSql(ch.httpUrl, `INSERT INTO ${table} FORMAT JSONEachRow`, body),
    )
    rates.push((snapshots / (performance.now() - t0)) * 1000)
    snapshotsAll += snapshots
  }
  return { perS: rates, serverUs: ((cpuMs(ch.pid!) - server0) * 1000) / snapshotsAll }
}

/** Snapshots in minutes `from`..`to` (exclusive). */
function minutesSnapshots(live: LiveDay, from: number, to: number): number {
  let n = 0
  for (let m = from; m < to; m++) n += minuteBodies(live, m, BATCH).snapshots
  return n
}

/**
 * The server's CPU per snapshot since `threads0` by thread (its busiest thread but the main one is
 * the ingest thread; the others are query workers and V8's helpers, the garbage collector's mostly),
 * this process's (the pusher's) since `own0`, and the cores all of it kept busy since `wall0`.
 */
function cpuPerSnapshot(pid: number, threads0: Map<number, number>, own0: NodeJS.CpuUsage, wall0: number, n: number) {
  const used = [...threadsCpuMs(pid)].map(([tid, ms]) => [tid, ms - (threads0.get(tid) ?? 0)] as const)
  const main = used.find(([tid]) => tid === pid)?.[1] ?? 0
  const others = used.filter(([tid]) => tid !== pid).map(([, ms]) => ms)
  const ingest = Math.max(0, ...others)
  const total = used.reduce((a, [, ms]) => a + ms, 0)
  const own = process.cpuUsage(own0)
  const pusher = (own.user + own.system) / 1000
  const us = (ms: number) => (ms * 1000) / n
  return {
    ingest: us(ingest),
    main: us(main),
    other: us(total - main - ingest),
    pusher: us(pusher),
    cores: (total + pusher) / (performance.now() - wall0),
  }
}

/** The response cache's counter `name` (misses, stale) so far on the server at `base` (its /metrics). */
async function cacheCount(base: string, name: 'misses' | 'stale'): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text()
  const m = new RegExp(`^mdq_response_cache_${name}_total (\\d+)`, 'm').exec(text)
  if (!m) throw new Error(`no mdq_response_cache_${name}_total on /metrics`)
  return Number(m[1])
}
const cacheMisses = (base: string) => cacheCount(base, 'misses')

/** `--stale-while-revalidate` of F's servers that take it: a stand-in at most this old. */
const STALE_MS = 1000
/** F's rounds: each variant's server started once a round, the variants in turn, so an hour's noise falls on all. */
const STAND_IN_ROUNDS = 2

/** One of F's servers: the flag, or the feed leaving out the cached load's symbols (the floor). */
type StandInVariant = 'off' | 'on' | 'floor'

/**
 * F: the paced reads of C at the market's own pace (the feed spread as the level-1 cadence sends it),
 * each variant on a server and store of its own (the full market, the day's first minutes pushed
 * first): without stand-ins, with `--stale-while-revalidate`, and without them but with the feed
 * leaving out the cached load's 200 symbols (none of its answers computed again: the floor). Each
 * beside its own quiet reads in the same round, paced at half its own quiet rate.
 */
async function standIns(fm: FullMarketStore, live: LiveDay) {
  const { cached, uncached } = readLoads(fm)
  const readSet = new Set(cachedSymbols(fm))
  const variants: StandInVariant[] = ['off', 'on', 'floor']
  const states = []
  for (const variant of variants) {
    const db = copyStore(fm.db, tmp, `stand-ins-${variant}`)
    states.push({ variant, db, feedKey: await ingestKey(db), next: 4 })
  }
  console.log(
    `\nF. stand-ins (--stale-while-revalidate ${STALE_MS}), SQLite: paced reads, the feed spread at the market's own pace`,
  )
  for (let round = 0; round < STAND_IN_ROUNDS; round++)
    for (const st of states) {
      const flags = [
        '--rate-limit',
        'off',
        ...(st.variant === 'on' ? ['--stale-while-revalidate', String(STALE_MS)] : []),
      ]
      const mdq = await startMdqWithIngest(['--db', st.db], flags)
      try {
        if (round === 0) await pushMinutes(live, mdq.ingest, st.feedKey, mdq.url, fm.key, 0, st.next)
        await atRest(st.db, 240_000)
        await wrkLoad(mdq.url, fm.key, cached, 1)
        await wrkLoad(mdq.url, fm.key, uncached, 1)
        const pace = {
          cached: (await wrkLoad(mdq.url, fm.key, cached, SECONDS)).perS / 2,
          uncached: (await wrkLoad(mdq.url, fm.key, uncached, SECONDS)).perS / 2,
        }
        const quiet = {
          cached: await wrkLoad(mdq.url, fm.key, cached, SECONDS, 32, { perS: pace.cached }),
          uncached: await wrkLoad(mdq.url, fm.key, uncached, SECONDS, 32, { perS: pace.uncached }),
        }
        const keep = st.variant === 'floor' ? (symbol: string) => !readSet.has(symbol) : undefined
        const fedAt = async (files: WrkFiles, perS: number) => {
          let done = false
          const next = () => (st.next < live.minuteMs.length ? st.next++ : undefined)
          const feed = feedAtPace(mdq.ingest, st.feedKey, live, next, () => done, 'spread', keep, 1)
          const l = await wrkLoad(mdq.url, fm.key, files, SECONDS, 32, { perS })
          done = true
          await feed
          return l
        }
        const [misses0, stale0] = [await cacheMisses(mdq.url), await cacheCount(mdq.url, 'stale')]
        const fedCached = await fedAt(cached, pace.cached)
        const computed = (await cacheMisses(mdq.url)) - misses0
        const sent = (await cacheCount(mdq.url, 'stale')) - stale0
        const fedUncached = await fedAt(uncached, pace.uncached)
        const title = {
          off: 'without stand-ins',
          on: `--stale-while-revalidate ${STALE_MS}`,
          floor: "the floor: the feed leaving out the cached load's symbols",
        }
        row(`round ${round + 1}, ${title[st.variant]}`, '', '')
        row(
          '  cached',
          load(fedCached),
          `quiet ${load(quiet.cached)}`,
          `ratio ${(fedCached.p99 / quiet.cached.p99).toFixed(2)} (goal <= 1.5)`,
        )
        row(
          '  uncached',
          load(fedUncached),
          `quiet ${load(quiet.uncached)}`,
          `ratio ${(fedUncached.p99 / quiet.uncached.p99).toFixed(2)} (goal <= 1.5)`,
        )
        row('  cached: answers computed again, stand-ins sent', `${computed}, ${sent} of ${fedCached.requests} reads`)
        if (st.variant !== 'floor') {
          // Waves as answersAgain makes them (a push of the 200 symbols, then their 200 reads, 32 at a time), nothing else running.
          const waves: Awaited<ReturnType<typeof answersAgain>>[] = []
          for (let w = 0; w < WAVES; w++)
            waves.push(await answersAgain(mdq, st.feedKey, fm.key, live, st.next++, readSet, cachedPaths(fm)))
          const wall = (pick: (w: (typeof waves)[number]) => { wallMs: number }) =>
            ms(median(waves.map((w) => pick(w).wallMs)))
          row(
            `  one wave: the 200 reads right after a push to their symbols (median of ${WAVES})`,
            wall((w) => w.again),
            `the same 200 again at once: ${wall((w) => w.cached)}`,
          )
        }
      } finally {
        await stopServer(mdq)
      }
    }
}

/**
 * A wave of answers computed again, as a level-1 feed makes them: one push carrying a minute of the
 * `symbols` (minute `m`), then each path read once, 32 at a time; then the same reads again, from the
 * cache. The server's CPU for each (main thread, the others), from /proc; the rest of minute `m` is
 * pushed after, so the symbols stay in step with the market.
 */
async function answersAgain(
  mdq: Server & { readonly ingest: string },
  feedKey: string,
  readKey: string,
  live: LiveDay,
  m: number,
  symbols: ReadonlySet<string>,
  paths: readonly string[],
) {
  await pushAll(mdq.ingest, feedKey, minuteBodies(live, m, BATCH, (s) => symbols.has(s)).bodies)
  const agent = new Agent({ keepAlive: true, maxSockets: 32 })
  const pid = mdq.child.pid!
  const readAll = async () => {
    const before = threadsCpuMs(pid)
    const t0 = performance.now()
    let next = 0
    const reader = async () => {
      while (next < paths.length) await getBody(`${mdq.url}${paths[next++]}`, readKey, 'identity', agent)
    }
    await Promise.all(Array.from({ length: 32 }, reader))
    const wallMs = performance.now() - t0
    let main = 0
    let others = 0
    for (const [tid, ms] of threadsCpuMs(pid)) {
      const used = ms - (before.get(tid) ?? 0)
      if (tid === pid) main += used
      else others += used
    }
    return { main, others, wallMs }
  }
  const again = await readAll()
  const cached = await readAll()
  agent.destroy()
  await pushAll(mdq.ingest, feedKey, minuteBodies(live, m, BATCH, (s) => !symbols.has(s)).bodies)
  return { again, cached }
}

/** A wrk load's p99 and rate, as a row cell. */
const load = (l: WrkLoad) => `p99 ${l.p99.toFixed(1)} ms, ${Math.round(l.perS)}/s`

try {
  requireWrk()
  const fm = await fullMarketStore()
  console.log(
    `live ingest: ${fm.symbols.length.toLocaleString('en-US')} symbols, store ${fm.db}; ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)} at start`,
  )
  storeBytes(fm.db)
  const day = nextWeekday(MARKETS.SH.zone.localDay(fm.lastMinuteMs))
  const t0 = performance.now()
  const live = liveDay(fm.symbols, day)
  const dayBars = live.symbols.length * live.minuteMs.length
  console.log(
    `the feed: ${dayBars.toLocaleString('en-US')} 1m bars of ${MARKETS.SH.zone.isoDate(live.minuteMs[0])} as quote snapshots (${(performance.now() - t0).toFixed(0)} ms to make)`,
  )

  const onSqlite = process.env.BENCH_LIVE_SQLITE ?? 'all'
  if (onSqlite === 'all') {
    // A. One minute on SQLite.
    const liveDb = copyStore(fm.db, tmp, 'live')
    const liveBytes0 = storeBytes(liveDb)
    const feedKey = await ingestKey(liveDb)
    const mdq = await startMdqWithIngest(['--db', liveDb], ['--rate-limit', 'off'])
    servers.push(mdq)
    await pushMinutes(live, mdq.ingest, feedKey, mdq.url, fm.key, 0, 1) // warm-up: each symbol's state and instrument looked up once
    const measuredSnapshots = minutesSnapshots(live, 1, 1 + MEASURED_MINUTES)
    const threads0 = threadsCpuMs(mdq.child.pid!)
    const own0 = process.cpuUsage()
    const wall0 = performance.now()
    const measured = await pushMinutes(live, mdq.ingest, feedKey, mdq.url, fm.key, 1, 1 + MEASURED_MINUTES)
    const cpu = cpuPerSnapshot(mdq.child.pid!, threads0, own0, wall0, measuredSnapshots)
    const WIDE_TO = 1 + MEASURED_MINUTES + 3
    const wide = await pushMinutes(
      live,
      mdq.ingest,
      feedKey,
      mdq.url,
      fm.key,
      1 + MEASURED_MINUTES,
      WIDE_TO,
      IN_FLIGHT_WIDE,
    )
    const bare = await bareRates(feedKey, live, 1, 1 + MEASURED_MINUTES)
    const oneMinute = (m: number) => (k: number) => sliceBars(live.bars[k], m, m + 1)
    const chunkMs = median(
      Array.from({ length: 3 }, (_, r) => rewritingChunks(fm.db, live.symbols, oneMinute(r + 1), '1m')),
    )
    const snapshotsPerMinute = minuteBodies(live, 1, BATCH).snapshots
    console.log(
      `\nA. one minute (${snapshotsPerMinute.toLocaleString('en-US')} snapshots of ${live.symbols.length} symbols, batches of ${BATCH}, ${IN_FLIGHT} in flight), SQLite; medians of ${MEASURED_MINUTES} minutes`,
    )
    row('accepted snapshots/s', medianRate(measured.perS), 'goal >= 50,000/s')
    row(
      '  baseline: bare server, parse only',
      medianRate(bare),
      `ratio ${(median(measured.perS) / median(bare)).toFixed(2)}`,
    )
    row(`  ${IN_FLIGHT_WIDE} in flight (3 minutes)`, medianRate(wide.perS))
    row('  baseline: the bars by chunk rewrites', perS(live.symbols.length, chunkMs), `${ms(chunkMs)} a minute`)
    row(
      '  CPU per snapshot (us): ingest thread, main thread, other threads, the pusher',
      [cpu.ingest, cpu.main, cpu.other, cpu.pusher].map((us) => us.toFixed(1)).join(', '),
      `${cpu.cores.toFixed(2)} of ${availableParallelism()} cores busy`,
    )
    row('last answer -> bars readable', ms(median(measured.readableMs)), 'goal <= 200 ms')
    row('  baseline: the same read, uncached', ms(median(measured.readMs)))

    // C. 240 minutes: reads with and without a feed, then the rest of the day at full speed.
    const { cached, uncached } = readLoads(fm)
    // Quiet means at rest: the background fold of A's minutes done, their free pages given back.
    await atRest(liveDb, 240_000)
    await wrkLoad(mdq.url, fm.key, cached, 1)
    await wrkLoad(mdq.url, fm.key, uncached, 1)
    const quiet = {
      cached: await wrkLoad(mdq.url, fm.key, cached, SECONDS),
      uncached: await wrkLoad(mdq.url, fm.key, uncached, SECONDS),
    }
    // The feed at SPEED x the market's cadence (a minute of quotes every 60/SPEED s) while each load runs.
    // Paced at half of what the quiet server gave (below saturation: the answers' latency, not the queue's).
    const pace = { cached: quiet.cached.perS / 2, uncached: quiet.uncached.perS / 2 }
    // The server's and the pusher's CPU ms a second while `load` runs, beside its result.
    const withCpu = async (load: () => Promise<WrkLoad>) => {
      const server0 = cpuMs(mdq.child.pid!)
      const own0 = process.cpuUsage()
      const t0 = performance.now()
      const result = await load()
      const own = process.cpuUsage(own0)
      const msPerS =
        ((cpuMs(mdq.child.pid!) - server0 + (own.user + own.system) / 1000) * 1000) / (performance.now() - t0)
      return { result, msPerS }
    }
    const pacedQuietCpu = {
      cached: await withCpu(() => wrkLoad(mdq.url, fm.key, cached, SECONDS, 32, { perS: pace.cached })),
      uncached: await withCpu(() => wrkLoad(mdq.url, fm.key, uncached, SECONDS, 32, { perS: pace.uncached })),
    }
    const pacedQuiet = { cached: pacedQuietCpu.cached.result, uncached: pacedQuietCpu.uncached.result }
    let m = WIDE_TO
    // A bare server's feed takes the same minutes from the same place without using them up.
    let bareM = WIDE_TO
    const feeding = (
      stop: () => boolean,
      shape: 'burst' | 'spread',
      bare?: Server,
      keep?: (symbol: string) => boolean,
      speed = SPEED,
    ) =>
      bare === undefined
        ? feedAtPace(
            mdq.ingest,
            feedKey,
            live,
            () => (m < live.minuteMs.length ? m++ : undefined),
            stop,
            shape,
            keep,
            speed,
          )
        : feedAtPace(bare.url, feedKey, live, () => bareM++ % live.minuteMs.length, stop, shape, undefined, speed)
    const during = async (
      files: WrkFiles,
      perS?: number,
      shape: 'burst' | 'spread' = 'burst',
      bare?: Server,
      keep?: (symbol: string) => boolean,
      speed = SPEED,
    ) => {
      let done = false
      const feed = feeding(() => done, shape, bare, keep, speed)
      const l = await wrkLoad(mdq.url, fm.key, files, SECONDS, 32, perS === undefined ? {} : { perS })
      done = true
      await feed
      return l
    }
    const fed = { cached: await during(cached), uncached: await during(uncached) }
    const pacedFed = { cached: await during(cached, pace.cached), uncached: await during(uncached, pace.uncached) }
    // The same feed with the cached load's own symbols left out: none of its answers is computed
    // again, so what is left is the feed's work sharing the cores. Their minutes go in right after.
    const readSet = new Set(cachedSymbols(fm))
    const withoutReadSymbols = async (shape: 'burst' | 'spread', speed = SPEED) => {
      const from = m
      const l = await during(cached, pace.cached, shape, undefined, (s) => !readSet.has(s), speed)
      for (let k = from; k < m; k++)
        await pushAll(mdq.ingest, feedKey, minuteBodies(live, k, BATCH, (s) => readSet.has(s)).bodies)
      return l
    }
    const untouched = await withoutReadSymbols('burst')
    const spreadFedCpu = {
      cached: await withCpu(() => during(cached, pace.cached, 'spread')),
      uncached: await withCpu(() => during(uncached, pace.uncached, 'spread')),
    }
    const spreadFed = { cached: spreadFedCpu.cached.result, uncached: spreadFedCpu.uncached.result }
    // The same at the market's own pace: a minute's snapshots over a minute, as the L1 cadence sends them.
    // Each minute's pushes come in waves (every symbol's first snapshots, then its second...), so a
    // wave's first push moves all 200 versions of the cached load: its answers computed again, counted.
    const misses0 = await cacheMisses(mdq.url)
    const marketCached = await during(cached, pace.cached, 'spread', undefined, undefined, 1)
    const marketMisses = (await cacheMisses(mdq.url)) - misses0
    const marketPaced = {
      cached: marketCached,
      uncached: await during(uncached, pace.uncached, 'spread', undefined, undefined, 1),
    }
    // ... and with the cached load's own symbols left out (their minutes go in right after), at the same pace.
    const marketUntouched = await withoutReadSymbols('spread', 1)
    // What one such wave costs the server: the cached load's 200 answers computed again, beside them from the cache.
    const waves: Awaited<ReturnType<typeof answersAgain>>[] = []
    for (let r = 0; r < WAVES; r++)
      waves.push(await answersAgain(mdq, feedKey, fm.key, live, m++, readSet, cachedPaths(fm)))
    // The floor: the same paced reads beside a process that only burns the CPU the spread feed cost
    // (the server's and the pusher's, over the quiet reads'), sharing nothing else with the server.
    const hogged = async (kind: 'cached' | 'uncached') => {
      const share = Math.max(0, (spreadFedCpu[kind].msPerS - pacedQuietCpu[kind].msPerS) / 1000)
      const hog = await startHog(share)
      try {
        return {
          load: await wrkLoad(mdq.url, fm.key, kind === 'cached' ? cached : uncached, SECONDS, 32, {
            perS: pace[kind],
          }),
          share,
        }
      } finally {
        hog.kill()
      }
    }
    const hog = { cached: await hogged('cached'), uncached: await hogged('uncached') }
    // The floor of a feed on this machine: the same reads (closed loop and paced) while the same feed
    // goes to a bare server that only parses it (bare-ingest-server.ts), so only the pusher's and the
    // parsing's CPU share the cores with the reads: the least any ingest of that feed costs them here.
    const bareServer = await startServer([join(here, 'bare-ingest-server.js')])
    const bareFed = {
      closed: {
        cached: await during(cached, undefined, 'burst', bareServer),
        uncached: await during(uncached, undefined, 'burst', bareServer),
      },
      burst: {
        cached: await during(cached, pace.cached, 'burst', bareServer),
        uncached: await during(uncached, pace.uncached, 'burst', bareServer),
      },
      spread: {
        cached: await during(cached, pace.cached, 'spread', bareServer),
        uncached: await during(uncached, pace.uncached, 'spread', bareServer),
      },
    }
    await stopServer(bareServer)
    const full0 = performance.now()
    const fullFrom = m
    for (; m < live.minuteMs.length; m++) await pushAll(mdq.ingest, feedKey, minuteBodies(live, m, BATCH).bodies)
    const fullMs = performance.now() - full0
    let fullSnapshots = 0
    for (let k = fullFrom; k < live.minuteMs.length; k++) fullSnapshots += minuteBodies(live, k, BATCH).snapshots
    // Every bar of the day, spot-checked on 100 symbols, before the store is measured.
    await readable(mdq.url, fm.key, live.symbols.slice(0, 100), live.minuteMs[live.minuteMs.length - 1])
    // The background fold finishes the tail (every series down to its newest rows) and the store at
    // rest gives back the pages the folds freed; then the server stops.
    const settled = await atRest(liveDb, 240_000)
    await stopServer(mdq)
    const tailRows = new Database(liveDb, { readonly: true })
      .prepare('SELECT count(*) FROM tail')
      .pluck()
      .get() as number
    const liveAfter = storeBytes(liveDb)
    const liveGrowth = liveAfter.file - liveBytes0.file
    const liveUsed = liveAfter.used - liveBytes0.used
    // The same day's bars imported in one file (sorted by symbol) into another copy.
    const importDb = copyStore(fm.db, tmp, 'import')
    const importBytes0 = storeBytes(importDb)
    const csv = join(tmp, 'day.csv')
    const lines = ['symbol,time,open,high,low,close,volume,amount']
    for (const [k, s] of live.symbols.entries()) {
      const b = live.bars[k]
      for (let i = 0; i < barCount(b); i++)
        lines.push(
          `${s},${b.timestamp[i]},${b.open[i]},${b.high[i]},${b.low[i]},${b.close[i]},${b.volume[i]},${b.amount[i]}`,
        )
    }
    writeFileSync(csv, lines.join('\n') + '\n')
    await run([mdqBin, '--db', importDb, 'import', 'bars', csv, '--period', '1m'])
    const importAfter = storeBytes(importDb)
    const importGrowth = importAfter.file - importBytes0.file
    const importUsed = importAfter.used - importBytes0.used
    console.log(`\nC. ${live.minuteMs.length} minutes of appends (${dayBars.toLocaleString('en-US')} 1m bars), SQLite`)
    const readRows = (title: string, fedLoads: typeof fed, quietLoads: typeof quiet) => {
      row(title, '', '')
      for (const [kind, label] of [
        ['cached', '  cached: 200 symbols daily, latest 100'],
        ['uncached', '  uncached: 20,000 distinct 1m windows'],
      ] as const)
        row(
          label,
          load(fedLoads[kind]),
          `quiet ${load(quietLoads[kind])}`,
          `ratio ${(fedLoads[kind].p99 / quietLoads[kind].p99).toFixed(2)} (goal <= 1.5)`,
        )
    }
    readRows(`reads while a feed runs at ${SPEED}x cadence (closed loop, feed in bursts)`, fed, quiet)
    readRows(
      '  closed loop, the feed in bursts to a bare server instead (parse only): the floor',
      bareFed.closed,
      quiet,
    )
    readRows('  paced at half the quiet rate (feed in bursts)', pacedFed, pacedQuiet)
    row(
      '    cached, the feed leaving out its 200 symbols (none of its answers computed again)',
      load(untouched),
      `quiet ${load(pacedQuiet.cached)}`,
      `ratio ${(untouched.p99 / pacedQuiet.cached.p99).toFixed(2)}`,
    )
    readRows("  paced, the feed's batches spread over each minute", spreadFed, pacedQuiet)
    readRows("  paced, the feed spread at the market's own pace (1x)", marketPaced, pacedQuiet)
    row(
      '    cached: its answers computed again meanwhile (response cache misses)',
      `${marketMisses} of ${marketCached.requests} reads`,
    )
    row(
      "    cached, at the market's own pace, the feed leaving out its 200 symbols",
      load(marketUntouched),
      `quiet ${load(pacedQuiet.cached)}`,
      `ratio ${(marketUntouched.p99 / pacedQuiet.cached.p99).toFixed(2)}`,
    )
    const waveMs = (pick: (w: (typeof waves)[number]) => { main: number; others: number }) => {
      const main = median(waves.map((w) => pick(w).main))
      const others = median(waves.map((w) => pick(w).others))
      return `${(main + others).toFixed(0)} ms (main ${main.toFixed(0)}, others ${others.toFixed(0)})`
    }
    row(
      `    one wave: the 200 answers computed again after a push to their symbols, server CPU (median of ${WAVES})`,
      waveMs((w) => w.again),
      `the same 200 from the cache: ${waveMs((w) => w.cached)}`,
    )
    readRows(
      `  paced, beside a CPU hog the spread feed's size instead (${(hog.cached.share * 1000).toFixed(0)} / ${(hog.uncached.share * 1000).toFixed(0)} ms a second): the floor`,
      { cached: hog.cached.load, uncached: hog.uncached.load },
      pacedQuiet,
    )
    readRows('  paced, the feed in bursts to a bare server instead (parse only): the floor', bareFed.burst, pacedQuiet)
    readRows('  paced, the feed spread, to a bare server instead: the floor', bareFed.spread, pacedQuiet)
    row(
      `the rest (${live.minuteMs.length - fullFrom} minutes) at full speed`,
      perS(fullSnapshots, fullMs),
      `${(fullMs / 1000).toFixed(1)} s`,
    )
    row(
      'store bytes per 1m bar appended',
      (liveGrowth / dayBars).toFixed(1),
      `${(liveUsed / dayBars).toFixed(1)} in pages in use`,
      `tail rows left ${tailRows}; ${settled === undefined ? 'not at rest after 240 s' : `at rest ${settled.toFixed(0)} s after the last push`}`,
    )
    row(
      '  baseline: imported in one file',
      (importGrowth / dayBars).toFixed(1),
      `${(importUsed / dayBars).toFixed(1)} in pages in use`,
      `ratio ${(liveGrowth / importGrowth).toFixed(2)} / ${(liveUsed / importUsed).toFixed(2)} (goal <= 1.2)`,
    )

    // D. End of day: one daily bar per symbol.
    const eodDb = copyStore(fm.db, tmp, 'eod')
    const eodCsv = join(tmp, 'eod.csv')
    const dailyLines = ['symbol,time,open,high,low,close,volume,amount']
    const dailyOf = (k: number): Bars => {
      const b = live.bars[k]
      const n = barCount(b)
      const d = allocBars(1)
      d.timestamp[0] = MARKETS.SH.zone.midnightUtc(day)
      d.open[0] = b.open[0]
      d.high[0] = Math.max(...b.high)
      d.low[0] = Math.min(...b.low)
      d.close[0] = b.close[n - 1]
      d.volume[0] = b.volume.reduce((a, v) => a + v, 0)
      d.amount[0] = Math.round(b.amount.reduce((a, v) => a + v, 0) * 100) / 100
      d.prevClose[0] = NaN
      return d
    }
    for (const [k, s] of live.symbols.entries()) {
      const d = dailyOf(k)
      dailyLines.push(
        `${s},${MARKETS.SH.zone.isoDate(d.timestamp[0])},${d.open[0]},${d.high[0]},${d.low[0]},${d.close[0]},${d.volume[0]},${d.amount[0]}`,
      )
    }
    writeFileSync(eodCsv, dailyLines.join('\n') + '\n')
    const eodWall0 = performance.now()
    const eodOut = await run([mdqBin, '--db', eodDb, 'import', 'bars', eodCsv, '--period', '1d'])
    const eodWall = performance.now() - eodWall0
    const eodSeconds = Number(/ in ([\d.]+) s/.exec(eodOut)?.[1])
    const eodChunkMs = rewritingChunks(fm.db, live.symbols, dailyOf, '1d')
    console.log(`\nD. end of day: ${live.symbols.length} daily bars`)
    row(
      'mdq import bars --period 1d',
      `${(eodSeconds * 1000).toFixed(0)} ms`,
      `${ms(eodWall)} with the process`,
      'goal < 1 s',
    )
    row(
      '  baseline: chunk rewrites (in-process)',
      ms(eodChunkMs),
      `ratio ${((eodSeconds * 1000) / eodChunkMs).toFixed(2)}`,
    )
  }
  if (onSqlite === 'all' || onSqlite === 'stand-ins') await standIns(fm, live)
  // B. ClickHouse: pushed to one instance, read on the other.
  const onClickHouse = process.env.BENCH_LIVE_CLICKHOUSE ?? 'all'
  if (onClickHouse !== '0' && clickhouseServer() === false) {
    if (onClickHouse !== 'reads') await clickhouseMinute(live, fm.symbols)
    if (onClickHouse !== 'minute') await clickhouseReadsUnderFeed(live, fm)
  }
} finally {
  feedAgent.destroy()
  for (const s of servers) await stopServer(s).catch(() => undefined)
  rmSync(tmp, { recursive: true, force: true })
}

/**
 * What the reads that run all day cost the server now, as CPU a query (50 runs each): a reader's poll
 * of the spans of the newest import (snapshot.ts) and the newest live quote of 100 symbols
 * (live-tables.ts), both as mdq asks them; with the rows of their tables, and the bars table's rows
 * against the distinct bars they hold.
 */
async function dayCosts(ch: ClickHouseServer, symbols: readonly string[]) {
  const query = (sql: string) => clickhouseSql(ch.httpUrl, sql)
  const cpuOf = async (sql: string) => {
    await query(sql)
    const cpu0 = cpuMs(ch.pid!)
    for (let i = 0; i < 50; i++) await query(sql)
    return (cpuMs(ch.pid!) - cpu0) / 50
  }
  const newest = await query("SELECT max(import_id) FROM live.imports WHERE state = 'committed'")
  const hundred = symbols.slice(0, 100).map((s) => `'${s}'`)
  return {
    poll: await cpuOf(
      `SELECT symbol, period, first_ts, last_ts, bars, marks, import_id, rollups FROM live.series WHERE import_id IN (${newest}) ORDER BY import_id, seq`,
    ),
    quotes: await cpuOf(
      `SELECT symbol, argMax(quote, (import_id, seq)) FROM live.live_quotes WHERE symbol IN (${hundred.join(', ')}) AND import_id <= ${newest} GROUP BY symbol`,
    ),
    seriesRows: Number(await query('SELECT count() FROM live.series')),
    quoteRows: Number(await query('SELECT count() FROM live.live_quotes')),
    barRows: Number(await query('SELECT count() FROM live.bars')),
    minuteRows: Number(await query("SELECT count() FROM live.bars WHERE period = '1m'")),
    distinctMinutes: Number(await query("SELECT uniqExact(symbol, ts) FROM live.bars WHERE period = '1m'")),
  }
}

/**
 * E. Reads on one ClickHouse instance while another takes a feed: the full market's history copied
 * into a fresh store (so the reads meet what users read), the read loads of C on instance B paced at
 * half the quiet rate, with no feed and with the feed spread over each minute into instance A at
 * SPEED times the market's pace; answers other than 2xx counted (a read whose data changed under it
 * at every try is a 503).
 */
async function clickhouseReadsUnderFeed(live: LiveDay, fm: FullMarketStore): Promise<void> {
  const ch = await ClickHouseServer.start()
  try {
    const store = ch.storeUrl('reads')
    const t0 = performance.now()
    await run([mdqBin, 'copy', '--from', fm.db, '--to', store])
    const copySeconds = (performance.now() - t0) / 1000
    // Quiet means no merge left running on the server from the copy or the pushes before.
    await ch.settled()
    const key = async (...flags: string[]) =>
      (await run([mdqBin, '--store', store, 'keys', 'create', '--name', 'bench', ...flags])).trim()
    const [feedKey, readKey] = [await key('--scope', 'ingest'), await key()]
    // The flag only when it changes the default, so that BENCH_MDQ can name a build from before it.
    const answer = ANSWER === 'logged' ? ['--ingest-answer', 'logged'] : []
    const a = await startMdqWithIngest(['--store', store], ['--rate-limit', 'off', ...answer])
    servers.push(a)
    const b = await startMdqWithIngest(['--store', store], ['--rate-limit', 'off'])
    servers.push(b)
    let m = 0
    await pushAll(a.ingest, feedKey, minuteBodies(live, m++, BATCH).bodies) // each symbol's state looked up once
    const loads = readLoads(fm)
    const kinds = ['cached', 'uncached'] as const
    for (const kind of kinds) await wrkLoad(b.url, readKey, loads[kind], 1)
    const pace = { cached: 0, uncached: 0 }
    for (const kind of kinds) pace[kind] = (await wrkLoad(b.url, readKey, loads[kind], SECONDS)).perS / 2
    const paced = (kind: (typeof kinds)[number]) =>
      wrkLoad(b.url, readKey, loads[kind], SECONDS, 32, { perS: pace[kind], countErrors: true })
    console.log(
      `\nE. reads on instance B (ClickHouse, the full market copied in: ${copySeconds.toFixed(0)} s) while a feed spread over each minute goes into A (pushes answered once ${ANSWER}) at ${SPEED}x the market's pace; paced at half the quiet rate`,
    )
    for (const kind of kinds) {
      await ch.settled()
      const quiet = await paced(kind)
      let done = false
      const feed = feedAtPace(
        a.ingest,
        feedKey,
        live,
        () => (m < live.minuteMs.length ? m++ : undefined),
        () => done,
        'spread',
      )
      const fed = await paced(kind).finally(() => (done = true))
      await feed
      const failed = (l: WrkLoad) =>
        `${l.errors.toLocaleString('en-US')} of ${l.requests.toLocaleString('en-US')} not 2xx`
      row(
        kind === 'cached' ? 'cached: 200 symbols daily, latest 100' : 'uncached: 20,000 distinct 1m windows',
        `${load(fed)}; ${failed(fed)}`,
        `quiet ${load(quiet)}; ${failed(quiet)}`,
        `ratio ${(fed.p99 / quiet.p99).toFixed(2)}`,
      )
    }
    await stopServer(a)
    await stopServer(b)
  } finally {
    await ch.destroy()
  }
}

/** Runs a child to its end; its stdout and stderr, or an error with them. */
function run(args: readonly string[]): Promise<string> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')}: ${out}`)))),
  )
}

async function clickhouseMinute(live: LiveDay, symbols: readonly string[]): Promise<void> {
  const ch = await ClickHouseServer.start()
  try {
    const store = ch.storeUrl('live')
    await run([mdqBin, '--store', store, 'migrate'])
    // The instruments, as the full market has them (the minute needs no history).
    const instruments = join(tmp, 'instruments.csv')
    writeFileSync(
      instruments,
      ['symbol,name,type', ...symbols.map((s, i) => `${s},Bench ${i},stock`)].join('\n') + '\n',
    )
    await run([mdqBin, '--store', store, 'import', 'instruments', instruments])
    const feedKey = (
      await run([mdqBin, '--store', store, 'keys', 'create', '--name', 'feed', '--scope', 'ingest'])
    ).trim()
    const readKey = (await run([mdqBin, '--store', store, 'keys', 'create', '--name', 'reader'])).trim()
    const a = await startMdqWithIngest(['--store', store], ['--rate-limit', 'off'])
    servers.push(a)
    const b = await startMdqWithIngest(['--store', store], ['--rate-limit', 'off'])
    servers.push(b)
    await pushMinutes(live, a.ingest, feedKey, b.url, readKey, 0, 1)
    const snapshots = minutesSnapshots(live, 1, 1 + 3)
    const threads0 = threadsCpuMs(a.child.pid!)
    const server0 = cpuMs(ch.pid!)
    const own0 = process.cpuUsage()
    const wall0 = performance.now()
    const measured = await pushMinutes(live, a.ingest, feedKey, b.url, readKey, 1, 1 + 3, IN_FLIGHT, a.url)
    const cpu = cpuPerSnapshot(a.child.pid!, threads0, own0, wall0, snapshots)
    const serverMs = cpuMs(ch.pid!) - server0
    const serverCores = serverMs / (performance.now() - wall0)
    const serverUs = (serverMs * 1000) / snapshots
    const wide = await pushMinutes(live, a.ingest, feedKey, b.url, readKey, 1 + 3, 1 + 6, IN_FLIGHT_WIDE, a.url)
    /** The day's first minute no instance has been fed yet. */
    let unfed = 1 + 6
    /**
     * The feed moved to an instance answering once a push is logged (writing behind): the next minute
     * to warm it up as A was (each symbol's state and instrument looked up once), then six.
     */
    const loggedRun = async (flags: readonly string[], env: NodeJS.ProcessEnv = {}) => {
      const warmUp = unfed
      unfed += 7
      const l = await startMdqWithIngest(
        ['--store', store],
        ['--rate-limit', 'off', '--ingest-answer', 'logged', ...flags],
        env,
      )
      servers.push(l)
      await pushMinutes(live, l.ingest, feedKey, b.url, readKey, warmUp, warmUp + 1)
      const from = warmUp + 1
      const server0 = cpuMs(ch.pid!)
      const [threads0, own0, wall0] = [threadsCpuMs(l.child.pid!), process.cpuUsage(), performance.now()]
      const four = await pushMinutes(live, l.ingest, feedKey, b.url, readKey, from, from + 3, IN_FLIGHT, l.url)
      const n = minutesSnapshots(live, from, from + 3)
      const cpu = cpuPerSnapshot(l.child.pid!, threads0, own0, wall0, n)
      const serverUs = ((cpuMs(ch.pid!) - server0) * 1000) / n
      const wide = await pushMinutes(live, l.ingest, feedKey, b.url, readKey, from + 3, from + 6, IN_FLIGHT_WIDE, l.url)
      await stopServer(l)
      return { four, wide, cpu, serverUs }
    }
    const logged = await loggedRun([])
    const cadenced = await loggedRun(['--ingest-write-every', String(WRITE_EVERY_MS)])
    const filed = await loggedRun(['--ingest-log', mkdtempSync(join(tmp, 'ingest-log-'))])
    // The same with V8's young generation at 64 MB a semi-space (NODE_OPTIONS): the garbage a push leaves is collected less often.
    const young = await loggedRun(['--ingest-log', mkdtempSync(join(tmp, 'ingest-log-'))], {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${YOUNG_GENERATION}`.trim(),
    })
    // Logged in files, each symbol written once a burst: a write behind at most every WRITE_SELDOM_MS.
    const seldom = await loggedRun([
      '--ingest-log',
      mkdtempSync(join(tmp, 'ingest-log-')),
      '--ingest-write-every',
      String(WRITE_SELDOM_MS),
    ])
    const bare = await bareRates(feedKey, live, 1, 1 + 3)
    const raw = await rawClickHouseRates(ch, live, 1, 1 + 3, IN_FLIGHT)
    const rawWide = await rawClickHouseRates(ch, live, 1 + 3, 1 + 6, IN_FLIGHT_WIDE)
    const barred = await rawClickHouseRates(ch, live, 1, 1 + 3, IN_FLIGHT, true)
    const barredWide = await rawClickHouseRates(ch, live, 1 + 3, 1 + 6, IN_FLIGHT_WIDE, true)
    // The least a service in front of ClickHouse does: the pushes parsed by a bare relay and inserted as the
    // baseline above inserts them, one INSERT at a time of all that came while the one before ran.
    const insertUrl = `${ch.httpUrl}/?query=${encodeURIComponent(`INSERT INTO ${await rawTables(ch, true)} FORMAT JSONEachRow`)}`
    const relayServer0 = cpuMs(ch.pid!)
    const relayed = await bareRates(feedKey, live, 1, 1 + 3, IN_FLIGHT, insertUrl)
    const relayedUs = ((cpuMs(ch.pid!) - relayServer0) * 1000) / minutesSnapshots(live, 1, 1 + 3)
    const relayedWide = await bareRates(feedKey, live, 1 + 3, 1 + 6, IN_FLIGHT_WIDE, insertUrl)
    const minutesMade = Number(
      await clickhouseSql(
        ch.httpUrl,
        'SELECT count() FROM (SELECT symbol, minute FROM live.raw_minutes GROUP BY symbol, minute)',
      ),
    )
    console.log(
      `\nB. one minute on ClickHouse (one server), pushed to instance A, read on instance B; medians of 3 minutes`,
    )
    row('accepted snapshots/s', medianRate(measured.perS), 'goal >= 50,000/s')
    row(
      '  baseline: bare server, parse only',
      medianRate(bare),
      `ratio ${(median(measured.perS) / median(bare)).toFixed(2)}`,
    )
    row(`  ${IN_FLIGHT_WIDE} in flight`, medianRate(wide.perS))
    row(
      `  baseline: raw ClickHouse, the snapshots as rows, an INSERT a push (${IN_FLIGHT} / ${IN_FLIGHT_WIDE} in flight)`,
      `${medianRate(raw.perS)} / ${medianRate(rawWide.perS)}`,
      `ratio ${(median(measured.perS) / median(raw.perS)).toFixed(2)} / ${(median(wide.perS) / median(rawWide.perS)).toFixed(2)}; server ${raw.serverUs.toFixed(1)} / ${rawWide.serverUs.toFixed(1)} us a snapshot`,
    )
    row(
      `  baseline: the same, the engine making minute bars of them (a materialized view; ${minutesMade.toLocaleString('en-US')} bars)`,
      `${medianRate(barred.perS)} / ${medianRate(barredWide.perS)}`,
      `ratio ${(median(measured.perS) / median(barred.perS)).toFixed(2)} / ${(median(wide.perS) / median(barredWide.perS)).toFixed(2)}; server ${barred.serverUs.toFixed(1)} / ${barredWide.serverUs.toFixed(1)} us a snapshot`,
    )
    row(
      '  baseline: the same behind a bare node:http relay (parse; one INSERT at a time of the pushes that came meanwhile): the floor',
      `${medianRate(relayed)} / ${medianRate(relayedWide)}`,
      `ratio ${(median(measured.perS) / median(relayed)).toFixed(2)} / ${(median(wide.perS) / median(relayedWide)).toFixed(2)}; server ${relayedUs.toFixed(1)} us a snapshot`,
    )
    row(
      '  CPU per snapshot (us): A main thread, its other threads, ClickHouse, the pusher',
      [cpu.main, cpu.ingest + cpu.other, serverUs, cpu.pusher].map((us) => us.toFixed(1)).join(', '),
      `${(cpu.cores + serverCores).toFixed(2)} of ${availableParallelism()} cores busy`,
    )
    row('last answer -> readable on A', ms(median(measured.ownReadableMs)), 'goal <= 200 ms')
    row('last answer on A -> readable on B', ms(median(measured.readableMs)), 'goal <= 1 s')
    row('  baseline: the same read, uncached', ms(median(measured.readMs)))
    const loggedRows = (what: string, r: typeof logged) => {
      row(
        `${what} (${IN_FLIGHT} / ${IN_FLIGHT_WIDE} in flight)`,
        `${medianRate(r.four.perS)} / ${medianRate(r.wide.perS)}`,
        `ratio ${(median(r.four.perS) / median(measured.perS)).toFixed(2)} / ${(median(r.wide.perS) / median(wide.perS)).toFixed(2)} of answered once written; server ${r.serverUs.toFixed(1)} us a snapshot`,
      )
      row(
        '  CPU per snapshot (us): its main thread, its other threads, the pusher',
        [r.cpu.main, r.cpu.ingest + r.cpu.other, r.cpu.pusher].map((us) => us.toFixed(1)).join(', '),
      )
      row(
        `  last answer -> readable on it (${IN_FLIGHT} / ${IN_FLIGHT_WIDE} in flight)`,
        `${ms(median(r.four.ownReadableMs))} / ${ms(median(r.wide.ownReadableMs))}`,
        'goal <= 200 ms',
      )
      row(
        `  last answer -> readable on B (${IN_FLIGHT} / ${IN_FLIGHT_WIDE} in flight)`,
        `${ms(median(r.four.readableMs))} / ${ms(median(r.wide.readableMs))}`,
        'goal <= 1 s',
      )
    }
    loggedRows('answered once logged, written behind (--ingest-answer logged)', logged)
    loggedRows(`the same, a write behind at most every ${WRITE_EVERY_MS} ms (--ingest-write-every)`, cadenced)
    loggedRows('answered once logged in files of its own (--ingest-log), written behind', filed)
    loggedRows(`the same, NODE_OPTIONS=${YOUNG_GENERATION}`, young)
    loggedRows(`logged in files, a write behind at most every ${WRITE_SELDOM_MS} ms`, seldom)
    const start = await dayCosts(ch, symbols)
    for (let m = unfed; m < unfed + 60; m++) {
      const t0 = performance.now()
      await pushAll(a.ingest, feedKey, minuteBodies(live, m, BATCH).bodies, IN_FLIGHT_WIDE)
      await sleep(Math.max(0, PACED_MINUTE_MS - (performance.now() - t0)))
    }
    const end = await dayCosts(ch, symbols)
    const against = (x: number, y: number) => `start ${y.toFixed(1)} ms: ${(x / y).toFixed(2)}x`
    console.log(`\nB. then 60 minutes pushed to A, one every ${PACED_MINUTE_MS / 1000} s; server CPU a query`)
    row("each reader's poll (the newest import's spans)", `${end.poll.toFixed(1)} ms`, against(end.poll, start.poll))
    row('  series rows', end.seriesRows.toLocaleString('en-US'), `start ${start.seriesRows.toLocaleString('en-US')}`)
    row('latest live quotes of 100 symbols', `${end.quotes.toFixed(1)} ms`, against(end.quotes, start.quotes))
    row('  live_quotes rows', end.quoteRows.toLocaleString('en-US'), `start ${start.quoteRows.toLocaleString('en-US')}`)
    row('bar rows on disk (all periods)', end.barRows.toLocaleString('en-US'))
    row(
      '  1m rows / distinct 1m bars',
      `${(end.minuteRows / end.distinctMinutes).toFixed(1)}x`,
      `${end.minuteRows.toLocaleString('en-US')} / ${end.distinctMinutes.toLocaleString('en-US')}; a forming bar is written again each write (no rollups: live puts store none), the superseded rows stay until mdq vacuum`,
    )
    await stopServer(a)
    await stopServer(b)
  } finally {
    await ch.destroy()
  }
}
