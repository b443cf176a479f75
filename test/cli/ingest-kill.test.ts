// Nothing answered 2xx is lost: a real `mdq serve --ingest-port` killed with SIGKILL in the middle of a
// minute (and in the middle of a push) and restarted comes back with every closed minute and the
// forming one as they were, and the rest of the day's snapshots then build exactly the source bars.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { barCount, sliceBars, type Bars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { pushedQuote } from '../helpers/ingest-server.js'
import { snapshotsOfDay } from '../../src/domain/quote-snapshots.js'
import { daysFromCivil } from '../../src/domain/time-zone.js'
import { sessionMinutes, walkBars } from '../helpers/arbitraries.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { demoDb, getJson, type KlinesData } from '../helpers/server.js'
import { runMdq, tempDir } from '../helpers/store-files.js'
import { TAIL_FOLD_ROWS } from '../../src/store/sqlite/tail.js'

const { dir, cleanup } = tempDir('mdq-ingest-kill-')
const DAY = daysFromCivil(2026, 1, 6)
const SYMBOLS = ['600519.SH', '000001.SZ', '601318.SH']
let db: string
let feedKey: string
let readKey: string
let server: ServeProcess | undefined

before(async () => {
  db = await demoDb(dir)
  feedKey = runMdq(['--db', db, 'keys', 'create', '--name', 'feed', '--scope', 'ingest']).stdout.trim()
  readKey = runMdq(['--db', db, 'keys', 'create', '--name', 'reader']).stdout.trim()
})
after(async () => {
  await server?.kill()
  cleanup()
})

const serve = () => spawnServe(['--db', db], ['--ingest-port', '0', '--workers', '0', '--cache-mb', '0'])

function sourceBars(seed: number[]): Bars {
  const ts = sessionMinutes('SH', [MARKETS.SH.zone.midnightUtc(DAY)])
  const bars = walkBars(ts, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 20 + ((i * 7) % 50)
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  return bars
}

const wire = pushedQuote

async function push(base: string, quotes: readonly QuoteSnapshot[]): Promise<number> {
  const r = await fetch(`${base}/v1/ingest/quotes`, {
    method: 'POST',
    headers: { 'X-API-Key': feedKey, 'Content-Type': 'application/json' },
    body: JSON.stringify(quotes.map(wire)),
  })
  await r.text()
  return r.status
}

async function intraday(base: string, symbol: string): Promise<KlinesData> {
  const r = await getJson<{ data: KlinesData }>(`${base}/v1/klines/intraday?symbol=${symbol}`, {
    headers: { 'X-API-Key': readKey },
  })
  assert.equal(r.status, 200)
  return r.body.data
}

const columns = (d: KlinesData) => [d.timestamp, d.open, d.high, d.low, d.close, d.volume, d.amount]
const barColumns = (b: Bars) => [b.timestamp, b.open, b.high, b.low, b.close, b.volume, b.amount].map((c) => [...c])

describe('ingest survives SIGKILL', () => {
  it('restarts with every closed minute and the forming one as answered, and finishes the day exactly', async () => {
    const sources = new Map(SYMBOLS.map((s, k) => [s, sourceBars([0.2 + k * 0.1, 0.7, 0.45])]))
    // The day's snapshots of all symbols, interleaved by time, as a feed sends them.
    const all = SYMBOLS.flatMap((s) => snapshotsOfDay(s, sources.get(s)!, MARKETS.SH, 100, 3)).sort(
      (a, b) => a.timestamp - b.timestamp || a.symbol.localeCompare(b.symbol),
    )
    // Kill points: in the middle of a minute (after a 200), and with a push in flight.
    const cuts = [Math.floor(all.length * 0.23) + 1, Math.floor(all.length * 0.61) + 2]
    let at = 0
    server = await serve()
    for (const [round, cut] of cuts.entries()) {
      for (; at < cut; at += 40) assert.equal(await push(server.ingest!, all.slice(at, Math.min(cut, at + 40))), 200)
      at = cut
      const answered = await Promise.all(SYMBOLS.map((s) => intraday(server!.base, s)))
      let inFlight: Promise<number> | undefined
      if (round === 1) inFlight = push(server.ingest!, all.slice(at, at + 40)).catch(() => 0)
      await server.kill()
      const flew = await inFlight
      server = await serve()
      const back = await Promise.all(SYMBOLS.map((s) => intraday(server!.base, s)))
      for (const [k, s] of SYMBOLS.entries()) {
        const got = columns(back[k])
        const before = columns(answered[k])
        const n = before[0].length
        // Every minute answered before the kill is back: the closed ones as the source has them...
        assert.deepEqual(
          before.map((c) => c.slice(0, n - 1)),
          barColumns(sliceBars(sources.get(s)!, 0, n - 1)),
        )
        assert.deepEqual(
          got.map((c) => c.slice(0, n - 1)),
          before.map((c) => c.slice(0, n - 1)),
        )
        // ...and the forming one as answered, unless the push in flight was stored too (answered or not).
        if (inFlight === undefined) assert.deepEqual(got, before, `${s} round ${round}`)
        else assert.ok(got[0].length >= n, `${s} lost minutes`)
      }
      // The push in flight, when answered, is stored: the feed goes on after it; else it is sent again.
      if (flew === 200) at += 40
    }
    // A push the dead server may or may not have stored is simply sent again: repeats change nothing.
    for (; at < all.length; at += 40) assert.equal(await push(server.ingest!, all.slice(at, at + 40)), 200)
    for (const s of SYMBOLS) assert.deepEqual(columns(await intraday(server.base, s)), barColumns(sources.get(s)!))
    await server.stop()
    server = undefined
  })

  // A series is folded once it holds TAIL_FOLD_ROWS rows (all but its newest); what came after the last
  // fold stays in the tail until more does. The first test's servers may have folded part of the day.
  it("folds the pushed day into chunks in the background (on the ingest's thread), leaving each minute series fewer rows than a fold takes, and answers the same", async () => {
    server = await serve()
    const before = await Promise.all(SYMBOLS.map((s) => intraday(server!.base, s)))
    const file = new Database(db, { readonly: true })
    const tailRows = file
      .prepare<[string], number>("SELECT count(*) FROM tail WHERE period = '1m' AND symbol = ?")
      .pluck()
    const unfolded = () => SYMBOLS.filter((s) => tailRows.get(s)! >= TAIL_FOLD_ROWS)
    try {
      // Polled until done (at most 60 s, so a server that never folds fails rather than hangs).
      for (let waited = 0; unfolded().length > 0 && waited < 60_000; waited += 50) await sleep(50)
      assert.deepEqual(unfolded(), [], `a fold leaves fewer than ${TAIL_FOLD_ROWS} rows in each 1m series`)
      for (const s of SYMBOLS) assert.ok(tailRows.get(s)! >= 1, `${s} keeps its newest minute in the tail`)
    } finally {
      file.close()
    }
    assert.deepEqual(await Promise.all(SYMBOLS.map((s) => intraday(server!.base, s))), before)
    await server.stop()
    server = undefined
  })
})
