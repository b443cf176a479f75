// The SQLite tail: appends cost a row, never a chunk rewrite; reads merge tail and chunks, rollups
// included, exactly as the same bars imported at once; folding changes no answer and no version.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { barCount, rowsOfBars, sliceBars, type Bars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import { ROLLUP_PERIODS } from '../../src/domain/rollups.js'
import type { ChunkPeriod } from '../../src/store/market-store.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { FREE_PAGES_KEPT } from '../../src/store/sqlite/sqlite-writer.js'
import { LIVE_COMMITS_FOLD, LIVE_COMMITS_MAX } from '../../src/store/sqlite/live-tables.js'
import { chunkStatements } from '../../src/store/sqlite/chunk-statements.js'
import { MIGRATIONS } from '../../src/store/sqlite/schema.js'
import { migrate, openDb } from '../../src/store/sqlite/sqlite-db.js'
import {
  KnownTails,
  TAIL_APPEND_MAX,
  TAIL_FOLD_ROWS,
  TAIL_MAX_ROWS,
  tailStatements,
  TailWriter,
} from '../../src/store/sqlite/tail.js'
import { arbSeed, sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir('mdq-tail-')
after(cleanup)

const PERIODS: readonly ChunkPeriod[] = ['1m', ...ROLLUP_PERIODS, '1d']
const rows = (b: Bars) => rowsOfBars(b)

/** Every answer a reader can ask of a symbol, over a few ranges and limits. */
async function answers(store: SqliteMarketStore, symbol: string, ts: readonly number[]): Promise<unknown[]> {
  const out: unknown[] = []
  const n = ts.length
  const ranges: [number | undefined, number | undefined, number][] = [
    [undefined, undefined, Number.MAX_SAFE_INTEGER],
    [undefined, undefined, 7],
    [ts[Math.floor(n / 3)], ts[n - 2], 50],
    [ts[n - 40], undefined, 3],
    [undefined, ts[n - 15], 20],
  ]
  for (const period of PERIODS)
    for (const [fromMs, toMs, limit] of ranges)
      out.push([period, fromMs, toMs, limit, rows(await store.readBars({ symbol, period, fromMs, toMs, limit }))])
  return out
}

/** The chunks table, each row's key and a digest of its BLOB. */
function chunkDigest(path: string): string[] {
  const db = new Database(path, { readonly: true })
  try {
    return db
      .prepare<[], { symbol: string; period: string; start_ms: number; data: Buffer }>(
        'SELECT symbol, period, start_ms, data FROM chunks ORDER BY symbol, period, start_ms',
      )
      .all()
      .map((r) => `${r.symbol} ${r.period} ${r.start_ms} ${createHash('sha1').update(r.data).digest('hex')}`)
  } finally {
    db.close()
  }
}

const tailRows = (path: string): number => {
  const db = new Database(path, { readonly: true })
  try {
    return db.prepare('SELECT count(*) FROM tail').pluck().get() as number
  } finally {
    db.close()
  }
}

/** A new store `name` with one symbol's 1m bars over `days` SH days from `firstDay`, the first `written` of them written. */
async function oneSeries(name: string, firstDay: number, days: number, seed: number[], written: number) {
  const path = join(dir, name)
  const store = SqliteMarketStore.open(path)
  const ts = sessionMinutes('SH', tradingDays('SH', firstDay, days))
  const bars = walkBars(ts, seed)
  const symbol = '600000.SH'
  await store.write({
    instruments: [bareInstrument(symbol)],
    bars: [{ symbol, period: '1m', bars: sliceBars(bars, 0, written) }],
  })
  return { path, store, ts, bars, symbol }
}

describe('sqlite tail', () => {
  it('appending one minute to many symbols adds rows to the tail and rewrites no chunk', async () => {
    const path = join(dir, 'append.db')
    const store = SqliteMarketStore.open(path)
    const symbols = Array.from({ length: 50 }, (_, i) => `60${String(i).padStart(4, '0')}.SH`)
    const ts = sessionMinutes('SH', tradingDays('SH', 19_500, 2))
    const bars = walkBars(ts, [0.4, 0.1])
    const n = barCount(bars)
    await store.write({
      instruments: symbols.map((s) => bareInstrument(s)),
      bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, 0, n - 1) })),
    })
    const before = chunkDigest(path)
    const w = await store.beginWrite()
    for (const symbol of symbols) await w.putBars(symbol, '1m', sliceBars(bars, n - 1, n))
    await w.commit()
    assert.deepEqual(chunkDigest(path), before)
    assert.equal(tailRows(path), symbols.length)
    for (const symbol of symbols)
      assert.deepEqual(rows(await store.readBars({ symbol, period: '1m', limit: 3 })), rows(sliceBars(bars, n - 3, n)))
    await store.close()
  })

  it('reads appends merged with chunks, rollups included, exactly as the same bars written at once; folds change no answer and no version', async () => {
    const arbCase = fc.record({
      exchange: fc.constantFrom('SH', 'HK', 'US'),
      firstDay: fc.integer({ min: 18_000, max: 20_000 }),
      seed: arbSeed,
      // Bars of the last day(s) appended in pieces of these sizes (the rest written before, as chunks).
      pieces: fc.array(fc.integer({ min: 1, max: TAIL_APPEND_MAX }), { minLength: 1, maxLength: 30 }),
      // After which pieces a background fold step runs.
      folds: fc.array(fc.nat({ max: 40 }), { maxLength: 5 }),
      // Pieces re-written with other prices before the right ones (a forming bar).
      forming: fc.array(fc.nat({ max: 40 }), { maxLength: 8 }),
    })
    let k = 0
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const symbol = { SH: '600000.SH', HK: '00700.HK', US: 'AAPL.US' }[c.exchange]
        const days = tradingDays(c.exchange as 'SH', c.firstDay, 4)
        const ts = sessionMinutes(c.exchange as 'SH', days)
        const minute = walkBars(ts, c.seed)
        const daily = walkBars(tradingDays(c.exchange as 'SH', c.firstDay - 400, 300), c.seed)
        const n = barCount(minute)
        const appended = Math.min(
          n - 100,
          c.pieces.reduce((a, b) => a + b, 0),
        )
        const live = SqliteMarketStore.open(join(dir, `live-${k}.db`))
        const oracle = SqliteMarketStore.open(join(dir, `oracle-${k++}.db`))
        try {
          await live.write({
            instruments: [bareInstrument(symbol)],
            bars: [
              { symbol, period: '1m', bars: sliceBars(minute, 0, n - appended) },
              { symbol, period: '1d', bars: sliceBars(daily, 0, 250) },
            ],
          })
          let at = n - appended
          let piece = 0
          let version = (await live.readVersions()).of(symbol)
          while (at < n) {
            const size = Math.min(c.pieces[piece % c.pieces.length], n - at)
            if (c.forming.includes(piece))
              await live.write({ bars: [{ symbol, period: '1m', bars: walkBars(ts.slice(at, at + size), [0.5]) }] })
            await live.write({ bars: [{ symbol, period: '1m', bars: sliceBars(minute, at, at + size) }] })
            if (piece < 50)
              await live.write({ bars: [{ symbol, period: '1d', bars: sliceBars(daily, 250 + piece, 251 + piece) }] })
            at += size
            if (c.folds.includes(piece)) {
              version = (await live.readVersions()).of(symbol)
              const before = await answers(live, symbol, ts)
              while (await live.foldAppends()) {
                /* the whole walk */
              }
              assert.deepEqual(await answers(live, symbol, ts), before)
              assert.equal((await live.readVersions()).of(symbol), version)
            }
            piece++
          }
          const days1d = Math.min(50, piece)
          await oracle.write({
            instruments: [bareInstrument(symbol)],
            bars: [
              { symbol, period: '1m', bars: minute },
              { symbol, period: '1d', bars: sliceBars(daily, 0, 250 + days1d) },
            ],
          })
          assert.deepEqual(await answers(live, symbol, ts), await answers(oracle, symbol, ts))
        } finally {
          await live.close()
          await oracle.close()
        }
      }),
      { numRuns: 25 },
    )
  })

  it('a commit that takes a series past TAIL_MAX_ROWS folds it, whoever appended the rows before', async () => {
    const { path, store, bars, symbol } = await oneSeries('oversized.db', 19_700, 6, [0.2, 0.6], 1)
    const append = (to: SqliteMarketStore, i: number) =>
      to.write({ bars: [{ symbol, period: '1m', bars: sliceBars(bars, i, i + 1) }] })
    // Another connection (a second process) appends first: this store's writer has not seen those rows.
    const other = SqliteMarketStore.open(path)
    for (let i = 1; i <= 600; i++) await append(other, i)
    await other.close()
    // Bars 0..TAIL_MAX_ROWS - 1 are all in the tail; the next commit takes it past the limit.
    for (let i = 601; i < TAIL_MAX_ROWS; i++) await append(store, i)
    assert.equal(tailRows(path), TAIL_MAX_ROWS)
    await append(store, TAIL_MAX_ROWS)
    assert.equal(tailRows(path), 1, 'folded at the first commit past the limit, all but the newest row')
    const all = TAIL_MAX_ROWS + 1
    assert.deepEqual(rows(await store.readBars({ symbol, period: '1m', limit: 1e6 })), rows(sliceBars(bars, 0, all)))
    await store.close()
  })

  it('writes that put the newest row again with the next (a live minute closed, the next forming) fold only past TAIL_MAX_ROWS', async () => {
    const { path, store, bars, symbol } = await oneSeries('rewritten.db', 19_750, 6, [0.4, 0.3], 1)
    // Each write: bar i - 1 again (its last version) and bar i (the forming minute).
    const append = (i: number) => store.write({ bars: [{ symbol, period: '1m', bars: sliceBars(bars, i - 1, i + 1) }] })
    // Bar 0, written alone, is in the tail (a short series goes there whole).
    for (let i = 1; i < TAIL_MAX_ROWS; i++) await append(i)
    assert.equal(tailRows(path), TAIL_MAX_ROWS, 'bars 0..TAIL_MAX_ROWS - 1 in the tail, none folded')
    await append(TAIL_MAX_ROWS)
    assert.equal(tailRows(path), 1, 'folded at the first commit past the limit, all but the newest row')
    const all = TAIL_MAX_ROWS + 1
    assert.deepEqual(rows(await store.readBars({ symbol, period: '1m', limit: 1e6 })), rows(sliceBars(bars, 0, all)))
    await store.close()
  })

  it('a write that puts the newest row again with the next keeps the row count known: no count of the tail at commit', () => {
    const db = openDb(':memory:')
    migrate(db, MIGRATIONS, 'store')
    const st = { ...chunkStatements(db), ...tailStatements(db) }
    let counts = 0
    const { get } = st.tailSpan
    st.tailSpan.get = (...params) => {
      counts++
      return get.apply(st.tailSpan, params)
    }
    const known = new KnownTails()
    known.begin(0)
    const tail = new TailWriter(st, known, () => assert.fail('nothing goes to the chunks here'))
    const ts = sessionMinutes('SH', tradingDays('SH', 19_720, 1))
    const bars = walkBars(ts, [0.3, 0.5])
    const symbol = '600000.SH'
    assert.ok(tail.tryAppend(symbol, '1m', sliceBars(bars, 0, 1)))
    assert.equal(counts, 1, 'a series first seen: its tail counted once')
    assert.ok(tail.tryAppend(symbol, '1m', sliceBars(bars, 0, 2)))
    assert.ok(tail.tryAppend(symbol, '1m', sliceBars(bars, 1, 3)))
    tail.foldOversized()
    assert.equal(counts, 1, 'no count after it')
    assert.deepEqual(known.get(symbol, '1m'), { first: ts[0], last: ts[2], rows: 3 })
    assert.equal(db.prepare('SELECT count(*) FROM tail').pluck().get(), 3)
    db.close()
  })

  it("another connection's write into the chunks past this writer's tail sends this writer's next correction there too", async () => {
    const { path, store, ts, bars, symbol } = await oneSeries('two-writers.db', 19_800, 2, [0.7, 0.2], 100)
    await store.write({ bars: [{ symbol, period: '1m', bars: sliceBars(bars, 100, 101) }] })
    assert.equal(tailRows(path), 1)
    // A second process writes the next 99 bars at once: the tail is folded, the chunks reach bar 199.
    const other = SqliteMarketStore.open(path)
    await other.write({ bars: [{ symbol, period: '1m', bars: sliceBars(bars, 101, 200) }] })
    await other.close()
    assert.equal(tailRows(path), 0)
    // This store corrects bar 150: it lies in the chunks now, so it must go there, not to the tail.
    const corrected = walkBars(ts.slice(150, 151), [0.9])
    await store.write({ bars: [{ symbol, period: '1m', bars: corrected }] })
    assert.equal(tailRows(path), 0)
    const expected = rows(sliceBars(bars, 0, 200))
    expected[150] = rows(corrected)[0]
    assert.deepEqual(rows(await store.readBars({ symbol, period: '1m', limit: 1e6 })), expected)
    await store.close()
  })

  it('a background fold leaves each series its newest row and keeps every answer and version', async () => {
    const path = join(dir, 'fold.db')
    const store = SqliteMarketStore.open(path)
    const ts = sessionMinutes('HK', tradingDays('HK', 19_600, 2))
    const bars = walkBars(ts, [0.3, 0.8])
    const n = barCount(bars)
    const symbols = ['00001.HK', '00002.HK', '00003.HK']
    await store.write({
      instruments: symbols.map((s) => bareInstrument(s)),
      bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, 0, n - 100) })),
    })
    // The first two grow past the fold threshold, the third stays below it.
    for (let i = n - 100; i < n; i++)
      await store.write({
        bars: symbols
          .filter((_, s) => s < 2 || i < n - 100 + TAIL_FOLD_ROWS - 2)
          .map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, i, i + 1) })),
      })
    const versions = await store.readVersions()
    const before = await Promise.all(symbols.map((s) => answers(store, s, ts)))
    const tailBefore = tailRows(path)
    while (await store.foldAppends()) {
      /* the whole walk */
    }
    assert.equal(tailRows(path), 1 + 1 + (TAIL_FOLD_ROWS - 2))
    assert.ok(tailBefore > tailRows(path))
    assert.deepEqual(await Promise.all(symbols.map((s) => answers(store, s, ts))), before)
    const after = await store.readVersions()
    assert.equal(after.data, versions.data)
    for (const s of symbols) assert.equal(after.of(s), versions.of(s))
    await store.close()
  })

  it("the live commit log folds into the symbols' marks: every version stays, for a reader that caught up before and one opened after", async () => {
    const path = join(dir, 'commit-log.db')
    const store = SqliteMarketStore.open(path)
    const ts = sessionMinutes('SH', tradingDays('SH', 19_650, 3))
    const bars = walkBars(ts, [0.4, 0.6])
    const symbols = ['600001.SH', '600002.SH', '600003.SH']
    await store.write({
      instruments: symbols.map((s) => bareInstrument(s)),
      bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, 0, 100) })),
    })
    const logged = () => {
      const db = new Database(path, { readonly: true })
      try {
        const count = (t: string) => db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number
        return { commits: count('live_commits'), marks: count('live_symbols') }
      } finally {
        db.close()
      }
    }
    // One commit a bar: the first symbol in every one, the second in every third, the third only early on.
    const commits = LIVE_COMMITS_FOLD + 40
    for (let i = 100; i < 100 + commits; i++)
      await store.write({
        bars: symbols
          .filter((_, k) => k === 0 || (k === 1 && i % 3 === 0) || (k === 2 && i < 110))
          .map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, i, i + 1) })),
      })
    assert.deepEqual(logged(), { commits, marks: 0 }, 'each appending commit logged, nothing folded yet')
    const versions = await store.readVersions()
    assert.equal(new Set(symbols.map((s) => versions.of(s))).size, 3, 'each symbol at the commit that last changed it')
    while (await store.foldAppends()) {
      /* the whole walk */
    }
    assert.deepEqual(logged(), { commits: commits - LIVE_COMMITS_FOLD, marks: 3 })
    const after = await store.readVersions()
    assert.equal(after.data, versions.data)
    const fresh = SqliteMarketStore.open(path)
    const opened = await fresh.readVersions()
    for (const s of symbols) assert.deepEqual([after.of(s), opened.of(s)], [versions.of(s), versions.of(s)], s)
    // Past the fold, the next append moves its symbol's version on both readers, and only its.
    await store.write({ bars: [{ symbol: symbols[2], period: '1m', bars: sliceBars(bars, 500, 501) }] })
    const [moved, movedFresh] = [await store.readVersions(), await fresh.readVersions()]
    for (const v of [moved, movedFresh]) {
      assert.notEqual(v.of(symbols[2]), versions.of(symbols[2]))
      assert.deepEqual([v.of(symbols[0]), v.of(symbols[1])], [versions.of(symbols[0]), versions.of(symbols[1])])
    }
    await fresh.close()
    await store.close()
  })

  it('with nothing folding in the background, a commit keeps the live commit log within LIVE_COMMITS_MAX', async () => {
    const { path, store, bars, symbol } = await oneSeries('commit-log-max.db', 19_660, 6, [0.3, 0.5], 1)
    const n = LIVE_COMMITS_MAX + 5
    for (let i = 1; i <= n; i++)
      await store.write({ bars: [{ symbol, period: '1m', bars: sliceBars(bars, i, i + 1) }] })
    const db = new Database(path, { readonly: true })
    const commits = db.prepare('SELECT count(*) FROM live_commits').pluck().get() as number
    const mark = db.prepare('SELECT seq FROM live_symbols WHERE symbol = ?').pluck().get(symbol) as number
    db.close()
    assert.ok(commits > 0 && commits <= LIVE_COMMITS_MAX, `${commits} commits logged`)
    assert.ok(mark > 0, 'the folded commits left the symbol its mark')
    const fresh = SqliteMarketStore.open(path)
    assert.equal((await fresh.readVersions()).of(symbol), (await store.readVersions()).of(symbol))
    await fresh.close()
    await store.close()
  })

  it('a store at rest gives the pages its folds freed back to the file system; one made without the page map keeps them', async () => {
    const ts = sessionMinutes('SH', tradingDays('SH', 19_900, 2))
    const bars = walkBars(ts, [0.1, 0.5])
    const n = barCount(bars)
    const symbols = Array.from({ length: 200 }, (_, i) => `60${String(i).padStart(4, '0')}.SH`)
    const pages = (path: string) => {
      const db = new Database(path)
      try {
        db.pragma('wal_checkpoint(TRUNCATE)')
        const get = (name: string) => db.pragma(name, { simple: true }) as number
        return { free: get('freelist_count'), autoVacuum: get('auto_vacuum') }
      } finally {
        db.close()
      }
    }
    const day = async (path: string) => {
      const store = SqliteMarketStore.open(path)
      await store.write({
        instruments: symbols.map((s) => bareInstrument(s)),
        bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, 0, n - 240) })),
      })
      // A day of minutes appended faster than the fold keeps up (the tail grows to a day's rows), then folded.
      for (let i = n - 240; i < n; i++)
        await store.write({
          bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: sliceBars(bars, i, i + 1) })),
        })
      while (await store.foldAppends()) {
        /* the whole walk, then the free pages given back */
      }
      const answer = await Promise.all(symbols.map((s) => answers(store, s, ts)))
      await store.close()
      return { answer, ...pages(path) }
    }
    const withMap = await day(join(dir, 'rest.db'))
    // A file that existed before the store opened it has no page map (as stores made before it): its free pages stay.
    const old = join(dir, 'rest-old.db')
    new Database(old).pragma('journal_mode = WAL')
    const without = await day(old)
    assert.equal(withMap.autoVacuum, 2)
    assert.equal(without.autoVacuum, 0)
    assert.ok(without.free > FREE_PAGES_KEPT, `the folds freed pages: ${without.free}`)
    assert.ok(withMap.free <= FREE_PAGES_KEPT, `free pages given back: ${withMap.free} left`)
    assert.deepEqual(withMap.answer, without.answer)
  })
})
