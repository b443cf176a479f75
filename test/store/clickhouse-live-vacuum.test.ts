// Vacuum against imports still running, on a real two-shard ClickHouse cluster: an import that a
// vacuum took for dead (its process paused longer than the grace) must fail to commit with nothing
// of it visible, a later vacuum of the same process still finds every import that could die, a commit racing a vacuum ends one way or the other (all rows visible and kept, or
// none visible), an import with a `vacuumed` row is never visible, and `mdq vacuum` refuses a grace
// shorter than two heartbeats of a live import.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import {
  ClickHouseStores,
  parseClickHouseUrl,
  type ClickHouseMarketStore,
} from '../../src/store/clickhouse/clickhouse-stores.js'
import { MIN_GRACE_MS } from '../../src/store/clickhouse/import-states.js'
import type { KeyStore } from '../../src/store/key-store.js'
import { tradingDays, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseCluster, closeStores } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { runMdq, spawnMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const need = requires(clickhouseServer())
const DAYS = tradingDays('SH', 19000, 300)
const symbols = (prefix: number, n: number) => Array.from({ length: n }, (_, i) => `${prefix + i}.SH`)

type Stores = { market: ClickHouseMarketStore; keys: KeyStore }
/** `blockRows`: bar rows per INSERT; small, so an import's rows are on disk before its commit. */
const open = (url: string, blockRows?: number): Promise<Stores> =>
  ClickHouseStores.open({ ...parseClickHouseUrl(url), insertBlockRows: blockRows })

async function query(base: string, sql: string): Promise<string> {
  const r = await fetch(`${base}/?query=${encodeURIComponent(sql)}`, { method: 'POST' })
  const text = await r.text()
  if (!r.ok) throw new Error(text)
  return text.trim()
}

async function until(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const t0 = Date.now()
  while (!(await check())) {
    if (Date.now() - t0 > deadlineMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

describe('clickhouse vacuum against running imports on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  let a: Stores
  let b: Stores
  const { dir, cleanup } = tempDir()
  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    a = await open(cluster.storeUrl('live'), 100)
    b = await open(cluster.storeUrl('live'))
  })
  after(async () => {
    await closeStores(a, b)
    await cluster?.destroy()
    cleanup()
  })

  /** Bars of `list` on both shards, counted on disk (rows of every import, visible or not). */
  const onDisk = async (list: readonly string[]) => {
    const where = `symbol IN (${list.map((s) => `'${s}'`).join(', ')})`
    const counts = await Promise.all(
      cluster.servers.map((s) => query(s.httpUrl, `SELECT count() FROM live.bars_local WHERE ${where}`)),
    )
    return counts.reduce((n, c) => n + Number(c), 0)
  }
  const mutationsDone = () =>
    until('every mutation to finish', async () => {
      const left = await Promise.all(
        cluster.servers.map((s) =>
          query(s.httpUrl, "SELECT count() FROM system.mutations WHERE database = 'live' AND is_done = 0"),
        ),
      )
      return left.every((n) => n === '0')
    })
  /** What a store opened now reads of `list`: bars per symbol and the instruments known. */
  const freshRead = async (list: readonly string[]) => {
    const fresh = await open(cluster.storeUrl('live'))
    try {
      const bars = await Promise.all(
        list.map(async (symbol) => barCount(await fresh.market.readBars({ symbol, period: '1d', limit: 10_000 }))),
      )
      return { bars, instruments: (await fresh.market.readInstruments(list)).length }
    } finally {
      await closeStores(fresh)
    }
  }

  need.it(
    'an import taken for dead while it runs fails to commit: nothing of it is visible and its rows go',
    async () => {
      const list = symbols(600100, 8)
      const version = await b.market.dataVersion()
      const w = await a.market.beginWrite()
      await w.putInstruments(list.map((s) => bareInstrument(s)))
      for (const [i, s] of list.entries()) await w.putBars(s, '1d', walkBars(DAYS, [i / 10, 0.3]))
      assert.ok((await onDisk(list)) > 0, 'the open import has sent rows')
      // A grace of 0 takes the open import for dead, as a grace does an import paused longer than it.
      assert.equal(await b.market.vacuum({ graceMs: 0 }), 1)
      await assert.rejects(w.commit(), /was not committed: a vacuum took it for dead/)
      assert.deepEqual(await freshRead(list), { bars: list.map(() => 0), instruments: 0 })
      assert.equal(await a.market.dataVersion(), version)
      await mutationsDone()
      assert.equal(await onDisk(list), 0)
    },
  )

  need.it(
    'a vacuum after another looks again at every import still open when that one looked and at every one begun since',
    async () => {
      const [older, newer] = [symbols(600300, 2), symbols(600310, 2)]
      const begin = async (list: readonly string[]) => {
        const w = await a.market.beginWrite()
        for (const [i, s] of list.entries()) await w.putBars(s, '1d', walkBars(DAYS, [i / 10, 0.2]))
        return w
      }
      const first = await begin(older)
      // A commit after it puts the newest committed import above the open one.
      await a.market.write({ instruments: [bareInstrument('600320.SH')] })
      assert.equal(await b.market.vacuum({ graceMs: 3_600_000 }), 0, 'nothing dead yet')
      const second = await begin(newer)
      assert.ok((await b.market.vacuum({ graceMs: 0 })) >= 2)
      await assert.rejects(first.commit(), /was not committed: a vacuum took it for dead/)
      await assert.rejects(second.commit(), /was not committed: a vacuum took it for dead/)
      assert.deepEqual(await freshRead([...older, ...newer]), { bars: [0, 0, 0, 0], instruments: 0 })
    },
  )

  need.it('a commit racing a vacuum: either all of the import is visible and stays, or none of it is', async () => {
    const outcomes = { committed: 0, refused: 0 }
    for (let round = 0; round < 12; round++) {
      const list = symbols(601000 + round * 10, 4)
      const w = await a.market.beginWrite()
      for (const [i, s] of list.entries()) await w.putBars(s, '1d', walkBars(DAYS, [i / 10, round / 20]))
      const [commit] = await Promise.allSettled([w.commit(), b.market.vacuum({ graceMs: 0 })])
      await mutationsDone()
      const { bars } = await freshRead(list)
      if (commit.status === 'fulfilled') {
        outcomes.committed++
        assert.deepEqual(
          bars,
          list.map(() => DAYS.length),
          `round ${round}: committed with rows missing`,
        )
        assert.equal(await onDisk(list), list.length * DAYS.length)
      } else {
        outcomes.refused++
        assert.match(String(commit.reason), /was not committed/)
        assert.deepEqual(
          bars,
          list.map(() => 0),
          `round ${round}: a refused commit left rows visible`,
        )
      }
    }
    console.log(`commit against vacuum: ${outcomes.committed} committed, ${outcomes.refused} refused`)
  })

  need.it('an import with a vacuumed row is not visible, even with a committed row', async () => {
    const [s] = symbols(602000, 1)
    await a.market.write({
      instruments: [bareInstrument(s)],
      bars: [{ symbol: s, period: '1d', bars: walkBars(DAYS, [0.4]) }],
    })
    assert.deepEqual(await freshRead([s]), { bars: [DAYS.length], instruments: 1 })
    const meta = cluster.servers[0].httpUrl
    const id = await query(meta, "SELECT max(import_id) FROM live.imports WHERE state = 'committed'")
    // What a vacuum racing a commit could leave behind: both rows, the rows partly removed.
    await query(meta, `INSERT INTO live.imports (import_id, state, at_ms) VALUES (${id}, 'vacuumed', ${Date.now()})`)
    assert.deepEqual(await freshRead([s]), { bars: [0], instruments: 0 })
  })

  need.it('a store made before the claim states gets them on open; its committed imports stay visible', async () => {
    const meta = cluster.servers[0].httpUrl
    await query(meta, 'CREATE DATABASE IF NOT EXISTS legacy')
    await query(
      meta,
      "CREATE TABLE legacy.imports (import_id UInt64, state Enum8('begun' = 1, 'committed' = 2, 'aborted' = 3, 'vacuumed' = 4), at_ms Int64) ENGINE = MergeTree ORDER BY import_id",
    )
    await query(meta, "INSERT INTO legacy.imports VALUES (7, 'begun', 1), (7, 'committed', 2), (8, 'begun', 3)")
    const old = await open(cluster.storeUrl('legacy'))
    try {
      assert.equal(await old.market.importCount(), 1)
      const hasClaims =
        "SELECT position(type, 'committing') > 0 AND position(type, 'vacuuming') > 0 FROM system.columns"
      assert.equal(
        await query(meta, `${hasClaims} WHERE database = 'legacy' AND table = 'imports' AND name = 'state'`),
        '1',
      )
      assert.equal(await old.market.vacuum({ graceMs: 0 }), 1, 'the legacy open import is claimed and removed')
    } finally {
      await closeStores(old)
    }
  })

  need.it(
    'mdq vacuum refuses a grace shorter than two heartbeats; an mdq import paused past the grace then fails, exit 1, nothing visible',
    async () => {
      const store = cluster.storeUrl('live')
      for (const grace of ['0', '5', '9.9']) {
        const r = runMdq(['--store', store, 'vacuum', '--grace', grace])
        assert.equal(r.status, 1, r.stdout)
        assert.match(r.stderr, new RegExp(`--grace '${grace.replace('.', '\\.')}' must be a number of seconds >= 10`))
      }
      const list = symbols(603000, 20)
      const csv = writeCsv(
        join(dir, 'paused.csv'),
        'symbol,time,open,high,low,close,volume,amount',
        list.flatMap((s, k) =>
          DAYS.map((d, i) => `${s},${d},${10 + k},${11 + k},${9 + k},${10 + k + (i % 7) / 100},1000,10000`),
        ),
      )
      const child = spawnMdq(['--store', store, 'import', 'bars', csv], { MDQ_IMPORT_PAUSE_AT: 'bars:5' })
      let out = ''
      let err = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', (d: Buffer) => (err += d.toString()))
      const exited = once(child, 'exit')
      try {
        await until('the import to stop at bars:5', async () => {
          if (child.exitCode !== null) throw new Error(`the import exited: ${err}`)
          return /^\d+ \(.*\) T /.test(readFileSync(`/proc/${child.pid}/stat`, 'utf8'))
        })
        const begun = `SELECT count() FROM live.imports WHERE state = 'begun' AND import_id NOT IN (SELECT import_id FROM live.imports WHERE state != 'begun')`
        assert.equal(await query(cluster.servers[0].httpUrl, begun), '1', 'the paused import is open')
        // Silent for longer than the grace: a vacuum (here the CLI's) takes it for dead.
        await sleep(MIN_GRACE_MS + 1000)
        const vacuumed = runMdq(['--store', store, 'vacuum', '--grace', String(MIN_GRACE_MS / 1000)])
        assert.equal(vacuumed.status, 0, vacuumed.stderr)
        assert.match(vacuumed.stdout, /removed the rows of 1 unfinished import\(s\)/)
      } finally {
        child.kill('SIGCONT')
      }
      const [code] = (await exited) as [number]
      assert.equal(code, 1, `the resumed import must fail: ${out}`)
      assert.match(err, /was not committed: a vacuum took it for dead/)
      assert.equal(out, '')
      assert.deepEqual(await freshRead(list), { bars: list.map(() => 0), instruments: 0 })
      await mutationsDone()
      assert.equal(await onDisk(list), 0, 'the failed import leaves no rows')
    },
  )
})
