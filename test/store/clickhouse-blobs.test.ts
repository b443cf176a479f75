// Reads from the blobs (each put's bars again as chunk BLOBs) on a real two-shard
// ClickHouse cluster. That a read came from the blobs is shown by removing the series' rows from the
// bars tables on both shards and reading the same answer again; the expected bars are the ones written,
// merged in JavaScript where puts overlap. Where the blobs cannot stand for the bars table (a delete
// that hides part of a blob) the read takes the bars table; vacuum cuts the deleted bars out of a blob,
// after which the blobs hold exactly the visible bars.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { rowsOfBars, type BarRow, type Bars } from '../../src/domain/bars.js'
import {
  ClickHouseStores,
  parseClickHouseUrl,
  type ClickHouseMarketStore,
} from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import { tradingDays, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseCluster, clickhouseSql as query } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'

const need = requires(clickhouseServer())
const S = Array.from({ length: 6 }, (_, i) => `${601000 + i}.SH`)
/** More days than a blob holds (4,096), so a history is two blobs or more. */
const DAYS = tradingDays('SH', 12000, 6000)
const days = (from: number, to: number) => DAYS.slice(from, to)
const WHOLE = 10_000

async function until(what: string, check: () => Promise<boolean>, deadlineMs = 60_000): Promise<void> {
  const t0 = Date.now()
  while (!(await check())) {
    if (Date.now() - t0 > deadlineMs) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

/** Rows of `later` replace those of `earlier` at the same timestamp; ascending. */
function merged(earlier: Bars, later: Bars): BarRow[] {
  const byTs = new Map<number, BarRow>()
  for (const r of [...rowsOfBars(earlier), ...rowsOfBars(later)]) byTs.set(r.timestamp, r)
  return [...byTs.values()].sort((a, b) => a.timestamp - b.timestamp)
}

describe('clickhouse blobs on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  let stores: { market: ClickHouseMarketStore; keys: KeyStore }
  const db = 'blobs'
  const m = () => stores.market
  const whole = async (symbol: string) => rowsOfBars(await m().readBars({ symbol, period: '1d', limit: WHOLE }))
  /** Removes a symbol's rows (before `beforeMs` and from `fromMs`, else all) from the bars table on every shard; its blobs stay. */
  const dropBarRows = async (symbol: string, beforeMs = Infinity, fromMs = -Infinity) => {
    const where = `symbol = '${symbol}'${beforeMs < Infinity ? ` AND ts < ${beforeMs}` : ''}${fromMs > -Infinity ? ` AND ts >= ${fromMs}` : ''}`
    for (const s of cluster.servers) await query(s.httpUrl, `ALTER TABLE ${db}.bars_local DELETE WHERE ${where}`)
    await until('the bar rows to go', async () => {
      for (const s of cluster.servers)
        if ((await query(s.httpUrl, `SELECT count() FROM system.mutations WHERE is_done = 0`)) !== '0') return false
      return (await query(cluster.servers[0].httpUrl, `SELECT count() FROM ${db}.bars WHERE ${where}`)) === '0'
    })
  }
  const blobRows = async (symbol: string) =>
    Number(await query(cluster.servers[0].httpUrl, `SELECT count() FROM ${db}.blobs WHERE symbol = '${symbol}'`))

  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    stores = await ClickHouseStores.open(parseClickHouseUrl(cluster.storeUrl(db)))
  })
  after(async () => {
    await Promise.all([stores?.keys.close(), stores?.market.close()])
    await cluster?.destroy()
  })

  need.it('a whole history, a long range and the newest bars come from the blobs', async () => {
    const history = walkBars(days(0, 6000), [0.4, 0.7, 0.2])
    await m().write({ bars: [{ symbol: S[0], period: '1d', bars: history }] })
    assert.equal(await blobRows(S[0]), 2)
    const expected = rowsOfBars(history)
    const range = { symbol: S[0], period: '1d' as const, fromMs: DAYS[1000], toMs: DAYS[5000], limit: 3000 }
    const inRange = expected.filter((r) => r.timestamp >= DAYS[1000] && r.timestamp <= DAYS[5000]).slice(-3000)
    assert.deepEqual(await whole(S[0]), expected)
    assert.deepEqual(rowsOfBars(await m().readBars(range)), inRange)
    await dropBarRows(S[0])
    assert.deepEqual(await whole(S[0]), expected)
    assert.deepEqual(rowsOfBars(await m().readBars(range)), inRange)
    assert.deepEqual(rowsOfBars(await m().readBars({ symbol: S[0], period: '1d', limit: 100 })), expected.slice(-100))
    const early = { symbol: S[0], period: '1d' as const, toMs: DAYS[999], limit: 10 }
    assert.deepEqual(rowsOfBars(await m().readBars(early)), expected.slice(990, 1000))
  })

  need.it(
    'appended days: the history from the blobs, the days (too few bars for blobs) from the bars table',
    async () => {
      const history = walkBars(days(0, 5000), [0.3])
      const more = walkBars(days(5000, 5100), [0.4])
      const day = walkBars(days(5100, 5101), [0.9])
      await m().write({ bars: [{ symbol: S[1], period: '1d', bars: history }] })
      await m().write({ bars: [{ symbol: S[1], period: '1d', bars: more }] })
      await m().write({ bars: [{ symbol: S[1], period: '1d', bars: day }] })
      assert.equal(await blobRows(S[1]), 3, 'two for the history, one for the hundred days, none for the day')
      const expected = [...rowsOfBars(history), ...rowsOfBars(more), ...rowsOfBars(day)]
      assert.deepEqual(await whole(S[1]), expected)
      await dropBarRows(S[1], DAYS[5100])
      assert.deepEqual(await whole(S[1]), expected)
      // A small read that would need both tables takes the bars table alone: only the day is left there.
      const latest = rowsOfBars(await m().readBars({ symbol: S[1], period: '1d', limit: 100 }))
      assert.deepEqual(latest, rowsOfBars(day))
    },
  )

  need.it(
    'a few old bars without blobs, then a history with them: the newest from the blobs, the old from the bars table',
    async () => {
      const symbol = '602002.SH'
      const old = walkBars(days(0, 30), [0.6])
      const history = walkBars(days(30, 5000), [0.3, 0.5])
      await m().write({ bars: [{ symbol, period: '1d', bars: old }] })
      await m().write({ bars: [{ symbol, period: '1d', bars: history }] })
      const expected = [...rowsOfBars(old), ...rowsOfBars(history)]
      const read = async (limit: number) => rowsOfBars(await m().readBars({ symbol, period: '1d', limit }))
      assert.deepEqual(await read(WHOLE), expected)
      await dropBarRows(symbol, Infinity, DAYS[30])
      assert.deepEqual(await read(100), expected.slice(-100), 'the newest 100 from the blobs alone')
      assert.deepEqual(await read(WHOLE), expected, 'the old bars from the bars table, the rest from the blobs')
    },
  )

  need.it('reads of several symbols and ranges in one turn: each gets its own range from one query', async () => {
    const [x, y] = ['602000.SH', '602001.SH']
    const a = walkBars(days(0, 6000), [0.2, 0.9])
    const b = walkBars(days(0, 6000), [0.7, 0.1])
    await m().write({
      bars: [
        { symbol: x, period: '1d', bars: a },
        { symbol: y, period: '1d', bars: b },
      ],
    })
    const [early, latest, middle] = await Promise.all([
      m().readBars({ symbol: x, period: '1d', toMs: DAYS[999], limit: 500 }),
      m().readBars({ symbol: y, period: '1d', limit: 100 }),
      m().readBars({ symbol: y, period: '1d', fromMs: DAYS[3000], toMs: DAYS[4499], limit: 5000 }),
    ])
    assert.deepEqual(rowsOfBars(early), rowsOfBars(a).slice(500, 1000))
    assert.deepEqual(rowsOfBars(latest), rowsOfBars(b).slice(-100))
    assert.deepEqual(rowsOfBars(middle), rowsOfBars(b).slice(3000, 4500))
  })

  need.it('puts that overlap, read from the blobs: the newer put wins at each timestamp', async () => {
    const history = walkBars(days(0, 5000), [0.3])
    // Every other day of the last thousand again: interleaved with the history's own bars there.
    const again = walkBars(
      days(4000, 5000).filter((_, i) => i % 2 === 0),
      [0.8],
    )
    await m().write({ bars: [{ symbol: S[2], period: '1d', bars: history }] })
    await m().write({ bars: [{ symbol: S[2], period: '1d', bars: again }] })
    const expected = merged(history, again)
    assert.deepEqual(await whole(S[2]), expected)
    await dropBarRows(S[2])
    assert.deepEqual(await whole(S[2]), expected)
    assert.deepEqual(rowsOfBars(await m().readBars({ symbol: S[2], period: '1d', limit: 100 })), expected.slice(-100))
  })

  need.it('a delete in part of a blob is read from the bars table; vacuum cuts the blob to the bars left', async () => {
    const history = walkBars(days(0, 5000), [0.6])
    await m().write({ bars: [{ symbol: S[3], period: '1d', bars: history }] })
    await m().write({ deleteBars: [{ symbol: S[3], period: '1d', fromMs: DAYS[100], toMs: DAYS[199] }] })
    const expected = rowsOfBars(history).filter((r) => r.timestamp < DAYS[100] || r.timestamp > DAYS[199])
    assert.equal(expected.length, 4900)
    assert.deepEqual(await whole(S[3]), expected)
    const report = await m().compact({ graceMs: 0 })
    assert.equal(report.tombstones, 1)
    await until('the tombstone to go', async () => {
      const n = await query(cluster.servers[0].httpUrl, `SELECT count() FROM ${db}.deletes WHERE symbol = '${S[3]}'`)
      return n === '0'
    })
    assert.equal(await blobRows(S[3]), 2)
    assert.deepEqual(await whole(S[3]), expected)
    await dropBarRows(S[3])
    // This store still holds the tombstone it saw (and reads the bars table there); a store opened now does not.
    assert.deepEqual(await whole(S[3]), [])
    const fresh = await ClickHouseStores.open(parseClickHouseUrl(cluster.storeUrl(db)))
    try {
      assert.deepEqual(rowsOfBars(await fresh.market.readBars({ symbol: S[3], period: '1d', limit: WHOLE })), expected)
    } finally {
      await Promise.all([fresh.keys.close(), fresh.market.close()])
    }
  })

  need.it('a replaced history reads as the new one, and vacuum removes the old blobs', async () => {
    const old = walkBars(days(0, 5000), [0.2])
    const fresh = walkBars(days(10, 4500), [0.7])
    await m().write({ bars: [{ symbol: S[4], period: '1d', bars: old }] })
    await m().write({
      deleteBars: [{ symbol: S[4], period: '1d' }],
      bars: [{ symbol: S[4], period: '1d', bars: fresh }],
    })
    assert.deepEqual(await whole(S[4]), rowsOfBars(fresh))
    await m().compact({ graceMs: 0 })
    await until('the old blobs to go', async () => (await blobRows(S[4])) === 2)
    await dropBarRows(S[4])
    assert.deepEqual(await whole(S[4]), rowsOfBars(fresh))
  })

  need.it(
    'a history with live days after it: the history from the blobs, the live days from the bars table',
    async () => {
      const history = walkBars(days(0, 3000), [0.5])
      const live = walkBars(days(3000, 3005), [0.1])
      await m().write({ bars: [{ symbol: S[5], period: '1d', bars: history }] })
      const w = await m().beginWrite()
      await w.putBars(S[5], '1d', live, { live: true })
      await w.commit()
      assert.equal(await blobRows(S[5]), 1, 'the live put wrote none')
      const expected = [...rowsOfBars(history), ...rowsOfBars(live)]
      assert.deepEqual(await whole(S[5]), expected)
      await dropBarRows(S[5], DAYS[3000])
      assert.deepEqual(await whole(S[5]), expected)
      assert.deepEqual(
        rowsOfBars(await m().readBars({ symbol: S[5], period: '1d', limit: 2500 })),
        expected.slice(-2500),
        'a read of the newest bars across the cut',
      )
    },
  )
})
