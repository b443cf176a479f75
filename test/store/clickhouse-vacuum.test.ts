// Vacuum's compaction on a real two-shard ClickHouse cluster: re-imports, deletes, a delete-then-put
// and replaced instruments, ex-factors and universes leave superseded and hidden rows on disk; compaction
// removes them and then the tombstones, while a reader polling the store sees exactly the same answers
// before, during and after. A tombstone stays while an older import is still open (it would hide that
// import's rows once committed) and goes on the next vacuum.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, rowsOfBars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import {
  ClickHouseStores,
  parseClickHouseUrl,
  type ClickHouseMarketStore,
} from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { WriteBatch } from '../../src/store/market-store.js'
import { sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseCluster, ClickHouseServer, closeStores } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'

const need = requires(clickhouseServer())
const S = Array.from({ length: 8 }, (_, i) => `${600000 + i}.SH`)
const DAYS = tradingDays('SH', 19000, 300)
const days = (from: number, to: number, step = 1) =>
  DAYS.filter((_, i) => i >= from && i < to && (i - from) % step === 0)
const bars = (symbol: string, ts: number[], seed: number) => ({
  symbol,
  period: '1d' as const,
  bars: walkBars(ts, [seed, 0.3]),
})

type Stores = { market: ClickHouseMarketStore; keys: KeyStore }
const open = (url: string): Promise<Stores> => ClickHouseStores.open(parseClickHouseUrl(url))

/** Every answer the tests compare, as one string: whole histories, windows, instruments, listing, events, universes. */
async function answers(m: ClickHouseMarketStore): Promise<string> {
  const whole = await Promise.all(
    S.map(async (symbol) => rowsOfBars(await m.readBars({ symbol, period: '1d', limit: 10_000 }))),
  )
  const windows = await Promise.all(
    S.map(async (symbol) => rowsOfBars(await m.readBars({ symbol, period: '1d', toMs: DAYS[160], limit: 40 }))),
  )
  return JSON.stringify({
    whole,
    windows,
    instruments: await m.readInstruments(S),
    listing: await m.listInstruments(),
    exFactors: [...(await m.readExFactors(S))],
    universes: await m.readUniverses(),
  })
}

async function query(base: string, sql: string): Promise<string> {
  const r = await fetch(`${base}/?query=${encodeURIComponent(sql)}`)
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

describe('clickhouse vacuum compaction on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  let a: Stores
  let b: Stores
  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    a = await open(cluster.storeUrl('compaction'))
    b = await open(cluster.storeUrl('compaction'))
  })
  after(async () => {
    await closeStores(a, b)
    await cluster?.destroy()
  })

  /** Writes through `a`, then waits until the polling reader `b` has the new snapshot (what --grace gives readers in production). */
  const caughtUp = async () => {
    const v = await a.market.dataVersion()
    await until('the reader to see the commit', async () => (await b.market.dataVersion()) === v)
  }
  const write = async (batch: WriteBatch) => {
    await a.market.write(batch)
    await caughtUp()
  }
  const base = () => cluster.servers[0].httpUrl
  const disk = async () => {
    const [bars, instruments, exFactors, universes, deletes] = await Promise.all(
      ['bars', 'instruments', 'ex_factors', 'universes', 'deletes'].map(async (t) =>
        Number(await query(base(), `SELECT count() FROM compaction.${t}`)),
      ),
    )
    return { bars, instruments, exFactors, universes, deletes }
  }

  /** Runs `work` while a reader loop compares every answer of `b` and of freshly opened stores with `expected`. */
  async function readersDuring<T>(expected: string, work: () => Promise<T>): Promise<{ result: T; reads: number }> {
    let reading = true
    let reads = 0
    const loop = (async () => {
      while (reading) {
        assert.equal(await answers(b.market), expected, `read ${reads + 1} during vacuum differs`)
        reads++
      }
    })()
    try {
      const result = await work()
      // A few more rounds after the last mutation was issued: ALTER DELETE runs in the background.
      for (let i = 0; i < 5; i++) assert.equal(await answers(b.market), expected)
      const fresh = await open(cluster.storeUrl('compaction'))
      try {
        assert.equal(await answers(fresh.market), expected, 'a store opened after vacuum')
      } finally {
        await Promise.all([fresh.keys.close(), fresh.market.close()])
      }
      return { result, reads }
    } finally {
      reading = false
      await loop
    }
  }

  need.it(
    'removes superseded and deleted rows and then their tombstones; readers see the same answers throughout',
    async () => {
      await write({
        instruments: S.map((s, i) => bareInstrument(s, { name: `first ${i}`, type: 'stock' })),
        bars: S.map((s, i) => bars(s, days(0, 300), i)),
        exFactors: [
          {
            symbol: S[0],
            events: [
              { timestamp: DAYS[50], exFactor: 1.1 },
              { timestamp: DAYS[150], exFactor: 1.2 },
              { timestamp: DAYS[250], exFactor: 1.3 },
            ],
          },
        ],
      })
      const w = await a.market.beginWrite()
      await w.putUniverses([
        { id: 'MINE', name: 'first', region: 'CN', category: 'equity', description: null, symbols: [S[0], S[1]] },
      ])
      await w.commit()
      await write({
        // A contiguous re-import (one range per old import) and a sparse one (a list of timestamps).
        bars: [bars(S[0], days(100, 200), 20), bars(S[1], days(0, 300, 3), 21)],
        instruments: [bareInstrument(S[2], { name: 'renamed', type: 'stock' })],
        exFactors: [{ symbol: S[0], events: [{ timestamp: DAYS[150], exFactor: 1.25 }] }],
        deleteExFactors: [{ symbol: S[0], fromMs: DAYS[240], toMs: DAYS[260] }],
      })
      const w2 = await a.market.beginWrite()
      await w2.putUniverses([
        { id: 'MINE', name: 'second', region: 'CN', category: 'equity', description: 'replaced', symbols: [S[2]] },
      ])
      await w2.commit()
      // Deletes, and a delete then a put in one import (--replace).
      await write({
        deleteBars: [
          { symbol: S[3], period: '1d', fromMs: DAYS[50], toMs: DAYS[149] },
          { symbol: S[5], period: '1d' },
        ],
        deleteInstruments: [S[4]],
        bars: [bars(S[5], days(0, 100), 25)],
      })
      await caughtUp()

      const expected = await answers(b.market)
      const visibleBars = (JSON.parse(expected) as { whole: unknown[][] }).whole.reduce((n, rows) => n + rows.length, 0)
      assert.equal(visibleBars, 300 * 8 - 100 - 300 + 100)
      const before = await disk()
      assert.equal(before.bars, 300 * 8 + 100 + 100 + 100)
      assert.equal(before.deletes, 4)

      const { result: report, reads } = await readersDuring(expected, () => a.market.compact({ graceMs: 0 }))
      assert.ok(reads >= 1, 'the reader ran during vacuum')
      // S[0]: 100 superseded; S[1]: 100 (every third day); S[5]: its 300 first rows (all deleted, 100 of them also superseded).
      assert.equal(report.supersededRows, 100 + 100 + 100 + 1 + 1 + 1, JSON.stringify(report))
      assert.equal(report.hiddenRows, 100 + 200 + 1 + 1, JSON.stringify(report))
      assert.deepEqual({ tombstones: report.tombstones, pending: report.pending }, { tombstones: 4, pending: false })
      await until('the removals to reach the disk', async () => {
        const d = await disk()
        return d.bars === visibleBars && d.deletes === 0
      })
      assert.deepEqual(await disk(), { bars: visibleBars, instruments: 7, exFactors: 2, universes: 1, deletes: 0 })
      assert.equal(await answers(b.market), expected)
      assert.equal(
        barCount(
          await b.market.readBars({ symbol: S[3], period: '1d', fromMs: DAYS[50], toMs: DAYS[149], limit: 1000 }),
        ),
        0,
      )
    },
  )

  need.it(
    'keeps a tombstone while an older import is open, so that import stays hidden when it commits; the next vacuum removes both',
    async () => {
      const older = await a.market.beginWrite()
      await write({ deleteBars: [{ symbol: S[6], period: '1d', fromMs: DAYS[0], toMs: DAYS[49] }] })
      const expected = await answers(b.market)
      const { result: report } = await readersDuring(expected, () => a.market.compact({ graceMs: 0 }))
      assert.deepEqual(report, { supersededRows: 0, hiddenRows: 50, tombstones: 0, pending: false })
      // The older import writes into the deleted range and commits: the tombstone is newer, so still hides it.
      await older.putBars(S[6], '1d', walkBars(days(10, 20), [0.9]))
      await older.commit()
      await caughtUp()
      assert.equal(await answers(b.market), expected)
      const { result: second } = await readersDuring(expected, () => a.market.compact({ graceMs: 0 }))
      assert.deepEqual(second, { supersededRows: 0, hiddenRows: 10, tombstones: 1, pending: false })
      await until('the tombstone to go', async () => (await disk()).deletes === 0)
      assert.equal(await answers(b.market), expected)
    },
  )

  need.it('a grace period leaves the rows of recent commits alone', async () => {
    await write({ bars: [bars(S[7], days(0, 10), 70)] })
    const report = await a.market.compact({ graceMs: 3_600_000 })
    assert.deepEqual(report, { supersededRows: 0, hiddenRows: 0, tombstones: 0, pending: false })
    assert.equal(Number(await query(base(), `SELECT count() FROM compaction.bars WHERE symbol = '${S[7]}'`)), 310)
  })
})

describe('clickhouse vacuum compaction on one server', () => {
  let server: ClickHouseServer
  before(async () => {
    if (need.met) server = await ClickHouseServer.start()
  })
  after(() => server?.destroy())

  need.it(
    'a re-import and a delete leave only the visible rows on disk (bars is the MergeTree itself here)',
    async () => {
      const { market, keys } = await open(server.storeUrl('single'))
      try {
        await market.write({ bars: [bars(S[0], days(0, 100), 1)] })
        await market.write({
          bars: [bars(S[0], days(50, 100), 2)],
          deleteBars: [{ symbol: S[0], period: '1d', fromMs: DAYS[0], toMs: DAYS[9] }],
        })
        const expected = rowsOfBars(await market.readBars({ symbol: S[0], period: '1d', limit: 1000 }))
        assert.equal(expected.length, 90)
        assert.deepEqual(await market.compact({ graceMs: 0 }), {
          supersededRows: 50,
          hiddenRows: 10,
          tombstones: 1,
          pending: false,
        })
        await until(
          'the removals to reach the disk',
          async () =>
            (await query(server.httpUrl, 'SELECT count() FROM single.bars')) === '90' &&
            (await query(server.httpUrl, 'SELECT count() FROM single.deletes')) === '0',
        )
        assert.deepEqual(rowsOfBars(await market.readBars({ symbol: S[0], period: '1d', limit: 1000 })), expected)
      } finally {
        await Promise.all([keys.close(), market.close()])
      }
    },
  )

  need.it(
    'a delete of minutes: their rows go, their tombstone stays (the stored rollups hold them), answers stay after a restart',
    async () => {
      const url = server.storeUrl('deleted_minutes')
      const symbol = S[1]
      const minutes = sessionMinutes('SH', tradingDays('SH', 19_000, 3))
      const reads = async (m: ClickHouseMarketStore) =>
        JSON.stringify(
          await Promise.all(
            (['1m', '5m', '15m', '60m'] as const).map(async (period) =>
              rowsOfBars(await m.readBars({ symbol, period, limit: 1000 })),
            ),
          ),
        )
      const first = await open(url)
      let expected: string
      try {
        await first.market.write({ bars: [{ symbol, period: '1m', bars: walkBars(minutes, [0.4, 0.2]) }] })
        // The last day from 10:30 on, and so part of its 10:00-11:00 hour.
        await first.market.write({
          deleteBars: [{ symbol, period: '1m', fromMs: minutes[240 * 2 + 60], toMs: minutes.at(-1)! }],
        })
        expected = await reads(first.market)
        assert.equal(JSON.parse(expected)[0].length, 240 * 2 + 60)
        const report = await first.market.compact({ graceMs: 0 })
        assert.deepEqual(report, { supersededRows: 0, hiddenRows: 180, tombstones: 0, pending: false })
        await until(
          'the removals to reach the disk',
          async () =>
            (await query(server.httpUrl, `SELECT count() FROM deleted_minutes.bars WHERE period = '1m'`)) === '540',
        )
        assert.equal(await query(server.httpUrl, 'SELECT count() FROM deleted_minutes.deletes'), '1')
      } finally {
        await closeStores(first)
      }
      // A process started after the vacuum reads the store as it is now.
      const second = await open(url)
      try {
        assert.equal(await reads(second.market), expected)
      } finally {
        await closeStores(second)
      }
    },
  )

  need.it('a re-import of minutes leaves one row a key on disk, its rollup rows too; the answers stay', async () => {
    const { market, keys } = await open(server.storeUrl('minutes'))
    const symbol = S[0]
    const minutes = sessionMinutes('SH', tradingDays('SH', 19_000, 2))
    const reads = async () =>
      JSON.stringify(
        await Promise.all(
          (['1m', '5m', '30m', '60m'] as const).map(async (period) =>
            rowsOfBars(await market.readBars({ symbol, period, limit: 1000 })),
          ),
        ),
      )
    // Rows that share a key with another: what vacuum may remove (the newest of each key stays).
    const extra = async () =>
      Number(
        await query(
          server.httpUrl,
          `SELECT sum(c - 1) FROM (SELECT count() AS c FROM minutes.bars WHERE symbol = '${symbol}' GROUP BY period, ts)`,
        ),
      )
    try {
      await market.write({ bars: [{ symbol, period: '1m', bars: walkBars(minutes, [0.2, 0.5]) }] })
      // The second day again, other values: its minutes and their rollups superseded.
      await market.write({ bars: [{ symbol, period: '1m', bars: walkBars(minutes.slice(240), [0.7, 0.1]) }] })
      const expected = await reads()
      const superseded = await extra()
      assert.ok(superseded > 240, `the day's 240 minutes and its rollup rows: ${superseded}`)
      const report = await market.compact({ graceMs: 0 })
      assert.deepEqual(report, { supersededRows: superseded, hiddenRows: 0, tombstones: 0, pending: false })
      await until('the removals to reach the disk', async () => (await extra()) === 0)
      assert.equal(await reads(), expected)
    } finally {
      await Promise.all([keys.close(), market.close()])
    }
  })

  need.it(
    "the live tables keep each symbol's newest row of the imports old enough, and every row of an open or newer one",
    async () => {
      const { market, keys } = await open(server.storeUrl('live'))
      const quote = (symbol: string, ts: number) => ({
        symbol,
        state: {
          last: {
            symbol,
            timestamp: ts,
            lastPrice: 10,
            open: 10,
            high: 20,
            low: 5,
            prevClose: 9.9,
            volume: 100,
            amount: 1000.5,
          },
        },
      })
      const depth = (symbol: string, ts: number) => ({
        symbol,
        timestamp: ts,
        bidPrices: [10.01],
        bidVolumes: [5],
        askPrices: [10.02],
        askVolumes: [1],
      })
      const rows = async (table: string) => Number(await query(server.httpUrl, `SELECT count() FROM live.${table}`))
      const t0 = 1_700_000_000_000
      const push = async (k: number, symbols: readonly string[]) => {
        const w = await market.beginWrite()
        await w.putLiveQuotes(symbols.map((s) => quote(s, t0 + k * 3000)))
        await w.putDepth([depth(S[0], t0 + k * 3000)])
        await w.commit()
      }
      try {
        await push(0, [S[0], S[1]])
        // An import still open whose rows already reached the disk (a large one sends early): its row of
        // S[1] is newer than the committed one, which must stay the newest any reader sees.
        const open = await market.beginWrite()
        const sent = await fetch(server.httpUrl, {
          method: 'POST',
          body: `INSERT INTO live.live_quotes (symbol, ts, quote, import_id, seq) VALUES ('${S[1]}', 1, '{}', ${open.importId}, 1)`,
        })
        assert.equal(sent.status, 200, await sent.text())
        for (let k = 1; k < 5; k++) await push(k, [S[0]])
        await sleep(5)
        const between = Date.now()
        await sleep(5)
        await push(5, [S[0]]) // committed after the cut: its rows stay, and so does the row it supersedes
        const before = await market.readLiveQuotes([S[0], S[1]])
        assert.equal(before.get(S[0])!.state.last.timestamp, t0 + 15_000)
        assert.equal(before.get(S[1])!.state.last.timestamp, t0)
        const removed = await market.compactLive(Date.now() - between)
        assert.equal(removed, 4 + 4, "all but each symbol's newest of the five old imports, quotes and depth")
        await until(
          'the removals to reach the disk',
          async () => (await rows('live_quotes')) === 2 + 1 + 1 && (await rows('live_depth')) === 2,
        )
        assert.deepEqual(await market.readLiveQuotes([S[0], S[1]]), before)
        assert.equal((await market.readDepths([S[0]])).get(S[0])!.timestamp, t0 + 15_000)
        assert.equal(await market.compactLive(Date.now() - between), 0, 'nothing left to remove')
        await open.rollback()
        assert.equal(await market.compactLive(0), 2, 'the rows the newest import superseded, once it is old enough')
        // Later runs with the same grace read only the imports that can have moved since the last one:
        // an import it left out (open) stays left out while open, whatever came after it.
        const done = async () =>
          (await query(
            server.httpUrl,
            "SELECT count() FROM system.mutations WHERE database = 'live' AND is_done = 0",
          )) === '0'
        await until('the removals to finish', done)
        const stillOpen = await market.beginWrite()
        const early = await fetch(server.httpUrl, {
          method: 'POST',
          body: `INSERT INTO live.live_quotes (symbol, ts, quote, import_id, seq) VALUES ('${S[1]}', 2, '{}', ${stillOpen.importId}, 1)`,
        })
        assert.equal(early.status, 200, await early.text())
        await push(6, [S[0]])
        assert.equal(await market.compactLive(0), 2, "S[0]'s row the newest import superseded, quotes and depth")
        await until('the removals to finish', done)
        await push(7, [S[0]])
        assert.equal(await market.compactLive(0), 2, 'the same, once more')
        await until('the removals to finish', done)
        const now = await market.readLiveQuotes([S[0], S[1]])
        assert.deepEqual(
          [now.get(S[0])?.state.last.timestamp, now.get(S[1])?.state.last.timestamp],
          [t0 + 7 * 3000, t0],
        )
        assert.equal(
          await query(server.httpUrl, `SELECT count() FROM live.live_quotes WHERE symbol = '${S[1]}'`),
          '2',
          "S[1]'s committed row and the open import's row",
        )
        await stillOpen.rollback()
      } finally {
        await Promise.all([keys.close(), market.close()])
      }
    },
  )
})
