// `mdq copy` moves a SQLite store into a two-shard ClickHouse cluster, all or nothing: killed midway
// or failing midway (a damaged chunk in the source), the rows it wrote stay invisible; run again, the
// cluster answers every kline (each symbol, period and adjust mode), ex-factor, instrument, listing
// and universe request over HTTP byte for byte as the SQLite store does, on the demo data and on a
// store of real data. A SQLite copy of a SQLite store holds the very same chunks.
import assert from 'node:assert/strict'
import { copyFileSync } from 'node:fs'
import { once } from 'node:events'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { STATEMENTS } from '../../src/domain/financials.js'
import { PERIODS } from '../../src/domain/period.js'
import { openStores } from '../../src/store/backends.js'
import { ClickHouseCluster } from '../helpers/clickhouse.js'
import { answer } from '../helpers/deployments.js'
import { buildRealStore, REAL_STORE_SKIP, WATCH_UNIVERSE } from '../helpers/real-store.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { damagedCopy, dumpStore, runMdq, spawnMdq, tempDir, writeCsv } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const need = requires(clickhouseServer())
const needReal = requires(clickhouseServer(), REAL_STORE_SKIP)
const DEMO_SUMMARY =
  '10 instruments, 27,648 daily and 57,600 minute bars, 171 ex-factor events, 0 statement versions, 0 universes'

async function query(cluster: ClickHouseCluster, sql: string): Promise<string> {
  const r = await fetch(`${cluster.servers[0].httpUrl}/`, { method: 'POST', body: sql })
  const text = await r.text()
  assert.equal(r.status, 200, text)
  return text.trim()
}

/** The last state of each import into `db` (begun, committed, aborted). */
const imports = async (cluster: ClickHouseCluster, db: string) =>
  (await query(cluster, `SELECT argMax(state, at_ms) FROM ${db}.imports GROUP BY import_id`)).split('\n')

/** What mdq serves from the store at `url`: nothing at all after a copy that did not commit. */
async function assertNothingVisible(url: string, symbols: readonly string[]): Promise<void> {
  const { market, keys } = await openStores({ store: url, create: false })
  try {
    assert.deepEqual(await market.listInstruments(), [])
    assert.deepEqual(await market.readUniverses(), [])
    assert.equal((await market.readExFactors(symbols)).size, 0)
    for (const symbol of symbols)
      for (const period of ['1d', '1m'] as const)
        assert.equal((await market.readBars({ symbol, period, limit: 10 })).timestamp.length, 0, `${symbol} ${period}`)
  } finally {
    await Promise.all([market.close(), keys.close()])
  }
}

/** Every request a store's data answers: klines of each symbol, period and adjust mode, and the reference routes. */
function requestsOf(symbols: readonly string[], universes: readonly string[]): string[] {
  const list = symbols.join(',')
  return [
    ...symbols.flatMap((symbol) =>
      PERIODS.flatMap((period) =>
        ADJUSTS.map((adjust) => `/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=10000`),
      ),
    ),
    `/v1/klines/ex-factors?symbols=${list}`,
    `/v1/instruments?symbols=${list}`,
    '/v1/exchanges',
    '/v1/exchanges/SH/instruments',
    '/v1/exchanges/US/instruments',
    '/v1/universes',
    ...universes.map((id) => `/v1/universes/${id}`),
    ...STATEMENTS.map((statement) => `/v1/financials/${statement}?symbols=${list}&latest=false`),
  ]
}

/** Asserts that `copy` answers each request byte for byte as `original` does; returns how many. */
async function assertSameAnswers(original: TestServer, copy: TestServer, requests: readonly string[]): Promise<number> {
  let next = 0
  const worker = async () => {
    while (next < requests.length) {
      const path = requests[next++]
      const [want, got] = await Promise.all([
        answer(original.url, original.key, path),
        answer(copy.url, copy.key, path),
      ])
      assert.equal(got, want, path)
    }
  }
  await Promise.all(Array.from({ length: 6 }, worker))
  return requests.length
}

/** Serves both stores in this process and compares their answers. */
async function compareServed(sqlite: string, clickhouse: string, universes: readonly string[]): Promise<number> {
  const [original, copy] = await Promise.all([startServer(sqlite), startServer(clickhouse)])
  try {
    const symbols = (await original.store.listInstruments()).map((i) => i.symbol)
    return await assertSameAnswers(original, copy, requestsOf(symbols, universes))
  } finally {
    await Promise.all([original.close(), copy.close()])
  }
}

describe('mdq copy from SQLite into a two-shard ClickHouse cluster', () => {
  const { dir, cleanup } = tempDir()
  let cluster: ClickHouseCluster
  let demo: string
  before(async () => {
    if (!need.met) return
    ;[cluster, demo] = await Promise.all([ClickHouseCluster.start(), demoDb(dir)])
  })
  after(async () => {
    await cluster?.destroy()
    cleanup()
  })

  need.it(
    'killed midway, nothing is visible; run again, every answer is the SQLite store’s, byte for byte',
    async () => {
      const target = cluster.storeUrl('demo_copy')
      const child = spawnMdq(['copy', '--from', demo, '--to', target], { MDQ_COPY_PAUSE_AT: 'bars:5' })
      const exited = once(child, 'exit')
      let err = ''
      child.stderr.on('data', (d) => (err += d))
      await until(() => err.includes('copy paused at bars:5') || child.exitCode !== null, 'the copy to pause')
      assert.equal(child.exitCode, null, err)
      child.kill('SIGKILL')
      await exited
      // The writer gathers the demo's bars into blocks sent at the commit, so the kill left an open
      // import (rows on disk before a commit row: test/store/clickhouse.test.ts kills inside commit).
      assert.deepEqual(await imports(cluster, 'demo_copy'), ['begun'], 'the killed copy had begun')
      await assertNothingVisible(target, ['000001.SZ', '600000.SH', '600519.SH', 'AAPL.US'])

      const copied = runMdq(['copy', '--from', `sqlite:${demo}`, '--to', target])
      assert.equal(copied.status, 0, copied.stderr)
      assert.match(
        copied.stdout,
        new RegExp(`^copied ${demo} to clickhouse://.*/demo_copy\\?cluster=\\w+: ${DEMO_SUMMARY} in `),
      )
      assert.match(copied.stdout, /\nAPI keys are not copied: create the new store's with mdq keys create --store /)
      assert.equal(await compareServed(demo, target, []), 10 * PERIODS.length * ADJUSTS.length + 6 + STATEMENTS.length)

      const again = runMdq(['copy', '--from', demo, '--to', target])
      assert.equal(again.status, 1)
      assert.equal(
        again.stderr,
        'mdq: --to already holds 10 instrument(s) and 0 universe(s): mdq copy writes only into an empty store\n',
      )
    },
  )

  need.it(
    'a source that fails midway (a damaged chunk) is one line, and nothing is visible at the target',
    async () => {
      const damaged = damagedCopy(demo, join(dir, 'damaged.db'))
      const target = cluster.storeUrl('damaged_copy')
      const r = runMdq(['copy', '--from', damaged, '--to', target])
      assert.equal(r.status, 1, r.stdout)
      assert.match(r.stderr, /^mdq: The store is damaged \(.*\); restore it from a backup or re-import\.\n$/)
      const began = await imports(cluster, 'damaged_copy')
      assert.equal(began.length, 1, 'the copy began writing')
      assert.match(began[0], /^(aborted|vacuumed)$/, 'then rolled back (its rows removed at once, or by a vacuum)')
      await assertNothingVisible(target, ['000001.SZ', '600000.SH', '600519.SH', 'AAPL.US'])
    },
  )

  need.it('a SQLite copy of a SQLite store holds the same chunks, rows, statements and universes', async () => {
    const source = join(dir, 'with-statements.db')
    copyFileSync(demo, source)
    const income = writeCsv(join(dir, 'income.csv'), 'symbol,period_end,announce_date,revenue,net_income', [
      '600519.SH,2019-12-31,2020-03-28,88854338485.11,41206471014.43',
      '600519.SH,2019-12-31,2020-04-30,88854338485.12,41206471014.43',
    ])
    assert.equal(runMdq(['--db', source, 'import', 'financials', 'income', income]).status, 0)
    const copy = join(dir, 'copy.db')
    const r = runMdq(['copy', '--from', source, '--to', `sqlite:${copy}`])
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, / 2 statement versions, /)
    const dumped = dumpStore(copy, { withMeta: false })
    assert.match(dumped, /88854338485\.12/)
    assert.equal(dumped, dumpStore(source, { withMeta: false }))
  })
})

describe('mdq copy of a real-data store into a two-shard ClickHouse cluster', () => {
  const { dir, cleanup } = tempDir()
  let cluster: ClickHouseCluster
  before(async () => {
    if (needReal.met) cluster = await ClickHouseCluster.start()
  })
  after(async () => {
    await cluster?.destroy()
    cleanup()
  })

  needReal.it('answers every kline, ex-factor, instrument and universe request as the SQLite store does', async () => {
    const real = buildRealStore(dir)
    const target = cluster.storeUrl('real_copy')
    const r = runMdq(['copy', '--from', real, '--to', target])
    assert.equal(r.status, 0, r.stderr)
    assert.match(
      r.stdout,
      /: 6 instruments, [\d,]+ daily and [\d,]+ minute bars, \d+ ex-factor events, [1-9]\d* statement versions, 1 universes in /,
    )
    assert.equal(
      await compareServed(real, target, [WATCH_UNIVERSE]),
      6 * PERIODS.length * ADJUSTS.length + 7 + STATEMENTS.length,
    )
  })
})
