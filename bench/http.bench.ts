// HTTP workloads W1-W5 with autocannon over loopback, each against `mdq serve` and, in the same run,
// against a bare node:http server returning the identical response bytes for every path asked (the
// per-request floor). W3 and W5 run against an mdq with its response cache off: the uncached path.
// Run: npm run bench -- http    (BENCH_SECONDS=5 per workload and server by default)
import autocannon from 'autocannon'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { RedisServer } from '../test/helpers/redis.js'
import { redisServer } from '../test/helpers/requirements.js'
import { buildBenchStore } from './bench-store.js'
import { median, row } from './measure.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 32
const here = import.meta.dirname
const dir = mkdtempSync(join(tmpdir(), 'mdq-bench-http-'))
const db = join(dir, 'bench.db')

async function startChild(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  while (!/(\d+)\s*$/m.test(out) && !/127\.0\.0\.1:(\d+)/.test(out)) await new Promise((r) => setTimeout(r, 20))
  const port = (/127\.0\.0\.1:(\d+)/.exec(out) ?? /^(\d+)\s*$/m.exec(out))![1]
  child.stdout!.resume()
  return { child, url: `http://127.0.0.1:${port}` }
}

interface Workload {
  name: string
  /** The path of every request (or a fresh one per request). */
  path: string | (() => string)
  /** Answered by the mdq with its response cache off: every request does the whole work. */
  uncached?: boolean
}
const pathOf = (w: Workload) => (typeof w.path === 'string' ? w.path : w.path())

/** A deterministic pseudo-random sequence (mulberry32), so every run asks the same ranges. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function run(url: string, w: Workload, key: string, seconds = SECONDS): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'x-api-key': key },
    requests: [{ setupRequest: (req) => ({ ...req, path: pathOf(w) }) }],
  })
}

try {
  const { key, firstMinute, lastMinute } = await buildBenchStore(db)
  const span = lastMinute - firstMinute
  // W3: 1,000-bar 1m ranges from a pool of 400 random starts, each a different answer.
  const next = random(42)
  const ranges = Array.from({ length: 400 }, () => {
    const start = Math.floor(firstMinute + next() * (span - 30 * 86_400_000))
    return `/v1/klines?symbol=601398.SH&period=1m&count=1000&start_time=${start}&end_time=${start + 20 * 86_400_000}`
  })
  const randomRange = () => ranges[Math.floor(Math.random() * ranges.length)]
  const workloads: Workload[] = [
    { name: 'W1 latest 100 daily, forward', path: '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward' },
    { name: 'W2 10000 1m bars, forward', path: '/v1/klines?symbol=601398.SH&period=1m&count=10000&adjust=forward' },
    { name: 'W3 random 1000-bar 1m ranges', path: randomRange, uncached: true },
    { name: 'W4 10000 60m bars', path: '/v1/klines?symbol=601398.SH&period=60m&count=10000&adjust=forward' },
    { name: 'W5 10000 60m bars, uncached', path: '/v1/klines?symbol=601398.SH&period=60m&count=10000&adjust=forward', uncached: true },
  ]
  const cacheMb = process.env.BENCH_CACHE_MB ?? '64'
  const mdq = await startChild([join(here, '..', '..', 'bin', 'mdq.js'), '--db', db, 'serve', '--port', '0', '--cache-mb', cacheMb])
  const uncached = await startChild([join(here, '..', '..', 'bin', 'mdq.js'), '--db', db, 'serve', '--port', '0', '--cache-mb', '0'])
  // The bare server gets the exact bytes mdq answers, for every path a workload asks (all 400 of W3).
  const bodies: Record<string, string> = {}
  for (const p of [...new Set([...workloads.map((w) => (typeof w.path === 'string' ? w.path : '')).filter(Boolean), ...ranges])]) {
    bodies[p] = await (await fetch(mdq.url + p, { headers: { 'x-api-key': key } })).text()
  }
  writeFileSync(join(dir, 'bodies.json'), JSON.stringify(bodies))
  const bare = await startChild([join(here, 'bare-server.js'), join(dir, 'bodies.json')])
  console.log(`http bench: ${CONNECTIONS} connections, ${SECONDS} s per workload and server, autocannon over loopback; mdq logs at info, response cache ${cacheMb} MB (W3, W5: off)`)
  row('workload', 'server', 'req/s', 'p50 ms', 'p99 ms', 'body KB', 'vs bare', 'ms/req')
  for (const w of workloads) {
    const size = (Buffer.byteLength(bodies[typeof w.path === 'string' ? w.path : ranges[0]]) / 1024).toFixed(0)
    const server = w.uncached ? uncached : mdq
    // One warm-up second per server and workload (JIT, caches), then the measured run.
    await run(bare.url, w, key, 1)
    await run(server.url, w, key, 1)
    const b = await run(bare.url, w, key)
    const m = await run(server.url, w, key)
    for (const [who, r] of [['mdq', m], ['bare', b]] as const) if (r.non2xx > 0 || r.errors > 0) throw new Error(`${w.name} (${who}): ${r.non2xx} non-2xx answers, ${r.errors} errors`)
    // ms/req: 1000 / req/s, the time one request holds mdq's single thread at saturation.
    row(w.name, 'bare node:http', b.requests.average.toFixed(0), b.latency.p50, b.latency.p99, size, '1.00', '')
    row('', w.uncached ? 'mdq, cache off' : 'mdq', m.requests.average.toFixed(0), m.latency.p50, m.latency.p99, size, (m.requests.average / b.requests.average).toFixed(2), (1000 / m.requests.average).toFixed(2))
  }
  // The limiter's cost on W1: the same server without it, and with Redis (a local redis-server).
  // The machine is shared and noisy: the variants alternate over ROUNDS rounds; medians are compared.
  const w1 = workloads[0]
  const variants: [string, string[]][] = [['mdq, no limiter', ['--rate-limit', 'off']], ['mdq, memory limiter', []]]
  const redis = redisServer() ? undefined : await RedisServer.start()
  if (redis) variants.push(['mdq, Redis limiter', ['--redis-url', redis.url]])
  const servers = await Promise.all(variants.map(([, flags]) => startChild([join(here, '..', '..', 'bin', 'mdq.js'), '--db', db, 'serve', '--port', '0', '--cache-mb', cacheMb, ...flags])))
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
  const results = variants.map(() => [] as autocannon.Result[])
  for (const s of servers) await run(s.url, w1, key, 1) // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    for (const [v, s] of servers.entries()) {
      const r = await run(s.url, { ...w1 }, key, Math.max(2, Math.round(SECONDS / 2)))
      if (r.non2xx > 0) throw new Error(`${variants[v][0]}: ${r.non2xx} non-2xx answers`)
      results[v].push(r)
    }
  }
  console.log(`\nlimiter cost on W1: ${ROUNDS} alternating rounds of ${Math.max(2, Math.round(SECONDS / 2))} s, medians`)
  row('variant', '', 'req/s', 'p50 ms', 'p99 ms', '', 'vs no limiter')
  const base = median(results[0].map((r) => r.requests.average))
  for (const [v, [name]] of variants.entries()) {
    const rps = median(results[v].map((r) => r.requests.average))
    row(name, '', rps.toFixed(0), median(results[v].map((r) => r.latency.p50)), median(results[v].map((r) => r.latency.p99)), '', (rps / base).toFixed(2))
  }
  for (const s of servers) {
    s.child.kill('SIGTERM')
    await once(s.child, 'exit')
  }
  await redis?.stop()
  for (const c of [mdq.child, uncached.child, bare.child]) {
    c.kill('SIGTERM')
    await once(c, 'exit')
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
