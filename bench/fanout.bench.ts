// Streams fanned out across two instances, beside a bare `ws` relay run at the same time: 5,000
// symbols at one quote snapshot each per 3 s (a push every BENCH_FANOUT_PUSH_MS, default 100,
// carrying the next slice of the symbols) pushed to instance A's ingest listener; instances A and B
// (two `mdq serve` on one copy of the full-market store, sharing one Redis) serve BENCH_FANOUT_CLIENTS
// WebSocket clients (default 200, half on each) of 50 symbols each, one client of all 5,000 on each,
// and on A one client that never reads (a new one whenever A drops it). Per instance: push-to-receive
// latency p50/p99 (the first two cycles untimed), server CPU, RSS every 5 s, and for the clients that
// keep up every symbol's cycles checked for gaps and order. The baseline: the same pushes, sent
// alongside, through two bare relays (bench/bare-relay-server.ts) over the same Redis, with clients of
// their own; side by side, both meet the same moments of a shared machine.
// Run: npm run bench -- fanout   (BENCH_FANOUT_SECONDS, default 300)
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { MARKETS } from '../src/domain/market.js'
import { RedisServer } from '../test/helpers/redis.js'
import { until } from '../test/helpers/wait.js'
import { CYCLE_MS, fanoutFeed } from './fanout-feed.js'
import { printRelay, printShared, printSummary } from './fanout-report.js'
import { runSideBySide, type Relay } from './fanout-run.js'
import { copyStore, fullMarketStore, ingestKey } from './full-market-store.js'
import { nextWeekday } from './live-plan.js'
import { loadAverage } from './measure.js'
import { startMdq, startMdqWithIngest, startServer, stopServer, type Server } from './servers.js'

const SECONDS = Number(process.env.BENCH_FANOUT_SECONDS ?? 300)
const PUSH_MS = Number(process.env.BENCH_FANOUT_PUSH_MS ?? 100)
const CLIENTS = Number(process.env.BENCH_FANOUT_CLIENTS ?? 200)
const PER_CLIENT = 50
const WARMUP_CYCLES = 2

const tmp = mkdtempSync(join(tmpdir(), 'mdq-bench-fanout-'))
const servers: Server[] = []
let redis: RedisServer | undefined

/** The values of a metric's samples in mdq's /metrics whose labels include every one of `labels`. */
async function metric(base: string, name: string, ...labels: string[]): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text()
  let sum = 0
  for (const [, l = '', v] of text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm')))
    if (labels.every((want) => l.includes(want))) sum += Number(v)
  return sum
}

/** What the server counted: the stalled client's conflated snapshots and drops, and B's hop through Redis. */
async function printMetrics(a: string, b: string): Promise<void> {
  for (const [name, base] of [
    ['A', a],
    ['B', b],
  ]) {
    const [conflated, slow, other, stale] = await Promise.all([
      metric(base, 'mdq_stream_conflated_total'),
      metric(base, 'mdq_stream_dropped_clients_total', 'reason="slow"'),
      metric(base, 'mdq_stream_dropped_clients_total'),
      metric(base, 'mdq_stream_stale_total'),
    ])
    console.log(
      `mdq ${name} metrics: conflated ${conflated}, dropped clients ${other} (slow ${slow}), stale snapshots ${stale}`,
    )
  }
  const lag = 'mdq_stream_fanout_lag_seconds'
  const [sum, count, within] = await Promise.all([
    metric(b, `${lag}_sum`, 'origin="remote"'),
    metric(b, `${lag}_count`, 'origin="remote"'),
    metric(b, `${lag}_bucket`, 'origin="remote"', 'le="0.05"'),
  ])
  console.log(
    `B's fan-out lag (published on A -> handed to B's subscribers): mean ${((sum / count) * 1000).toFixed(1)} ms, ${((within / count) * 100).toFixed(1)}% of ${count} batches within 50 ms`,
  )
}

async function startMdqPair(db: string, redisUrl: string): Promise<[Server & { ingest: string }, Server]> {
  const flags = [
    '--rate-limit',
    'off',
    '--redis-url',
    redisUrl,
    // One key for every client: the caps per key are raised past the fleet's (its own figures, not the caps, are measured).
    '--stream-connections-per-key',
    String(CLIENTS + 10),
    '--stream-subscriptions-per-key',
    String(CLIENTS * PER_CLIENT * 10 + 100_000),
  ]
  const a = await startMdqWithIngest(['--db', db], flags)
  servers.push(a)
  const b = await startMdq(db, flags)
  servers.push(b)
  for (const s of [a, b])
    await until(async () => (await fetch(`${s.url}/readyz`)).status === 200, 'the instance to reach Redis')
  return [a, b]
}

async function mdqRelay(db: string, pushKey: string): Promise<Relay> {
  const [a, b] = await startMdqPair(db, redis!.url)
  return {
    pushUrl: a.ingest,
    pushKey,
    bases: [a.url, b.url],
    pids: [a.child.pid!, b.child.pid!],
    dropped: () => metric(a.url, 'mdq_stream_dropped_clients_total', 'reason="slow"'),
    heapUsed: (i) => metric([a, b][i].url, 'mdq_nodejs_heap_size_used_bytes'),
  }
}

async function bareRelay(): Promise<Relay> {
  const script = join(import.meta.dirname, 'bare-relay-server.js')
  const [a, b] = [await startServer([script, redis!.url]), await startServer([script, redis!.url])]
  servers.push(a, b)
  return {
    pushUrl: a.url,
    pushKey: 'none',
    bases: [a.url, b.url],
    pids: [a.child.pid!, b.child.pid!],
    dropped: async () => 0,
  }
}

try {
  const fm = await fullMarketStore()
  const db = copyStore(fm.db, tmp, 'fanout')
  const pushKey = await ingestKey(db)
  const feed = fanoutFeed(fm.symbols, nextWeekday(MARKETS.SH.zone.localDay(fm.lastMinuteMs)), SECONDS, PUSH_MS)
  redis = await RedisServer.start()
  console.log(
    `fanout: ${feed.symbols.length.toLocaleString('en-US')} symbols, one snapshot each per ${CYCLE_MS / 1000} s in ${feed.pushesPerCycle} pushes of ${feed.batch} (every ${PUSH_MS} ms), ${feed.cycles} cycles (${SECONDS} s); ${CLIENTS} clients of ${PER_CLIENT} symbols and 2 of all, ${CLIENTS / 2} + 1 per instance, and one that never reads on A, for mdq and the bare relays each; ${availableParallelism()} cores, load average ${loadAverage()} at start`,
  )
  const relays = [await mdqRelay(db, pushKey), await bareRelay()]
  const run = await runSideBySide(feed, relays, fm.key, redis.pid!, {
    clientsPerInstance: CLIENTS / 2,
    symbolsPerClient: PER_CLIENT,
    warmupPushes: WARMUP_CYCLES * feed.pushesPerCycle,
  })
  await printMetrics(relays[0].bases[0], relays[0].bases[1])
  const [mdq, bare] = run.relays
  printRelay('mdq: two `mdq serve` (SQLite, the full-market store), one Redis', mdq)
  printRelay('baseline: two bare `ws` relays, the same Redis, at the same time', bare)
  printShared(run)
  printSummary(mdq, bare)
  console.log(`\nload average ${loadAverage()} at the end`)
} finally {
  for (const s of servers) await stopServer(s).catch(() => undefined)
  await redis?.stop()
  rmSync(tmp, { recursive: true, force: true })
}
