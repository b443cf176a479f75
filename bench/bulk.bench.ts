// Bulk pull of the whole market's daily history through /v1/klines/batch (100 symbols a request, 8
// connections), with the query work in worker threads (--workers N, one per core) and, in the
// same run, in the main thread (--workers 0, the baseline); the server's CPU use from /proc/PID/stat;
// the same pull with `Accept-Encoding: gzip` (as the Python SDK sends it); and W1 (latest 100 daily
// bars, cached) against a bare node:http server sending the same bytes.
// Run: npm run bench -- bulk   (BENCH_ROUNDS=3 alternating rounds, medians; MDQ_BENCH_SYMBOLS shrinks the store;
// BENCH_ONLY=w1 runs the W1 part alone)
import autocannon from 'autocannon'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fullMarketStore } from './full-market-store.js'
import { bareServer, startMdq, startServer, stopServer, type Server } from './servers.js'
import { cpuMs, loadAverage, median, row } from './measure.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const W1_ONLY = process.env.BENCH_ONLY === 'w1'
const CONNECTIONS = 8
const PER_REQUEST = 100
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-bulk-'))

/** One GET; resolves with the body's byte length (the client neither parses nor decompresses: its CPU is the server's too). */
function get(agent: Agent, url: string, key: string, encoding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key, 'Accept-Encoding': encoding } }, (res) => {
      let bytes = 0
      res.on('data', (c: Buffer) => (bytes += c.length))
      res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`${url.slice(0, 120)}: ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

interface Pull {
  ms: number
  cores: number
  /** The main thread's CPU seconds (the rest is the workers' and V8's helper threads'). */
  mainCpu: number
  /** The cores this bench process (the client: 8 connections reading the answers) used meanwhile, on the same machine. */
  clientCores: number
  bytes: number
}

/** Every symbol's whole forward-adjusted daily history, 100 a request, over 8 keep-alive connections. */
async function pull(server: Server, symbols: readonly string[], key: string, encoding: string): Promise<Pull> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS })
  const batches: string[] = []
  for (let i = 0; i < symbols.length; i += PER_REQUEST) batches.push(symbols.slice(i, i + PER_REQUEST).join(','))
  let next = 0
  let bytes = 0
  const pid = server.child.pid!
  const cpu0 = cpuMs(pid) / 1000
  const main0 = cpuMs(pid, pid) / 1000
  const client0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < batches.length) {
        const n = await get(agent, `${server.url}/v1/klines/batch?symbols=${batches[next++]}&period=1d&adjust=forward&count=10000`, key, encoding)
        bytes += n // after the await: `bytes += await ...` would add to a stale total
      }
    }),
  )
  const ms = performance.now() - t0
  const cores = (cpuMs(pid) / 1000 - cpu0) / (ms / 1000)
  const mainCpu = cpuMs(pid, pid) / 1000 - main0
  const client = process.cpuUsage(client0)
  const clientCores = (client.user + client.system) / 1000 / ms
  agent.destroy()
  return { ms, cores, mainCpu, clientCores, bytes }
}


try {
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
    const results = variants.map(() => [] as Pull[])
    await pull(inThread, market.symbols.slice(0, 200), market.key, 'identity') // warm-up: JIT, page cache
    await pull(pooled, market.symbols.slice(0, 200), market.key, 'identity')
    for (let round = 0; round < ROUNDS; round++) for (const [v, [, server, encoding]] of variants.entries()) results[v].push(await pull(server, market.symbols, market.key, encoding))
    const load = loadAverage()
    console.log(`\nbulk pull: ${market.symbols.length} symbols, ${market.dailyBars} daily bars, forward, uncached (--cache-mb 0), ${PER_REQUEST} symbols a request, ${CONNECTIONS} connections; median of ${ROUNDS} alternating rounds; load ${load}`)
    // CPU seconds per million bars: what the work costs, whatever share of the cores the machine's load left the server;
    // "main thread": the main thread's part of it (with --workers 0, all the work; with a pool, HTTP and the hand-off).
    // "client": the cores of this process reading the answers on the same 2 cores; server + client near 2 means the machine is full.
    row('variant', 's', 'bars/s', 'cores', 'CPU s/Mbars', 'main thread', 'client', 'MB sent', 'vs baseline')
    const rate = (r: Pull) => market.dailyBars / (r.ms / 1000)
    const base = median(results[0].map(rate))
    const plain = median(results[1].map(rate))
    for (const [v, [name]] of variants.entries()) {
      const r = median(results[v].map(rate))
      const cpuPerM = median(results[v].map((x) => (x.cores * x.ms) / 1000 / (market.dailyBars / 1e6)))
      const mainPerM = median(results[v].map((x) => x.mainCpu / (market.dailyBars / 1e6)))
      row(name, (market.dailyBars / r).toFixed(2), `${(r / 1e6).toFixed(2)}M`, median(results[v].map((x) => x.cores)).toFixed(2), cpuPerM.toFixed(2), mainPerM.toFixed(2), median(results[v].map((x) => x.clientCores)).toFixed(2), (median(results[v].map((x) => x.bytes)) / 1e6).toFixed(0), (r / base).toFixed(2))
    }
    const gzip = median(results[2].map(rate))
    const cores = median(results[1].map((x) => x.cores))
    console.log(`goal bars/s >= 3M: ${plain >= 3e6 ? 'met' : 'missed'} (${(plain / 1e6).toFixed(2)}M)`)
    console.log(`goal server CPU >= 1.7 of 2 cores: ${cores >= 1.7 ? 'met' : 'missed'} (${cores.toFixed(2)})`)
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
  const cannon = (url: string, seconds: number) => autocannon({ url: url + w1, connections: 32, duration: seconds, headers: { 'x-api-key': market.key } })
  await cannon(bare.url, 1)
  await cannon(mdq.url, 1)
  const rps = { bare: [] as number[], mdq: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    rps.bare.push((await cannon(bare.url, SECONDS)).requests.average)
    const m = await cannon(mdq.url, SECONDS)
    if (m.non2xx > 0) throw new Error(`W1: ${m.non2xx} non-2xx answers`)
    rps.mdq.push(m.requests.average)
  }
  const w1Load = loadAverage()
  console.log(`\nW1 cached (latest 100 daily bars, forward), 32 connections, ${ROUNDS} alternating rounds of ${SECONDS} s, medians; load ${w1Load}`)
  row('server', 'req/s', 'vs bare')
  row('bare node:http (same bytes)', median(rps.bare).toFixed(0), '1.00')
  row('mdq', median(rps.mdq).toFixed(0), (median(rps.mdq) / median(rps.bare)).toFixed(2))
  console.log(`goal W1 >= 0.6 of bare: ${median(rps.mdq) / median(rps.bare) >= 0.6 ? 'met' : 'missed'}`)
  await stopServer(mdq)
  await stopServer(bare)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
