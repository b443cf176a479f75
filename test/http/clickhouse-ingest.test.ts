// Live data on a two-shard ClickHouse cluster: a push to one `mdq serve --ingest-port` instance is read on
// another (polled, within the 1 s bound); when the first dies (SIGKILL) mid-minute, the feed moves to the
// second, which continues each symbol's minute from the stored state; the day comes out exactly, and its
// minute periods as SQLite answers them for the same pushes (no rollups stored for live puts).
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { barCount, type Bars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { pushedQuote } from '../helpers/ingest-server.js'
import { snapshotsOfDay } from '../../src/domain/quote-snapshots.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { sessionMinutes, walkBars } from '../helpers/arbitraries.js'
import { LiveIngest } from '../../src/ingest/live-ingest.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { ClickHouseCluster, clickhouseSql } from '../helpers/clickhouse.js'
import { ClickHouseIngestLog } from '../../src/store/clickhouse/ingest-log.js'
import { FileIngestLog } from '../../src/ingest/file-log.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { getJson, type KlinesData } from '../helpers/server.js'
import { runMdq } from '../helpers/store-files.js'

const need = requires(clickhouseServer())
const DAY = daysFromCivil(2026, 1, 6)
const SYMBOLS = ['600519.SH', '000001.SZ']

function dayBars(seed: number[]): Bars {
  const ts = sessionMinutes('SH', [MARKETS.SH.zone.midnightUtc(DAY)]).slice(0, 90)
  const bars = walkBars(ts, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 30 + i
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  return bars
}

const wire = pushedQuote
const columns = (d: Record<'timestamp' | 'open' | 'high' | 'low' | 'close' | 'volume' | 'amount', ArrayLike<number>>) =>
  [d.timestamp, d.open, d.high, d.low, d.close, d.volume, d.amount].map((c) => Array.from(c))

/** `read` of what the pushes `quotes` (50 a push) build on SQLite, each push written as it comes. */
async function onSqlite<T>(
  quotes: readonly QuoteSnapshot[],
  read: (sqlite: SqliteMarketStore, contexts: SymbolContexts) => Promise<T>,
): Promise<T> {
  const sqlite = SqliteMarketStore.open(':memory:')
  try {
    const ingest = new LiveIngest(sqlite)
    for (let i = 0; i < quotes.length; i += 50)
      await ingest.writeQuotes(quotes.slice(i, i + 50).map((snapshot) => ({ snapshot })))
    return await read(sqlite, new SymbolContexts(sqlite))
  } finally {
    await sqlite.close()
  }
}

/** A new store at `url`, migrated, with a feed key and a read key; instances served on it, pushes and reads through those keys. */
function liveStore(url: string, servers: ServeProcess[]) {
  const mdq = (...args: string[]) => {
    const r = runMdq(['--store', url, ...args])
    assert.equal(r.status, 0, r.stderr)
    return r.stdout.trim()
  }
  mdq('migrate')
  const feedKey = mdq('keys', 'create', '--name', 'feed', '--scope', 'ingest')
  const readKey = mdq('keys', 'create', '--name', 'reader')
  return {
    serve: async (...flags: string[]) => {
      const s = await spawnServe(['--store', url], ['--ingest-port', '0', '--rate-limit', 'off', ...flags])
      servers.push(s)
      return s
    },
    push: async (at: ServeProcess, quotes: readonly QuoteSnapshot[]) => {
      const r = await fetch(`${at.ingest}/v1/ingest/quotes`, {
        method: 'POST',
        headers: { 'X-API-Key': feedKey, 'Content-Type': 'application/json' },
        body: JSON.stringify(quotes.map(wire)),
      })
      assert.equal(r.status, 200, await r.text())
    },
    intraday: async (at: ServeProcess, symbol: string) => {
      const r = await getJson<{ data: KlinesData }>(`${at.base}/v1/klines/intraday?symbol=${symbol}`, {
        headers: { 'X-API-Key': readKey },
      })
      return r.status === 200 ? r.body.data : undefined
    },
    readKey,
  }
}

describe('live data on a two-shard ClickHouse cluster', () => {
  let cluster: ClickHouseCluster
  let store: string
  const servers: ServeProcess[] = []
  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    store = cluster.storeUrl('live')
  })
  after(async () => {
    await Promise.all(servers.map((s) => s.kill()))
    await cluster?.destroy()
  })

  need.it('refuses --ingest-nice in one line: pushes to ClickHouse are taken on the main thread', () => {
    assert.equal(runMdq(['--store', store, 'migrate']).status, 0)
    const r = runMdq(['--store', store, 'serve', '--port', '0', '--ingest-port', '0', '--ingest-nice', '10'])
    assert.equal(r.status, 1)
    assert.match(
      r.stderr,
      /^mdq: --ingest-nice sets the priority of the ingest thread of a store whose writes hold a thread \(SQLite\)/,
    )
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  })

  need.it(
    'a push to one instance is read on another; after a SIGKILL the other takes the feed over exactly',
    async () => {
      const { serve, push, intraday, readKey } = liveStore(store, servers)
      const [a, b] = [await serve(), await serve()]
      const sources = new Map(SYMBOLS.map((s, k) => [s, dayBars([0.3 + k * 0.2, 0.6])]))
      const all = SYMBOLS.flatMap((s) => snapshotsOfDay(s, sources.get(s)!, MARKETS.SH, 50, 3)).sort(
        (x, y) => x.timestamp - y.timestamp,
      )
      const half = Math.floor(all.length / 2) + 1
      for (let i = 0; i < half; i += 50) await push(a, all.slice(i, Math.min(half, i + 50)))
      // What A answered, B reads once its snapshot poll (every 250 ms) has seen A's commit.
      const onA = await Promise.all(SYMBOLS.map((s) => intraday(a, s)))
      const t0 = Date.now()
      for (;;) {
        const onB = await Promise.all(SYMBOLS.map((s) => intraday(b, s)))
        if (JSON.stringify(onB) === JSON.stringify(onA)) break
        assert.ok(Date.now() - t0 < 30_000, 'instance B never saw what A stored')
        await sleep(20)
      }
      console.log(`a push to instance A was read on instance B after ${Date.now() - t0} ms`)
      await a.kill()
      for (let i = half; i < all.length; i += 50) await push(b, all.slice(i, i + 50))
      for (const s of SYMBOLS) assert.deepEqual(columns((await intraday(b, s))!), columns(sources.get(s)!), s)
      // Live puts store no rollups (each minute is put again as it forms): the minute periods are
      // rolled up from the 1m bars on read, as SQLite answers them after the same pushes.
      const rollupRows = await clickhouseSql(
        cluster.servers[0].httpUrl,
        "SELECT count() FROM live.bars WHERE period NOT IN ('1m', '1d')",
      )
      assert.equal(rollupRows.trim(), '0')
      await onSqlite(all, async (sqlite, contexts) => {
        for (const period of ['5m', '30m', '60m'] as const)
          for (const s of SYMBOLS) {
            const r = await getJson<{ data: KlinesData }>(
              `${b.base}/v1/klines?symbol=${s}&period=${period}&adjust=none&count=1000`,
              { headers: { 'X-API-Key': readKey } },
            )
            assert.equal(r.status, 200)
            const expected = await readKlines(sqlite, contexts, { symbol: s, period, adjust: 'none', count: 1000 })
            assert.ok(expected.timestamp.length > 0)
            assert.deepEqual(columns(r.body.data), columns(expected), `${s} ${period}`)
          }
      })
    },
  )
  /**
   * Pushes answered once logged (in the store's log, or in files with `logDir`) to an instance killed
   * right after the answers: the next instance over the same log writes every one of them.
   */
  const killedAfterAnswers = async (db: string, logDir?: string) => {
    const logged = liveStore(cluster.storeUrl(db), servers)
    const { push } = logged
    const serve = (writeEveryMs: number) =>
      logged.serve(
        '--ingest-answer',
        'logged',
        '--ingest-write-every',
        String(writeEveryMs),
        ...(logDir ? ['--ingest-log', logDir] : []),
      )
    const intraday = async (at: ServeProcess, symbol: string) => {
      const data = await logged.intraday(at, symbol)
      return data && columns(data)
    }
    const sources = new Map(SYMBOLS.map((s, k) => [s, dayBars([0.45 + k * 0.1, 0.35])]))
    const all = SYMBOLS.flatMap((s) => snapshotsOfDay(s, sources.get(s)!, MARKETS.SH, 50, 3)).sort(
      (x, y) => x.timestamp - y.timestamp,
    )
    /** What the pushes `quotes` build, as SQLite answers once each push is written. */
    const builtBy = (quotes: readonly QuoteSnapshot[]) =>
      onSqlite(quotes, (sqlite, contexts) =>
        Promise.all(
          SYMBOLS.map(async (s) =>
            columns(await readKlines(sqlite, contexts, { symbol: s, period: '1m', adjust: 'none', count: 1000 })),
          ),
        ),
      )
    const until = async (at: ServeProcess, expected: number[][][], what: string) => {
      const t0 = Date.now()
      for (;;) {
        const got = await Promise.all(SYMBOLS.map((s) => intraday(at, s)))
        if (JSON.stringify(got) === JSON.stringify(expected)) return Date.now() - t0
        assert.ok(Date.now() - t0 < 30_000, `${what}: ${JSON.stringify(got.map((g) => g?.[0].length))}`)
        await sleep(20)
      }
    }
    const cut = Math.floor(all.length * 0.6) + 1
    // A writes behind at most once a minute while pushes keep coming: most of what it answers waits.
    const a = await serve(60_000)
    for (let i = 0; i < cut; i += 50) await push(a, all.slice(i, Math.min(cut, i + 50)))
    await a.kill() // at once: the last pushes are logged, their bars perhaps not yet written
    const c = await serve(200)
    const ms = await until(c, await builtBy(all.slice(0, cut)), 'every push answered before the kill')
    console.log(`what instance A answered was read on the next instance ${ms} ms after it listened`)
    // Read there at once (the replayed pushes are held to write); then written, with no failure.
    const t0 = Date.now()
    for (;;) {
      const metrics = await (await fetch(`${c.base}/metrics`)).text()
      assert.match(metrics, /^mdq_ingest_write_behind_failures_total 0$/m)
      if (/^mdq_ingest_unwritten_symbols 0$/m.test(metrics)) break
      assert.ok(Date.now() - t0 < 30_000, 'what the log held was never written')
      await sleep(20)
    }
    for (let i = cut; i < all.length; i += 50) await push(c, all.slice(i, i + 50))
    await until(
      c,
      SYMBOLS.map((s) => columns(sources.get(s)!)),
      'the whole day',
    )
    // A graceful stop writes what it logged before the store closes: nothing is left to replay.
    await c.stop()
    const meta = cluster.servers[0].connection(db)
    try {
      assert.deepEqual(await new ClickHouseIngestLog(meta).unwritten(), [])
      if (logDir) {
        assert.deepEqual(await new FileIngestLog(logDir).unwritten(), [])
        assert.equal(await clickhouseSql(cluster.servers[0].httpUrl, `SELECT count() FROM ${db}.ingest_log`), '0')
      }
    } finally {
      await meta.close()
    }
  }
  need.it(
    'answered once logged: a SIGKILL right after the answers loses none of them; the next instance writes them',
    () => killedAfterAnswers('logged'),
  )
  need.it('the same with the log in files of its own (--ingest-log): the next instance over them writes them', () =>
    killedAfterAnswers('logged_files', mkdtempSync(join(tmpdir(), 'mdq-ingest-log-'))),
  )
  need.it(
    'answered once logged: a push is readable at once on the instance it went to, written or not, in every period and the quotes',
    async () => {
      const { serve, push, readKey } = liveStore(cluster.storeUrl('unwritten'), servers)
      // At most one write behind a minute while pushes keep coming: what the reads below find is
      // mostly not written yet (what a pause between pushes let through is).
      const a = await serve('--ingest-answer', 'logged', '--ingest-write-every', '60000')
      const sources = new Map(SYMBOLS.map((s, k) => [s, dayBars([0.25 + k * 0.3, 0.55])]))
      const all = SYMBOLS.flatMap((s) => snapshotsOfDay(s, sources.get(s)!, MARKETS.SH, 50, 3)).sort(
        (x, y) => x.timestamp - y.timestamp,
      )
      const cut = Math.floor(all.length * 0.7) + 1
      for (let i = 0; i < cut; i += 50) await push(a, all.slice(i, Math.min(cut, i + 50)))
      const read = async (path: string) => {
        const r = await getJson<{ data: KlinesData }>(`${a.base}${path}`, { headers: { 'X-API-Key': readKey } })
        assert.equal(r.status, 200, path)
        return columns(r.body.data)
      }
      // Read at once after the last answer, before a later write could matter: as SQLite answers the same pushes.
      const got = await Promise.all(
        SYMBOLS.flatMap((s) => [
          read(`/v1/klines/intraday?symbol=${s}`),
          ...(['5m', '60m', '1d'] as const).map((p) =>
            read(`/v1/klines?symbol=${s}&period=${p}&adjust=none&count=1000`),
          ),
        ]),
      )
      const quotes = await getJson<{ data: { symbol: string; last_price: number; volume: number }[] }>(
        `${a.base}/v1/quotes?symbols=${SYMBOLS.join(',')}`,
        { headers: { 'X-API-Key': readKey } },
      )
      const expected = await onSqlite(all.slice(0, cut), (sqlite, contexts) =>
        Promise.all(
          SYMBOLS.flatMap((s) =>
            (['1m', '5m', '60m', '1d'] as const).map(async (period) =>
              columns(await readKlines(sqlite, contexts, { symbol: s, period, adjust: 'none', count: 1000 })),
            ),
          ),
        ),
      )
      assert.ok(expected.every((c) => c[0].length > 0))
      assert.deepEqual(got, expected)
      for (const s of SYMBOLS) {
        const last = all.slice(0, cut).findLast((q) => q.symbol === s)!
        const quote = quotes.body.data.find((q) => q.symbol === s)!
        assert.deepEqual([quote.last_price, quote.volume], [last.lastPrice, last.volume], s)
      }
    },
  )
})
