// HTTP workloads W1-W5 loaded by wrk over loopback, each against `mdq serve` and, in the same run,
// against a bare node:http server returning the identical response bytes for every path asked (the
// per-request floor; "bare" in the table). W3 and W5 run against an mdq with its response cache off: the uncached path.
// wrk (bench/wrk.ts), a C client, leaves the shared cores to the servers: a node client in this process
// would take about a core itself and hold both servers near its own rate, flattering the ratios.
// The machine is shared and noisy: for each workload the two servers take turns over ROUNDS rounds and
// the table shows medians.
// Run: npm run bench -- http    (BENCH_SECONDS=5 a run, BENCH_ROUNDS=3 rounds by default)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RedisServer } from '../test/helpers/redis.js'
import { redisServer } from '../test/helpers/requirements.js'
import { buildBenchStore } from './bench-store.js'
import { captureBodies, fixedPaths } from './captured-paths.js'
import { row } from './measure.js'
import { bareServer, startMdq, startServer, stopServer } from './servers.js'
import { alternatingLoads, requireWrk, wrkFiles } from './wrk.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = 32
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-http-'))
const db = join(dir, 'bench.db')

interface Workload {
  name: string
  /** The path of every request, or the paths picked from at random. */
  path: string | readonly string[]
  /** Answered by the mdq with its response cache off: every request does the whole work. */
  uncached?: boolean
}
const pathsOf = (w: Workload) => (typeof w.path === 'string' ? [w.path] : w.path)

/** wrk's files of each workload, by name (its paths file and script in a folder of its own). */
const files = new Map<string, { script: string; paths: string }>()
function filesOf(w: Workload) {
  if (!files.has(w.name)) {
    const sub = join(dir, `w${files.size}`)
    mkdirSync(sub)
    files.set(w.name, wrkFiles(sub, pathsOf(w)))
  }
  return files.get(w.name)!
}
/** The servers take turns with the workload over ROUNDS rounds; each server's medians (any error or non-2xx answer fails it). */
const alternate = (urls: readonly string[], w: Workload, key: string, seconds = SECONDS) =>
  alternatingLoads(urls, key, filesOf(w), seconds, ROUNDS, CONNECTIONS)

try {
  requireWrk()
  const { key, firstMinute, lastMinute } = await buildBenchStore(db)
  const span = lastMinute - firstMinute
  // W3: 1,000-bar 1m ranges from a pool of 400 random starts, each a different answer.
  const ranges = fixedPaths(400, 42, (rnd) => {
    const start = Math.floor(firstMinute + rnd() * (span - 30 * 86_400_000))
    return `/v1/klines?symbol=601398.SH&period=1m&count=1000&start_time=${start}&end_time=${start + 20 * 86_400_000}`
  })
  const workloads: Workload[] = [
    { name: 'W1 latest 100 daily, forward', path: '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward' },
    { name: 'W2 10000 1m bars, forward', path: '/v1/klines?symbol=601398.SH&period=1m&count=10000&adjust=forward' },
    { name: 'W3 random 1000-bar 1m ranges', path: ranges, uncached: true },
    { name: 'W4 10000 60m bars', path: '/v1/klines?symbol=601398.SH&period=60m&count=10000&adjust=forward' },
    {
      name: 'W5 10000 60m bars, uncached',
      path: '/v1/klines?symbol=601398.SH&period=60m&count=10000&adjust=forward',
      uncached: true,
    },
  ]
  const cacheMb = process.env.BENCH_CACHE_MB ?? '64'
  const mdq = await startMdq(db, ['--cache-mb', cacheMb])
  const uncached = await startMdq(db, ['--cache-mb', '0'])
  // The bare server gets the exact bytes mdq answers, for every path a workload asks (all 400 of W3).
  const fixed = workloads.flatMap((w) => (typeof w.path === 'string' ? [w.path] : []))
  const bodies = await captureBodies(mdq.url, key, [...fixed, ...ranges], join(dir, 'bodies.json'))
  const bare = await startServer([bareServer, join(dir, 'bodies.json')])
  console.log(
    `http bench: ${CONNECTIONS} connections, wrk over loopback; per workload the bare server and mdq take turns over ${ROUNDS} rounds of ${SECONDS} s, medians; mdq logs at info, response cache ${cacheMb} MB (W3, W5: off)`,
  )
  row('workload', 'server', 'req/s', 'p50 ms', 'p99 ms', 'body KB', 'vs bare', 'ms/req')
  for (const w of workloads) {
    const size = (Buffer.byteLength(bodies[typeof w.path === 'string' ? w.path : ranges[0]]) / 1024).toFixed(0)
    const [bb, m] = await alternate([bare.url, (w.uncached ? uncached : mdq).url], w, key)
    // ms/req: 1000 / req/s, the time one request holds mdq's single thread at saturation.
    row(w.name, 'bare', bb.perS.toFixed(0), bb.p50.toFixed(1), bb.p99.toFixed(1), size, '1.00', '')
    row(
      '',
      w.uncached ? 'mdq (off)' : 'mdq',
      m.perS.toFixed(0),
      m.p50.toFixed(1),
      m.p99.toFixed(1),
      size,
      (m.perS / bb.perS).toFixed(2),
      (1000 / m.perS).toFixed(2),
    )
  }
  // The limiter's cost on W1: the same server without it, and with Redis (a local redis-server).
  const w1 = workloads[0]
  const variants: [string, string[]][] = [
    ['mdq, no limiter', ['--rate-limit', 'off']],
    ['mdq, memory limiter', []],
  ]
  const redis = redisServer() ? undefined : await RedisServer.start()
  if (redis) variants.push(['mdq, Redis limiter', ['--redis-url', redis.url]])
  const servers = await Promise.all(variants.map(([, flags]) => startMdq(db, ['--cache-mb', cacheMb, ...flags])))
  const limited = await alternate(
    servers.map((s) => s.url),
    w1,
    key,
    Math.max(2, Math.round(SECONDS / 2)),
  )
  console.log(
    `\nlimiter cost on W1: ${ROUNDS} alternating rounds of ${Math.max(2, Math.round(SECONDS / 2))} s, medians`,
  )
  row('variant', '', 'req/s', 'p50 ms', 'p99 ms', '', 'vs no limiter')
  for (const [v, [name]] of variants.entries()) {
    const r = limited[v]
    row(name, '', r.perS.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), '', (r.perS / limited[0].perS).toFixed(2))
  }
  for (const s of [...servers, mdq, uncached, bare]) await stopServer(s)
  await redis?.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
