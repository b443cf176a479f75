// Bulk pull of the whole market's daily history through /v1/klines/batch (100 symbols a request, 8
// connections), with the query work in worker threads (--workers N, one per core) and, in the
// same run, in the main thread (--workers 0, the baseline); the server's CPU use from /proc/PID/stat;
// the same pull with `Accept-Encoding: gzip` (as the Python SDK sends it); and W1 (latest 100 daily
// bars, cached) against a bare node:http server sending the same bytes, both loaded by wrk.
// The load comes from wrk (C; `apt-get install -y wrk`), taking the batches in turn for
// BENCH_PULL_SECONDS: a node:http client in this process took 0.4 of the 2 cores the server needs.
// One pull through node:http first checks every answer is a 200 and records each batch's bytes;
// the bars wrk read are counted from its bytes along that list (wrk's bytes also hold the headers and
// chunk sizes, a few kB against tens of MB a batch).
// Run: npm run bench -- bulk   (BENCH_ROUNDS=3 alternating rounds, medians; MDQ_BENCH_SYMBOLS shrinks the store;
// BENCH_ONLY=w1 runs the W1 part alone)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fullMarketStore } from './full-market-store.js'
import { bareServer, startMdq, startServer, stopServer } from './servers.js'
import { bulkPaths, checkedPull, CONNECTIONS, PER_REQUEST, pull, type Pull } from './bulk-pull.js'
import { loadAverage, median, row } from './measure.js'
import { alternatingLoads, requireWrk, wrkFiles } from './wrk.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const PULL_SECONDS = Number(process.env.BENCH_PULL_SECONDS ?? 10)
const W1_ONLY = process.env.BENCH_ONLY === 'w1'
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-bulk-'))

try {
  requireWrk()
  const market = await fullMarketStore()
  const workers = availableParallelism()
  const serve = (flags: string[]) => startMdq(market.db, ['--rate-limit', 'off', ...flags])
  if (!W1_ONLY) {
    const pooled = await serve(['--cache-mb', '0', '--workers', String(workers)])
    const inThread = await serve(['--cache-mb', '0', '--workers', '0'])
    const variants = [
      ['main thread (--workers 0, baseline)', inThread, 'identity'],
      [`worker pool (--workers ${workers}, one per core)`, pooled, 'identity'],
      ['worker pool, Accept-Encoding: gzip', pooled, 'gzip, deflate'],
    ] as const
    const { paths, barsPerBatch } = bulkPaths(market)
    const files = wrkFiles(dir, paths)
    // The checked pulls (also the warm-up: JIT, page cache); the plain answers must match byte for byte in size.
    const batchBytes: number[][] = []
    for (const [, server, encoding] of variants) batchBytes.push(await checkedPull(server, paths, market.key, encoding))
    if (batchBytes[0].join() !== batchBytes[1].join())
      throw new Error('the pool and the main thread answered different sizes')
    const results = variants.map(() => [] as Pull[])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [v, [, server, encoding]] of variants.entries())
        results[v].push(await pull(server, files, market.key, encoding, batchBytes[v], barsPerBatch, PULL_SECONDS))
    }
    const load = loadAverage()
    console.log(
      `\nbulk pull: ${market.symbols.length} symbols, ${market.dailyBars} daily bars, forward, uncached (--cache-mb 0), ${PER_REQUEST} symbols a request, ${CONNECTIONS} connections (wrk, ${PULL_SECONDS} s a round, the batches in turn); median of ${ROUNDS} alternating rounds; load ${load}`,
    )
    // CPU seconds per million bars: what the work costs, whatever share of the cores the machine's load left the server;
    // "main thread": the main thread's part of it (with --workers 0, all the work; with a pool, HTTP and the hand-off).
    // "client": wrk's cores on the same 2 cores; "idle" and "irq": the machine's idle cores, and its
    // cores in interrupts (loopback TCP's receiving, charged to no process): server + client + irq
    // near 2, and idle near 0, mean the machine is full.
    row(
      'variant',
      'market s',
      'bars/s',
      'cores',
      'CPU s/Mbars',
      'main thread',
      'client',
      'idle',
      'irq',
      'MB a pull',
      'vs baseline',
    )
    const base = median(results[0].map((x) => x.rate))
    const plain = median(results[1].map((x) => x.rate))
    for (const [v, [name]] of variants.entries()) {
      const r = median(results[v].map((x) => x.rate))
      const cpuPerM = median(results[v].map((x) => (x.cores / x.rate) * 1e6))
      const mainPerM = median(results[v].map((x) => (x.mainCores / x.rate) * 1e6))
      const mb = batchBytes[v].reduce((a, b) => a + b, 0) / 1e6
      const mid = (of: (x: Pull) => number) => median(results[v].map(of)).toFixed(2)
      row(
        name,
        (market.dailyBars / r).toFixed(2),
        `${(r / 1e6).toFixed(2)}M`,
        mid((x) => x.cores),
        cpuPerM.toFixed(2),
        mainPerM.toFixed(2),
        mid((x) => x.clientCores),
        mid((x) => x.idleCores),
        mid((x) => x.irqCores),
        mb.toFixed(0),
        (r / base).toFixed(2),
      )
    }
    const gzip = median(results[2].map((x) => x.rate))
    const cores = median(results[1].map((x) => x.cores))
    console.log(`goal bars/s >= 3M: ${plain >= 3e6 ? 'met' : 'missed'} (${(plain / 1e6).toFixed(2)}M)`)
    console.log(
      `goal server CPU >= 1.7 of 2 cores: ${cores >= 1.7 ? 'met' : 'missed'} (${cores.toFixed(3)}; the machine's idle cores meanwhile: ${median(results[1].map((x) => x.idleCores)).toFixed(2)})`,
    )
    console.log(`goal gzip >= 0.7 of plain: ${gzip / plain >= 0.7 ? 'met' : 'missed'} (${(gzip / plain).toFixed(2)})`)
    await stopServer(inThread)
    await stopServer(pooled)
  }

  // W1 cached: mdq (a pool of one worker per core, cache on) against a bare node:http server with the same bytes.
  const w1 = `/v1/klines?symbol=${market.symbols[0]}&period=1d&count=100&adjust=forward`
  const mdq = await serve(['--workers', String(workers)])
  const body = await (await fetch(mdq.url + w1, { headers: { 'x-api-key': market.key } })).text()
  writeFileSync(join(dir, 'bodies.json'), JSON.stringify({ [w1]: body }))
  const bare = await startServer([bareServer, join(dir, 'bodies.json')])
  // wrk, as for the pull: any error or non-2xx answer fails the load.
  mkdirSync(join(dir, 'w1'))
  const w1Files = wrkFiles(join(dir, 'w1'), [w1])
  const [b, m] = (await alternatingLoads([bare.url, mdq.url], market.key, w1Files, SECONDS, ROUNDS)).map((l) => l.perS)
  const w1Load = loadAverage()
  console.log(
    `\nW1 cached (latest 100 daily bars, forward), 32 connections (wrk), ${ROUNDS} alternating rounds of ${SECONDS} s, medians; load ${w1Load}`,
  )
  row('server', 'req/s', 'vs bare')
  row('bare node:http (same bytes)', b.toFixed(0), '1.00')
  row('mdq', m.toFixed(0), (m / b).toFixed(2))
  console.log(`goal W1 >= 0.6 of bare: ${m / b >= 0.6 ? 'met' : 'missed'}`)
  await stopServer(mdq)
  await stopServer(bare)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
