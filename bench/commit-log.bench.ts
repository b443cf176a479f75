// ClickHouse's commit log, the `imports` table, at the size a live feed leaves it: a write is an
// import, three rows each (begun, committing, committed), kept for good. What reads it, each figure
// beside a same-run baseline:
// - a store's first load (every process and query thread), beside reading every import's states into
//   the process, as the first load did before it had the server count them;
// - a writer's background vacuum (every 30 s) and live compaction (every 60 s) after their first run,
//   beside that first run, which groups the whole table.
// Run: npm run bench -- commit-log   (BENCH_IMPORTS imports, default 1,000,000; ClickHouse from Debian)
import { spawnSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { ClickHouseStores, parseClickHouseUrl } from '../src/store/clickhouse/clickhouse-stores.js'
import { Connection } from '../src/store/clickhouse/connection.js'
import { loadSnapshot } from '../src/store/clickhouse/snapshot.js'
import { ClickHouseServer, clickhouseSql } from '../test/helpers/clickhouse.js'
import { clickhouseServer } from '../test/helpers/requirements.js'
import { cpuMs, median, row } from './measure.js'
import { mdqBin } from './servers.js'

const IMPORTS = Number(process.env.BENCH_IMPORTS ?? 1_000_000)
const RUNS = 5

if (clickhouseServer() !== false) {
  console.log(`commit log: skipped (${clickhouseServer()})`)
  process.exit(0)
}

/** Wall, this process's CPU and the server's CPU of `fn`, in ms. */
async function timed(ch: ClickHouseServer, fn: () => Promise<unknown>) {
  const server0 = cpuMs(ch.pid!)
  const own0 = process.cpuUsage()
  const t0 = performance.now()
  await fn()
  const own = process.cpuUsage(own0)
  return { wall: performance.now() - t0, own: (own.user + own.system) / 1000, server: cpuMs(ch.pid!) - server0 }
}

const ms = (x: number) => `${x.toFixed(0)} ms`
const fig = (t: { wall: number; own: number; server: number }) =>
  `${ms(t.wall)} (server ${ms(t.server)}, here ${ms(t.own)})`
/** Each field's median over runs. */
const medians = (ts: { wall: number; own: number; server: number }[]) => ({
  wall: median(ts.map((t) => t.wall)),
  own: median(ts.map((t) => t.own)),
  server: median(ts.map((t) => t.server)),
})

const ch = await ClickHouseServer.start()
try {
  const store = ch.storeUrl('log')
  const migrated = spawnSync(process.execPath, [mdqBin, '--store', store, 'migrate'], { encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(migrated.stderr)
  // A feed's imports, committed one after another, and a few given up (rolled back) among them.
  await clickhouseSql(
    ch.httpUrl,
    `INSERT INTO log.imports (import_id, state, at_ms, tables)
     SELECT 1000000 + intDiv(number, 3), [1, 5, 2][(number % 3) + 1], 1700000000000 + number, if(number % 3 = 2, 1, 65535)
     FROM system.numbers LIMIT ${IMPORTS * 3}`,
  )
  await clickhouseSql(
    ch.httpUrl,
    `INSERT INTO log.imports (import_id, state, at_ms) SELECT 1000000 + number * 100003, 3, 1 FROM system.numbers LIMIT 10`,
  )
  await clickhouseSql(ch.httpUrl, 'OPTIMIZE TABLE log.imports FINAL')
  console.log(
    `\ncommit log: ${IMPORTS.toLocaleString('en-US')} imports (3 rows each), ClickHouse 18.16; medians of ${RUNS}`,
  )

  const meta = new Connection({ url: ch.httpUrl, username: 'default', password: '', database: 'log' })
  const firstLoads = []
  const everyImport = []
  for (let i = 0; i < RUNS; i++) {
    firstLoads.push(await timed(ch, () => loadSnapshot(meta, undefined)))
    everyImport.push(
      await timed(ch, async () => {
        const states = new Map<bigint, readonly (string | null)[]>()
        for (const [id, ...rest] of await meta.rows(
          `SELECT import_id, max(state = 'committed'), max(state = 'vacuumed'), max(state = 'aborted'),
             groupBitOrIf(tables, state = 'committed') FROM imports GROUP BY import_id`,
        ))
          states.set(BigInt(id!), rest)
        return states.size
      }),
    )
  }
  await meta.close()
  row('first load of a store', fig(medians(firstLoads)))
  row("  baseline: every import's states read in", fig(medians(everyImport)))

  const { market, keys } = await ClickHouseStores.open(parseClickHouseUrl(store))
  try {
    for (const [name, run] of [
      ['background vacuum', () => market.vacuum()],
      ['live compaction', () => market.compactLive()],
    ] as const) {
      const first = await timed(ch, run)
      const later = []
      for (let i = 0; i < RUNS; i++) later.push(await timed(ch, run))
      row(`${name}, a run after the first`, fig(medians(later)))
      row('  baseline: the first run (the whole table)', fig(first))
    }
  } finally {
    await Promise.all([market.close(), keys.close()])
  }
} finally {
  await ch.destroy()
}
