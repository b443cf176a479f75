// Quote pushes answered once logged (ClickHouse's ingest log), their bars written behind: a day comes
// out exactly; pushes answered by an ingest that died before writing them are written by the next
// ingest to start (on another instance too), and what was written already changes nothing again.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, type Bars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { snapshotsOfDay } from '../../src/domain/quote-snapshots.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { LiveIngest } from '../../src/ingest/live-ingest.js'
import {
  ClickHouseStores,
  parseClickHouseUrl,
  type ClickHouseMarketStore,
} from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import { ClickHouseIngestLog, LOG_KEEP_DAYS } from '../../src/store/clickhouse/ingest-log.js'
import type { MarketStore } from '../../src/store/market-store.js'
import { sessionMinutes, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseServer, clickhouseSql, closeStores } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'

const need = requires(clickhouseServer())
const DAY = daysFromCivil(2026, 1, 6)
const SYMBOLS = ['600519.SH', '000001.SZ']

function dayBars(seed: number[]): Bars {
  const ts = sessionMinutes('SH', [MARKETS.SH.zone.midnightUtc(DAY)]).slice(0, 80)
  const bars = walkBars(ts, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 40 + i
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  return bars
}

const columns = (b: Bars) => [b.timestamp, b.open, b.high, b.low, b.close, b.volume, b.amount].map((c) => Array.from(c))

/** `store`, but every write fails: an ingest over it logs pushes and dies (as it were) before writing them. */
function unwritable(store: MarketStore): MarketStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'beginWrite') return () => Promise.reject(new Error('killed before its write'))
      if (key === 'showUnwritten') return undefined // its process is gone: no read there shows what it held
      const value: unknown = Reflect.get(target, key)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

describe('quote pushes answered once logged on ClickHouse', () => {
  let server: ClickHouseServer
  let a: { market: ClickHouseMarketStore; keys: KeyStore }
  let b: { market: ClickHouseMarketStore; keys: KeyStore }
  before(async () => {
    if (!need.met) return
    server = await ClickHouseServer.start()
    a = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('logged')))
    b = await ClickHouseStores.open(parseClickHouseUrl(server.storeUrl('logged')))
  })
  after(async () => {
    await closeStores(a, b)
    await server?.destroy()
  })

  need.it(
    'a day comes out exactly; what a dead ingest logged is written by the next to start, on another instance',
    async () => {
      const sources = new Map(SYMBOLS.map((s, k) => [s, dayBars([0.25 + k * 0.3, 0.65])]))
      const all = SYMBOLS.flatMap((s) => snapshotsOfDay(s, sources.get(s)!, MARKETS.SH, 50, 3)).sort(
        (x, y) => x.timestamp - y.timestamp || x.symbol.localeCompare(y.symbol),
      )
      const push = async (ingest: LiveIngest, quotes: readonly QuoteSnapshot[]) => {
        // Four pushes at once, as a feed with several in flight: logged together, written behind together.
        const batches: QuoteSnapshot[][] = []
        for (let i = 0; i < quotes.length; i += 25) batches.push(quotes.slice(i, i + 25))
        for (let i = 0; i < batches.length; i += 4) {
          const answers = await Promise.all(
            batches.slice(i, i + 4).map((q) => ingest.writeQuotes(q.map((snapshot) => ({ snapshot })))),
          )
          for (const [k, r] of answers.entries())
            assert.equal(r.outcome.accepted, batches[i + k].length, 'every snapshot accepted')
        }
      }
      const minutes = async (store: MarketStore, symbol: string) =>
        store.readBars({ symbol, period: '1m', limit: 1000 })
      const writesOf = (store: MarketStore) => {
        const seen = { writes: 0 }
        const begin = store.beginWrite.bind(store)
        store.beginWrite = (o) => {
          seen.writes++
          return begin(o)
        }
        return seen
      }

      // A first ingest: answered once logged; once settled, its bars are the source's, in fewer writes than pushes.
      const [q1, q2, q3] = [Math.floor(all.length / 3), Math.floor((2 * all.length) / 3), all.length]
      const seen = writesOf(a.market)
      const first = new LiveIngest(a.market, { ingestLog: a.market.ingestLog! })
      await push(first, all.slice(0, q1))
      await first.settled()
      const pushes = Math.ceil(q1 / 25)
      assert.ok(seen.writes < pushes, `${seen.writes} writes for ${pushes} pushes`)
      /** Every closed minute as the source has it (the forming one is partial), none missing up to snapshot `k`. */
      const closedAsSource = async (store: MarketStore, k: number) => {
        for (const s of SYMBOLS) {
          const got = columns(await minutes(store, s))
          const src = columns(sources.get(s)!)
          const n = got[0].length
          assert.deepEqual(
            got.map((c) => c.slice(0, n - 1)),
            src.map((c) => c.slice(0, n - 1)),
            s,
          )
          const closed = src[0].filter((t) => t <= all[k - 1].timestamp - 60_000).length
          assert.ok(n - 1 >= closed, `${s}: ${n - 1} closed minutes, ${closed} by the last snapshot`)
        }
      }
      await closedAsSource(a.market, q1)
      assert.deepEqual(await a.market.ingestLog!.unwritten(), [], 'every entry written is marked')
      const beforeDeath = await Promise.all(SYMBOLS.map((s) => minutes(a.market, s)))

      // A second ingest logs its pushes and dies before it writes them: answered, not yet readable.
      const dying = new LiveIngest(unwritable(a.market), { ingestLog: a.market.ingestLog! })
      await push(dying, all.slice(q1, q2))
      await sleep(300) // a write behind would have landed by now
      assert.deepEqual(await Promise.all(SYMBOLS.map((s) => minutes(a.market, s))), beforeDeath)
      assert.ok((await a.market.ingestLog!.unwritten()).length > 0)

      // The next ingest to start, on another instance, writes them; then the feed goes on through it.
      const next = new LiveIngest(b.market, { ingestLog: b.market.ingestLog! })
      await next.recover()
      await next.settled()
      assert.deepEqual(await b.market.ingestLog!.unwritten(), [])
      await closedAsSource(b.market, q2)
      for (const [k, s] of SYMBOLS.entries())
        assert.ok(barCount(await minutes(b.market, s)) > barCount(beforeDeath[k]), `${s}: the dead ingest's minutes`)
      await push(next, all.slice(q2, q3))
      await next.settled()
      for (const s of SYMBOLS) assert.deepEqual(columns(await minutes(b.market, s)), columns(sources.get(s)!), s)

      // A later ingest replays nothing written already: the log is marked up to its end.
      const later = new LiveIngest(a.market, { ingestLog: a.market.ingestLog! })
      const writes = seen.writes
      await later.recover()
      await later.settled()
      assert.equal(seen.writes, writes, 'nothing left to write')
      const rows = await clickhouseSql(server.httpUrl, "SELECT count() FROM logged.ingest_log WHERE kind = 'entry'")
      assert.ok(Number(rows.trim()) > 0, 'the log keeps its entries (dropped by whole days)')
    },
  )

  need.it('keeps the log for its last days: older days are dropped whole, the others kept', async () => {
    const day = 86_400_000
    const now = Date.UTC(2026, 10, 20, 12)
    const entry = (atMs: number, seq: number) => `99\t${seq}\t${atMs}\tentry\t[]\n`
    await clickhouseSql(
      server.httpUrl,
      'INSERT INTO logged.ingest_log (feed, seq, at_ms, kind, body) FORMAT TabSeparated',
      entry(now - 9 * day, 1) + entry(now - 8 * day, 2) + entry(now - 6 * day, 3) + entry(now, 4),
    )
    const seqs = async () =>
      (await clickhouseSql(server.httpUrl, 'SELECT seq FROM logged.ingest_log WHERE feed = 99 ORDER BY seq'))
        .trim()
        .split('\n')
    assert.deepEqual(await seqs(), ['1', '2', '3', '4'])
    const meta = server.connection('logged')
    try {
      await new ClickHouseIngestLog(meta).dropOld(now)
    } finally {
      await meta.close()
    }
    assert.deepEqual(await seqs(), ['3', '4'], `the last ${LOG_KEEP_DAYS} days kept`)
  })
})
