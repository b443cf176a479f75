// Uncached derived-minute and 1m reads, each beside a baseline from the same run:
// - 10,000 60m bars (forward) from stored rollups, over HTTP and in-process, against a bare node:http
//   server sending the same bytes and against aggregating the 624,000 1m bars on read in-process (the
//   path a store without rollups takes);
// - random 1,000-bar 1m windows (400 drawn once) at 32 connections against the bare server, both loaded
//   by wrk (bench/wrk.ts: a C client, so the shared cores go to the servers rather than to a node:http client);
//   and the same windows asked with Accept-Encoding: gzip (as the TickFlow SDK asks), against the plain ones;
//   and an mdq with the default response cache (64 MB) loaded with 20,000 windows, so mostly misses;
//   and the bare server again in one process a core, burning in each request the CPU mdq spent beyond
//   it: the latency mdq's CPU a request allows on this machine at best.
// Beside each latency, the server's CPU per request (/proc): it moves far less with the machine's load.
// Run: npm run bench -- uncached   (BENCH_ROUNDS alternating rounds, default 21, after WARM_UP rounds; BENCH_SECONDS per load, default 5)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent } from 'node:http'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { generateKey, hashKey } from '../src/auth/api-keys.js'
import { openStores } from '../src/store/backends.js'
import { bareInstrument } from '../src/domain/instrument.js'
import { answerBytes } from '../src/runner/query-runner.js'
import { readKlines } from '../src/query/klines.js'
import { SymbolContexts } from '../src/query/symbol-context.js'
import { SqliteMarketStore } from '../src/store/sqlite/sqlite-market-store.js'
import { seededRandom } from '../src/demo/demo-data.js'
import { sessionMinutes, tradingDays } from '../test/helpers/arbitraries.js'
import { captureBodies, fixedPaths } from './captured-paths.js'
import { walk } from './full-market-store.js'
import { bareServer, getBody, startMdq, startServer, stopServer, type Server } from './servers.js'
import { cpuMs, median, row, treeCpuMs } from './measure.js'
import { requireWrk, wrkFiles, wrkLoad, type WrkLoad } from './wrk.js'
import { aggregatingOnRead } from '../test/helpers/aggregating-on-read.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21)
/**
 * Unmeasured rounds first: a long-running server answers with optimized code, so that is what is
 * timed. With the pool each worker warms its own code on its share of the rounds: after 10 rounds a
 * 60m answer still took 13-27 ms to its first byte, after 60 it took 7-10 ms (curl, load average 2).
 */
const WARM_UP = 60
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const SYMBOL = '600000.SH'
const DAYS = 2600 // x 240 CN minutes = 624,000 1m bars: 10,400 60m bars
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-uncached-'))
const db = join(dir, 'uncached.db')

async function buildStore(): Promise<{ key: string; minutes: number[] }> {
  const days = tradingDays('SH', 16000, DAYS)
  const minutes = sessionMinutes('SH', days)
  const { market: store, keys } = await openStores({ store: db, create: true })
  // Seeded cent random walks: a 1m bar moves at most 0.4%, so 624,000 of them stay a plausible price.
  const rnd = seededRandom(7)
  await store.write({
    instruments: [bareInstrument(SYMBOL, { type: 'stock' })],
    bars: [
      { symbol: SYMBOL, period: '1m', bars: walk(minutes, rnd, 1000, 1e4, 0.004) },
      { symbol: SYMBOL, period: '1d', bars: walk(days, rnd, 1000, 1e6) },
    ],
    exFactors: [
      {
        symbol: SYMBOL,
        events: Array.from({ length: 8 }, (_, k) => ({ timestamp: days[200 + k * 300], exFactor: 1.02 + k / 100 })),
      },
    ],
  })
  const key = generateKey()
  await keys.createKey({ name: 'bench', hash: hashKey(key), ratePerMin: null, burst: null })
  await store.close()
  await keys.close()
  return { key, minutes }
}

const servers: Server[] = []
try {
  requireWrk()
  const { key, minutes } = await buildStore()
  const loadAtStart = loadavg()[0].toFixed(1)
  const mdq = await startMdq(db, ['--cache-mb', '0', '--rate-limit', 'off'])
  servers.push(mdq)
  // 400 windows drawn once; both servers answer random picks of them (the bare one with mdq's bytes).
  const windows = fixedPaths(
    400,
    42,
    (r) =>
      `/v1/klines?symbol=${SYMBOL}&period=1m&count=1000&adjust=forward&end_time=${minutes[1000 + Math.floor(r() * (minutes.length - 1000))]}`,
  )
  const loadFiles = wrkFiles(dir, windows)
  const hourPath = `/v1/klines?symbol=${SYMBOL}&period=60m&count=10000&adjust=forward`
  const bodies = await captureBodies(mdq.url, key, [...windows, hourPath], join(dir, 'bodies.json'))
  const nulls = windows.map((w) => bodies[w]).filter((b) => b.includes('null')).length
  if (nulls > 0) throw new Error(`${nulls} of ${windows.length} windows hold a null: the generated prices are broken`)
  const one = new Agent({ keepAlive: true, maxSockets: 1 })
  const bare = await startServer([bareServer, join(dir, 'bodies.json')])
  servers.push(bare)
  // The default response cache (64 MB) under mostly misses: 20,000 windows drawn once (about 1 GB of answers).
  const cached = await startMdq(db, ['--rate-limit', 'off'])
  servers.push(cached)
  mkdirSync(join(dir, 'many'))
  const manyFiles = wrkFiles(
    join(dir, 'many'),
    fixedPaths(
      20_000,
      7,
      (r) =>
        `/v1/klines?symbol=${SYMBOL}&period=1m&count=1000&adjust=forward&end_time=${minutes[1000 + Math.floor(r() * (minutes.length - 1000))]}`,
    ),
  )

  // 60m: HTTP (rollups) and in-process rollups vs in-process aggregate-on-read, alternating.
  const store = SqliteMarketStore.open(db, { readonly: true })
  const onRead = aggregatingOnRead(store)
  const q = { symbol: SYMBOL, period: '60m' as const, count: 10_000, adjust: 'forward' as const }
  const times = {
    http: [] as number[],
    bare: [] as number[],
    bytes: [] as number[],
    rollups: [] as number[],
    onRead: [] as number[],
  }
  const contexts = new SymbolContexts(store)
  const task = { kind: 'klines', symbol: SYMBOL, period: '60m', range: { count: 10_000, adjust: 'forward' } } as const
  for (let r = 0; r < WARM_UP; r++) {
    await getBody(mdq.url + hourPath, key, 'identity', one)
    await getBody(bare.url + hourPath, key, 'identity', one)
    await readKlines(store, new SymbolContexts(store), q)
    await answerBytes(store, contexts, task)
    await readKlines(onRead, new SymbolContexts(onRead), q)
  }
  // The HTTP rounds first, then the in-process ones: the client's own garbage from an in-process
  // round (aggregate-on-read makes hundreds of MB) was collected during the next HTTP request and
  // counted in its latency (18 ms medians where curl saw 7-10 ms first bytes).
  let serverCpu = 0
  let bytesCpu = 0
  for (let r = 0; r < ROUNDS; r++) {
    const cpu0 = cpuMs(mdq.child.pid!)
    const t = performance.now()
    await getBody(mdq.url + hourPath, key, 'identity', one)
    times.http.push(performance.now() - t)
    serverCpu += cpuMs(mdq.child.pid!) - cpu0
    const t1 = performance.now()
    await getBody(bare.url + hourPath, key, 'identity', one)
    times.bare.push(performance.now() - t1)
  }
  for (let r = 0; r < ROUNDS; r++) {
    const own0 = process.cpuUsage()
    let t = performance.now()
    await answerBytes(store, contexts, task)
    times.bytes.push(performance.now() - t)
    const own = process.cpuUsage(own0)
    bytesCpu += (own.user + own.system) / 1000
    t = performance.now()
    await readKlines(store, new SymbolContexts(store), q)
    times.rollups.push(performance.now() - t)
    t = performance.now()
    await readKlines(onRead, new SymbolContexts(onRead), q)
    times.onRead.push(performance.now() - t)
  }
  one.destroy()
  // One window's answer bytes in-process (read, fill, adjust, JSON): what a request costs beyond HTTP and the pool.
  const windowTasks = windows.map(
    (w) =>
      ({
        kind: 'klines',
        symbol: SYMBOL,
        period: '1m',
        range: { count: 1000, endTime: Number(/end_time=(\d+)/.exec(w)![1]), adjust: 'forward' },
      }) as const,
  )
  for (const w of windowTasks) await answerBytes(store, contexts, w)
  const window0 = process.cpuUsage()
  for (let pass = 0; pass < 3; pass++) for (const w of windowTasks) await answerBytes(store, contexts, w)
  const windowCpu = process.cpuUsage(window0)
  const windowMs = (windowCpu.user + windowCpu.system) / 1000 / (3 * windowTasks.length)

  // 1m windows at 32 connections, alternating with the bare server and with mdq again as a gzip client
  // (Accept-Encoding: gzip, as the TickFlow SDK and most HTTP clients send); the server's CPU per request from /proc.
  type Measured = WrkLoad & { cpu: number; mainCpu: number }
  const mdqLoads: Measured[] = []
  const bareLoads: Measured[] = []
  const gzipLoads: Measured[] = []
  const cachedLoads: Measured[] = []
  /** The spun bare servers' loads, by the share of mdq's CPU beyond the bare server's that each request burns. */
  const spunRows = [
    [1, [] as (Measured & { spin: number })[]],
    [0.5, [] as (Measured & { spin: number })[]],
  ] as const
  const rounds = Math.max(1, Math.min(ROUNDS, 3))
  await wrkLoad(mdq.url, key, loadFiles, 1) // warm-up
  await wrkLoad(bare.url, key, loadFiles, 1)
  await wrkLoad(mdq.url, key, loadFiles, 1, 32, { encoding: 'gzip' })
  await wrkLoad(cached.url, key, manyFiles, 1)
  // The main thread's share apart (HTTP, routing, hooks, the pool's hops); the rest is the query workers and V8's GC helpers.
  const measured = async (
    server: Server,
    encoding: 'identity' | 'gzip' = 'identity',
    files = loadFiles,
  ): Promise<Measured> => {
    const pid = server.child.pid!
    const cpu0 = treeCpuMs(pid)
    const main0 = cpuMs(pid, pid)
    const l = await wrkLoad(server.url, key, files, SECONDS, 32, { encoding })
    return { ...l, cpu: treeCpuMs(pid) - cpu0, mainCpu: cpuMs(pid, pid) - main0 }
  }
  const cpuPerRequest = (l: Measured) => l.cpu / l.requests
  for (let r = 0; r < rounds; r++) {
    mdqLoads.push(await measured(mdq))
    bareLoads.push(await measured(bare))
    // What mdq's CPU a request allows on this machine at best: the bare server in one process a core
    // (no hops between threads), burning in each request the CPU mdq spent beyond the bare server's,
    // and half of it. A burn costs the server more than it counts (its system calls, more switches),
    // so a first load, after a warm-up, corrects it to make the server's CPU a request the one wanted
    // (a load as long as the measured one: a 2 s load gave 20% more CPU a request than a 4 s one).
    const extra = cpuPerRequest(mdqLoads[r]) - cpuPerRequest(bareLoads[r])
    for (const [share, loads] of spunRows) {
      const want = extra * share
      let spin = Math.round(want * 1000)
      for (const last of [false, true]) {
        const spun = await startServer([
          bareServer,
          join(dir, 'bodies.json'),
          '--processes',
          String(availableParallelism()),
          '--spin-us',
          String(spin),
        ])
        await wrkLoad(spun.url, key, loadFiles, 1) // warm-up: the first second costs more (the bodies' GC, compiling)
        if (last) loads.push({ ...(await measured(spun)), spin })
        else
          spin = Math.max(
            0,
            Math.round(spin + (want - (cpuPerRequest(await measured(spun)) - cpuPerRequest(bareLoads[r]))) * 1000),
          )
        await stopServer(spun)
      }
    }
    gzipLoads.push(await measured(mdq, 'gzip'))
    cachedLoads.push(await measured(cached, 'identity', manyFiles))
  }
  await store.close()
  console.log(
    `\nuncached (--cache-mb 0, --rate-limit off): ${minutes.length.toLocaleString('en')} 1m bars of one SH symbol, 8 events, forward; load average ${loadAtStart} at start, ${loadavg()[0].toFixed(1)} at end`,
  )
  row('10,000 forward 60m bars, one at a time', 'median ms', 'goal', 'server CPU ms/request')
  row('mdq over HTTP (stored rollups)', median(times.http).toFixed(1), '<= 10 ms', (serverCpu / ROUNDS).toFixed(1))
  row('bare node:http, same bytes (baseline)', median(times.bare).toFixed(1), '', '')
  row('in-process: the answer bytes', median(times.bytes).toFixed(1), '', (bytesCpu / ROUNDS).toFixed(1))
  row('in-process: the bars (stored rollups)', median(times.rollups).toFixed(1), '')
  row('in-process: aggregate-on-read (base)', median(times.onRead).toFixed(1), '')
  // wrk gives each load's percentiles: the median round's are printed.
  const mid = (ls: WrkLoad[], of: (l: WrkLoad) => number, digits = 1) => median(ls.map(of)).toFixed(digits)
  const perRequest = (ls: Measured[], of: (l: Measured) => number) =>
    (ls.reduce((a, l) => a + of(l), 0) / ls.reduce((a, l) => a + l.requests, 0)).toFixed(2)
  console.log(
    `random 1,000-bar 1m windows at 32 connections, loaded by wrk: the median of ${rounds} rounds of ${SECONDS} s; the server's CPU ms a request, all threads and the main thread's`,
  )
  row('', 'p50 ms', 'p99 ms', 'req/s', 'CPU ms/req', 'main thread')
  for (const [name, ls] of [
    ['mdq', mdqLoads],
    ['bare node:http, same bytes (baseline)', bareLoads],
    ['mdq, Accept-Encoding: gzip', gzipLoads],
    ['mdq, cache on (64 MB), 20,000 windows', cachedLoads],
  ] as const) {
    row(
      name,
      mid(ls, (l) => l.p50),
      mid(ls, (l) => l.p99),
      mid(ls, (l) => l.perS, 0),
      perRequest(ls, (l) => l.cpu),
      perRequest(ls, (l) => l.mainCpu),
    )
  }
  for (const [share, ls] of spunRows) {
    row(
      `bare, ${availableParallelism()} processes, + ${share === 1 ? "mdq's" : `${share} of mdq's`} CPU`,
      mid(ls, (l) => l.p50),
      mid(ls, (l) => l.p99),
      mid(ls, (l) => l.perS, 0),
      perRequest(ls, (l) => l.cpu),
    )
    console.log(`  (burning ${ls.map((l) => `${l.spin} us`).join(', ')} counted a request by round)`)
  }
  console.log(
    '  (the bare server with no hops between threads, each request burning the CPU mdq spent beyond it, or a share: the latency that CPU alone allows here)',
  )
  const gzipBytes = median(gzipLoads.map((l) => l.bytes / l.requests))
  const plainBytes = median(mdqLoads.map((l) => l.bytes / l.requests))
  console.log(
    `gzip against plain (mdq's rows above): ${(median(gzipLoads.map((l) => l.perS)) / median(mdqLoads.map((l) => l.perS))).toFixed(2)} of the req/s, ${(gzipBytes / plainBytes).toFixed(2)} of the bytes a response (${gzipBytes.toFixed(0)} against ${plainBytes.toFixed(0)}, headers included)`,
  )
  row("in-process: one window's answer bytes", '', '', '', windowMs.toFixed(2))
} finally {
  for (const server of servers) await stopServer(server)
  rmSync(dir, { recursive: true, force: true })
}
