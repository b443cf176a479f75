// HTTP workloads W1-W4 with autocannon over loopback, each against `mdq serve` and, in the same run,
// against a bare node:http server returning the identical response bytes (the per-request floor).
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
import { row } from './measure.js'

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
}
const pathOf = (w: Workload) => (typeof w.path === 'string' ? w.path : w.path())

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
  // W3: a new random range every request (never a cache hit): 20 days of 1m from a random start.
  const randomRange = () => {
    const start = Math.floor(firstMinute + Math.random() * (span - 30 * 86_400_000))
    return `/v1/klines?symbol=601398.SH&period=1m&count=1000&start_time=${start}&end_time=${start + 20 * 86_400_000}`
  }
  const workloads: Workload[] = [
    { name: 'W1 latest 100 daily, forward', path: '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward' },
    { name: 'W2 10000 1m bars, forward', path: '/v1/klines?symbol=601398.SH&period=1m&count=10000&adjust=forward' },
    { name: 'W3 random 1000-bar 1m ranges', path: randomRange },
    { name: 'W4 10000 60m bars', path: '/v1/klines?symbol=601398.SH&period=60m&count=10000&adjust=forward' },
  ]
  const cacheMb = process.env.BENCH_CACHE_MB ?? '64'
  const mdq = await startChild([join(here, '..', '..', 'bin', 'mdq.js'), '--db', db, 'serve', '--port', '0', '--cache-mb', cacheMb])
  // The bare server gets the exact bytes mdq answers (W3: one of its ranges, for every path).
  const bodies: Record<string, string> = {}
  const firstPaths = workloads.map(pathOf)
  for (const p of firstPaths) bodies[p] = await (await fetch(mdq.url + p, { headers: { 'x-api-key': key } })).text()
  writeFileSync(join(dir, 'bodies.json'), JSON.stringify(bodies))
  const bare = await startChild([join(here, 'bare-server.js'), join(dir, 'bodies.json')])
  console.log(`http bench: ${CONNECTIONS} connections, ${SECONDS} s per workload and server, autocannon over loopback; mdq logs at info, response cache ${cacheMb} MB`)
  row('workload', 'server', 'req/s', 'p50 ms', 'p99 ms', 'body KB', 'vs bare')
  for (const [k, w] of workloads.entries()) {
    const size = (Buffer.byteLength(bodies[firstPaths[k]]) / 1024).toFixed(0)
    // One warm-up second per server and workload (JIT, caches), then the measured run.
    await run(bare.url, w, key, 1)
    await run(mdq.url, w, key, 1)
    const b = await run(bare.url, w, key)
    const m = await run(mdq.url, w, key)
    if (m.non2xx > 0 || m.errors > 0) throw new Error(`${w.name}: ${m.non2xx} non-2xx answers, ${m.errors} errors`)
    row(w.name, 'bare node:http', b.requests.average.toFixed(0), b.latency.p50, b.latency.p99, size, '1.00')
    row('', 'mdq', m.requests.average.toFixed(0), m.latency.p50, m.latency.p99, size, (m.requests.average / b.requests.average).toFixed(2))
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
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
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
  for (const c of [mdq.child, bare.child]) {
    c.kill('SIGTERM')
    await once(c, 'exit')
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
