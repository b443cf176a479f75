/**
 * @module The store contract: one suite every backend runs (Hono's runTest idea). A test that needs
 * a capability the backend does not declare (or that the caller skips, with a reason) is skipped
 * per test, so the runner's "skipped" tally counts it; never by a backend's name.
 */
import assert from 'node:assert/strict'
import { after, before, describe, type TestContext } from 'node:test'
import {
  barCount,
  mergeBars,
  rowsOfBars,
  sliceBars,
  withoutRange,
  type BarRow,
  type Bars,
} from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { StoredPeriod } from '../../src/domain/period.js'
import type { LiveQuote, LiveWrites, MarketStore, StoreCapabilities } from '../../src/store/market-store.js'
import { sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { itRequiring } from '../helpers/requirements.js'
import { financialsContract } from './financials-contract.js'

export type Capability = keyof StoreCapabilities

export interface ContractOptions {
  readonly name: string
  /**
   * Opens the stores under test: the first call gets empty ones; later calls (the tests of several
   * instances, gated by liveImport) open the SAME stores again, as another mdq instance would.
   */
  readonly open: () => Promise<{ market: MarketStore; keys: KeyStore }>
  /** Skip the tests that need a capability, with the reason (also when the store declares it). */
  readonly skip?: Partial<Record<Capability, string>>
  /** The backend's server is not installed here: every test is skipped with this reason, or fails with it under CI=true. */
  readonly unavailable?: string | false
}

const ALL = Number.MAX_SAFE_INTEGER

/**
 * Retries `check` until it passes: what another instance wrote may reach this one up to 1 s late
 * (the MarketStore/KeyStore bound: a remote backend polls), at once on SQLite. The deadline is generous.
 */
async function eventually(check: () => Promise<void>, deadlineMs = 15_000): Promise<void> {
  const t0 = Date.now()
  for (;;) {
    try {
      return await check()
    } catch (err) {
      if (Date.now() - t0 > deadlineMs) throw err
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

export function runStoreContract({ name, open, skip = {}, unavailable = false }: ContractOptions): void {
  describe(`${name}: store contract`, () => {
    let store: MarketStore
    let keys: KeyStore
    const daily = walkBars(tradingDays('SH', 16000, 3000), [0.1, 0.4, 0.8, 0.3])
    const minute = walkBars(sessionMinutes('US', tradingDays('US', 19000, 30)), [0.6, 0.2])
    before(async () => {
      if (unavailable) return
      ;({ market: store, keys } = await open())
      await store.write({
        instruments: [
          bareInstrument('600000.SH', { name: 'Pudong', type: 'stock', tickSize: 0.01 }),
          bareInstrument('AAPL.US'),
          bareInstrument('00700.HK'),
        ],
        bars: [
          { symbol: '600000.SH', period: '1d', bars: daily },
          { symbol: 'AAPL.US', period: '1m', bars: minute },
        ],
        exFactors: [
          {
            symbol: '600000.SH',
            events: [
              { timestamp: daily.timestamp[100], exFactor: 1.1 },
              { timestamp: daily.timestamp[2000], exFactor: 2 },
            ],
          },
        ],
      })
    })
    after(() => Promise.all([store?.close(), keys?.close()]))

    /** Runs `fn` unless the store lacks (or the caller skips) one of `needs`: then the test reports itself skipped. */
    const test = (title: string, needs: readonly Capability[], fn: () => Promise<void>) =>
      itRequiring(unavailable, title, async (t: TestContext) => {
        for (const c of needs) {
          const reason = skip[c] ?? (store.capabilities[c] ? undefined : `${name} does not declare ${c}`)
          if (reason !== undefined) return t.skip(`needs ${c}: ${reason}`)
        }
        await fn()
      })
    const same = (a: Bars, b: Bars) => assert.deepEqual(rowsOfBars(a), rowsOfBars(b))
    const all = (symbol: string, period: '1m' | '1d') => store.readBars({ symbol, period, limit: ALL })

    test('returns the latest N bars in ascending order, across chunks', [], async () => {
      same(await store.readBars({ symbol: '600000.SH', period: '1d', limit: 1500 }), sliceBars(daily, 1500, 3000))
      same(
        await store.readBars({ symbol: 'AAPL.US', period: '1m', limit: 5000 }),
        sliceBars(minute, barCount(minute) - 5000, barCount(minute)),
      )
    })
    test('selects inclusive [fromMs, toMs] and the latest limit inside it', [], async () => {
      const from = daily.timestamp[10]
      const to = daily.timestamp[20]
      same(
        await store.readBars({ symbol: '600000.SH', period: '1d', fromMs: from, toMs: to, limit: 100 }),
        sliceBars(daily, 10, 21),
      )
      same(
        await store.readBars({ symbol: '600000.SH', period: '1d', fromMs: from, toMs: to, limit: 3 }),
        sliceBars(daily, 18, 21),
      )
      same(
        await store.readBars({ symbol: '600000.SH', period: '1d', toMs: daily.timestamp[0] - 1, limit: 3 }),
        sliceBars(daily, 0, 0),
      )
    })
    test('an unknown symbol or period without bars reads as empty', [], async () => {
      assert.equal(barCount(await store.readBars({ symbol: '600000.SH', period: '1m', limit: 10 })), 0)
      assert.equal(barCount(await store.readBars({ symbol: '000001.SZ', period: '1d', limit: 10 })), 0)
    })
    test('re-writing the same bars changes nothing; a changed bar replaces the old one', [], async () => {
      const before = await store.dataVersion()
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 500, 700) }] })
      same(await all('600000.SH', '1d'), daily)
      assert.notEqual(await store.dataVersion(), before)
      assert.ok((await store.importCount()) >= 2)
      const changed = walkBars([daily.timestamp[600]], [0.99])
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: changed }] })
      const back = await store.readBars({
        symbol: '600000.SH',
        period: '1d',
        fromMs: daily.timestamp[600],
        toMs: daily.timestamp[600],
        limit: 1,
      })
      same(back, changed)
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 600, 601) }] })
    })
    test('a failing write leaves nothing behind', [], async () => {
      const version = await store.dataVersion()
      const bad = walkBars([daily.timestamp[5], daily.timestamp[4]], [0.5]) // not ascending
      await assert.rejects(
        store.write({
          instruments: [bareInstrument('000001.SZ')],
          bars: [
            { symbol: '000001.SZ', period: '1d', bars: walkBars([1e12], [0.1]) },
            { symbol: '600000.SH', period: '1d', bars: bad },
          ],
        }),
      )
      assert.deepEqual(await store.readInstruments(['000001.SZ']), [])
      assert.equal(barCount(await store.readBars({ symbol: '000001.SZ', period: '1d', limit: 10 })), 0)
      assert.equal(await store.dataVersion(), version)
    })
    test('instruments come in the order asked, unknown ones left out, duplicates once', [], async () => {
      const got = await store.readInstruments(['AAPL.US', '999999.SH', '600000.SH', 'AAPL.US'])
      assert.deepEqual(
        got.map((i) => i.symbol),
        ['AAPL.US', '600000.SH'],
      )
      assert.equal(got[1].name, 'Pudong')
      assert.equal(got[0].name, null)
      assert.equal(got[0].region, 'US')
    })
    test(
      'search finds instruments by symbol, code or name, case-insensitively, with % and _ taken literally',
      [],
      async () => {
        assert.deepEqual(
          (await store.searchInstruments('pudong', 10)).map((i) => i.symbol),
          ['600000.SH'],
        )
        assert.deepEqual(
          (await store.searchInstruments('aap', 10)).map((i) => i.symbol),
          ['AAPL.US'],
        )
        assert.deepEqual(
          (await store.searchInstruments('0', 1)).map((i) => i.symbol),
          ['00700.HK'],
        )
        assert.deepEqual(await store.searchInstruments('%', 10), [])
        assert.deepEqual(await store.searchInstruments('_', 10), [])
      },
    )
    test(
      'ex-factors: ascending per known symbol, [] without events, unknown left out, range inclusive',
      [],
      async () => {
        const all = await store.readExFactors(['600000.SH', 'AAPL.US', '000002.SZ'])
        assert.deepEqual([...all.keys()], ['600000.SH', 'AAPL.US'])
        assert.deepEqual(
          all.get('600000.SH')!.map((e) => e.exFactor),
          [1.1, 2],
        )
        assert.deepEqual(all.get('AAPL.US'), [])
        const ranged = await store.readExFactors(['600000.SH'], daily.timestamp[2000], daily.timestamp[2000])
        assert.deepEqual(ranged.get('600000.SH'), [{ timestamp: daily.timestamp[2000], exFactor: 2 }])
      },
    )

    // Corrections. Each test works on a symbol of its own so the others' data stays as written above.
    const hist = walkBars(tradingDays('SZ', 15000, 2500), [0.3, 0.7]) // about 3.5 chunks of 1d
    const mins = walkBars(sessionMinutes('SZ', tradingDays('SZ', 19500, 20)), [0.2, 0.5]) // 4800 1m bars over 4 weeks
    test(
      'deleteBars removes exactly the inclusive range, inside a chunk, across chunks and open-ended',
      [],
      async () => {
        await store.write({
          instruments: [bareInstrument('000002.SZ')],
          bars: [
            { symbol: '000002.SZ', period: '1d', bars: hist },
            { symbol: '000002.SZ', period: '1m', bars: mins },
          ],
        })
        const ts = hist.timestamp
        await store.write({ deleteBars: [{ symbol: '000002.SZ', period: '1d', fromMs: ts[10], toMs: ts[12] }] })
        let expected = withoutRange(hist, ts[10], ts[12])
        same(await all('000002.SZ', '1d'), expected)
        await store.write({ deleteBars: [{ symbol: '000002.SZ', period: '1d', fromMs: ts[300], toMs: ts[1900] }] })
        expected = withoutRange(expected, ts[300], ts[1900])
        same(await all('000002.SZ', '1d'), expected)
        await store.write({
          deleteBars: [
            { symbol: '000002.SZ', period: '1d', fromMs: ts[2400] },
            { symbol: '000002.SZ', period: '1d', toMs: ts[5] },
          ],
        })
        expected = withoutRange(withoutRange(expected, ts[2400], ts[2499]), ts[0], ts[5])
        same(await all('000002.SZ', '1d'), expected)
        same(await store.readBars({ symbol: '000002.SZ', period: '1d', limit: 3 }), sliceBars(hist, 2397, 2400))
        same(await all('000002.SZ', '1m'), mins) // the other period is untouched
        await store.write({ deleteBars: [{ symbol: '000002.SZ', period: '1m' }] })
        assert.equal(barCount(await all('000002.SZ', '1m')), 0)
        assert.equal((await store.readInstruments(['000002.SZ'])).length, 1) // bars only
      },
    )
    test(
      'deleteExFactors removes the inclusive range of one symbol; deleteInstruments the metadata rows',
      [],
      async () => {
        const ts = hist.timestamp
        await store.write({
          instruments: [bareInstrument('000004.SZ'), bareInstrument('000005.SZ')],
          exFactors: [
            { symbol: '000004.SZ', events: [10, 20, 30, 40].map((i) => ({ timestamp: ts[i], exFactor: 1 + i / 100 })) },
            { symbol: '000005.SZ', events: [{ timestamp: ts[20], exFactor: 1.5 }] },
          ],
        })
        await store.write({ deleteExFactors: [{ symbol: '000004.SZ', fromMs: ts[20], toMs: ts[30] }] })
        assert.deepEqual(
          (await store.readExFactors(['000004.SZ'])).get('000004.SZ')!.map((e) => e.timestamp),
          [ts[10], ts[40]],
        )
        assert.deepEqual((await store.readExFactors(['000005.SZ'])).get('000005.SZ'), [
          { timestamp: ts[20], exFactor: 1.5 },
        ])
        await store.write({ deleteExFactors: [{ symbol: '000004.SZ' }], deleteInstruments: ['000004.SZ', '000005.SZ'] })
        assert.deepEqual(await store.readInstruments(['000004.SZ', '000005.SZ']), [])
        assert.deepEqual(await store.searchInstruments('000004', 10), [])
      },
    )
    test(
      'a delete and a put of the same range in one batch (or one writer) leave exactly the put bars',
      [],
      async () => {
        await store.write({
          instruments: [bareInstrument('000006.SZ')],
          bars: [{ symbol: '000006.SZ', period: '1d', bars: hist }],
        })
        const ts = hist.timestamp
        // The corrected file has fewer bars in [ts[100], ts[1500]] (every 7th day) and new prices.
        const days = Array.from(ts.subarray(100, 1501)).filter((_, i) => i % 7 === 0)
        const fix = walkBars(days, [0.9])
        await store.write({
          deleteBars: [{ symbol: '000006.SZ', period: '1d', fromMs: ts[100], toMs: ts[1500] }],
          bars: [{ symbol: '000006.SZ', period: '1d', bars: fix }],
        })
        const expected = withoutRange(hist, ts[100], ts[1500])
        same(
          await store.readBars({ symbol: '000006.SZ', period: '1d', fromMs: ts[100], toMs: ts[1500], limit: ALL }),
          fix,
        )
        assert.equal(barCount(await all('000006.SZ', '1d')), barCount(expected) + barCount(fix))
        same(
          await store.readBars({ symbol: '000006.SZ', period: '1d', toMs: ts[99], limit: ALL }),
          sliceBars(hist, 0, 100),
        )
        const w = await store.beginWrite()
        await w.deleteBars({ symbol: '000006.SZ', period: '1d', fromMs: ts[2000], toMs: ts[2100] })
        await w.putBars('000006.SZ', '1d', walkBars([ts[2050]], [0.4]))
        await w.commit()
        same(
          await store.readBars({ symbol: '000006.SZ', period: '1d', fromMs: ts[2000], toMs: ts[2100], limit: ALL }),
          walkBars([ts[2050]], [0.4]),
        )
      },
    )
    test('deletes are all or nothing: a batch that fails deletes nothing', [], async () => {
      await store.write({
        instruments: [bareInstrument('000007.SZ')],
        bars: [{ symbol: '000007.SZ', period: '1d', bars: hist }],
        exFactors: [{ symbol: '000007.SZ', events: [{ timestamp: hist.timestamp[50], exFactor: 1.2 }] }],
      })
      const version = await store.dataVersion()
      const bad = walkBars([hist.timestamp[9], hist.timestamp[8]], [0.5]) // not ascending
      await assert.rejects(
        store.write({
          deleteBars: [{ symbol: '000007.SZ', period: '1d' }],
          deleteExFactors: [{ symbol: '000007.SZ' }],
          deleteInstruments: ['000007.SZ'],
          bars: [{ symbol: '000007.SZ', period: '1d', bars: bad }],
        }),
      )
      same(await all('000007.SZ', '1d'), hist)
      assert.equal((await store.readExFactors(['000007.SZ'])).get('000007.SZ')!.length, 1)
      assert.equal((await store.readInstruments(['000007.SZ'])).length, 1)
      assert.equal(await store.dataVersion(), version)
    })
    test('readers see nothing of a write before commit, and all of it after', ['liveImport'], async () => {
      await store.write({
        instruments: [bareInstrument('000008.SZ')],
        bars: [{ symbol: '000008.SZ', period: '1d', bars: hist }],
      })
      const version = await store.dataVersion()
      const hk = walkBars(tradingDays('HK', 19000, 5), [0.2])
      const ts = hist.timestamp
      const w = await store.beginWrite()
      await w.putInstruments([bareInstrument('00005.HK')])
      await w.putBars('00005.HK', '1d', hk)
      await w.putExFactors('00005.HK', [{ timestamp: hk.timestamp[2], exFactor: 1.25 }])
      await w.deleteBars({ symbol: '000008.SZ', period: '1d', fromMs: ts[0], toMs: ts[999] })
      assert.deepEqual(await store.readInstruments(['00005.HK']), [])
      assert.equal(barCount(await all('00005.HK', '1d')), 0)
      same(await all('000008.SZ', '1d'), hist)
      assert.equal(await store.dataVersion(), version)
      await w.commit()
      assert.equal((await store.readInstruments(['00005.HK'])).length, 1)
      same(await all('00005.HK', '1d'), hk)
      assert.deepEqual((await store.readExFactors(['00005.HK'])).get('00005.HK'), [
        { timestamp: hk.timestamp[2], exFactor: 1.25 },
      ])
      same(await all('000008.SZ', '1d'), sliceBars(hist, 1000, 2500))
      assert.notEqual(await store.dataVersion(), version)
    })
    test('a rolled-back writer leaves nothing', [], async () => {
      const version = await store.dataVersion()
      const w = await store.beginWrite()
      await w.putBars('00700.HK', '1d', walkBars(tradingDays('HK', 19000, 5), [0.2]))
      await w.deleteBars({ symbol: '600000.SH', period: '1d' })
      await w.rollback()
      assert.equal(barCount(await store.readBars({ symbol: '00700.HK', period: '1d', limit: 10 })), 0)
      same(await all('600000.SH', '1d'), daily)
      assert.equal(await store.dataVersion(), version)
    })
    test(
      'another instance on the same store sees a commit (at once, or within the 1 s polling bound), with a new data version',
      ['liveImport'],
      async () => {
        const other = await open()
        try {
          const seen = await other.market.dataVersion()
          assert.equal(seen, await store.dataVersion())
          await store.write({
            bars: [{ symbol: '00700.HK', period: '1d', bars: walkBars(tradingDays('HK', 19100, 3), [0.6]) }],
          })
          await eventually(async () => {
            assert.equal(
              barCount(
                await other.market.readBars({
                  symbol: '00700.HK',
                  period: '1d',
                  fromMs: tradingDays('HK', 19100, 1)[0],
                  limit: 10,
                }),
              ),
              3,
            )
            assert.notEqual(await other.market.dataVersion(), seen)
          })
        } finally {
          await Promise.all([other.market.close(), other.keys.close()])
        }
      },
    )
    test(
      "withSnapshot gives its read's result or error, nests, and leaves the store as it was (reads and writes go on)",
      [],
      async () => {
        const n = barCount(await all('600000.SH', '1d'))
        assert.equal(
          await store.withSnapshot(() => store.withSnapshot(async () => barCount(await all('600000.SH', '1d')))),
          n,
        )
        await assert.rejects(
          store.withSnapshot(async () => {
            await all('600000.SH', '1d')
            throw new Error('a failed read')
          }),
          /a failed read/,
        )
        assert.equal(barCount(await all('600000.SH', '1d')), n)
        await store.write({ instruments: [bareInstrument('601988.SH')] })
        assert.deepEqual(
          (await store.readInstruments(['601988.SH'])).map((i) => i.symbol),
          ['601988.SH'],
        )
      },
    )
    test(
      'withSnapshot: its reads see one committed state while another instance commits; after it, the commit shows',
      ['snapshotReads', 'liveImport'],
      async () => {
        const other = await open()
        const days = tradingDays('HK', 19300, 2)
        const read = async () => barCount(await store.readBars({ symbol: '00700.HK', period: '1d', limit: ALL }))
        try {
          const seen = await store.withSnapshot(async () => {
            const version = await store.dataVersion()
            const count = await read()
            await other.market.write({ bars: [{ symbol: '00700.HK', period: '1d', bars: walkBars(days, [0.6]) }] })
            assert.equal(await store.dataVersion(), version, 'the same data version inside')
            assert.equal(await read(), count, 'the same bars inside')
            return { version, count }
          })
          assert.notEqual(await store.dataVersion(), seen.version)
          assert.equal(await read(), seen.count + days.length)
        } finally {
          await Promise.all([other.market.close(), other.keys.close()])
        }
      },
    )
    // Listing and universes.
    test(
      'listInstruments: all or by exchange and/or type, symbol ascending; name_en and lot_size kept',
      [],
      async () => {
        await store.write({
          instruments: [
            bareInstrument('510300.SH', { type: 'etf', nameEn: 'CSI 300 ETF' }),
            bareInstrument('09988.HK', { type: 'stock', lotSize: 100 }),
          ],
        })
        // Earlier tests add instruments of their own: check order and membership, not the whole list.
        const all = (await store.listInstruments()).map((i) => i.symbol)
        assert.deepEqual(all, [...all].sort())
        for (const s of ['00700.HK', '09988.HK', '510300.SH', '600000.SH', 'AAPL.US']) assert.ok(all.includes(s), s)
        const sh = (await store.listInstruments({ exchange: 'SH' })).map((i) => i.symbol)
        assert.deepEqual(
          sh,
          all.filter((s) => s.endsWith('.SH')),
        )
        assert.deepEqual(
          (await store.listInstruments({ exchange: 'SH', type: 'etf' })).map((i) => [i.symbol, i.nameEn]),
          [['510300.SH', 'CSI 300 ETF']],
        )
        assert.deepEqual(
          (await store.searchInstruments('csi 300', 10)).map((i) => i.symbol),
          ['510300.SH'],
          'search finds English names too',
        )
        assert.deepEqual(
          (await store.listInstruments({ type: 'stock' })).map((i) => [i.symbol, i.lotSize]),
          [
            ['09988.HK', 100],
            ['600000.SH', null],
          ],
        )
        assert.deepEqual(await store.listInstruments({ exchange: 'BJ' }), [])
      },
    )
    test(
      'universes: putUniverses replaces each listed universe whole, in one write; readUniverses by id',
      [],
      async () => {
        assert.deepEqual(await store.readUniverses(), [])
        const w = await store.beginWrite()
        await w.putUniverses([
          {
            id: 'B',
            name: 'Bee',
            region: 'CN',
            category: 'equity',
            description: 'd',
            symbols: ['600000.SH', '510300.SH'],
          },
          { id: 'A', name: 'A', region: null, category: null, description: null, symbols: ['AAPL.US'] },
        ])
        await w.commit()
        const w2 = await store.beginWrite()
        await w2.putUniverses([
          { id: 'B', name: 'Bee 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] },
        ])
        await w2.commit()
        assert.deepEqual(await store.readUniverses(), [
          { id: 'A', name: 'A', region: null, category: null, description: null, symbols: ['AAPL.US'] },
          { id: 'B', name: 'Bee 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] },
        ])
        const w3 = await store.beginWrite()
        await w3.putUniverses([{ id: 'C', name: 'C', region: null, category: null, description: null, symbols: [] }])
        await w3.rollback()
        assert.deepEqual(
          (await store.readUniverses()).map((u) => u.id),
          ['A', 'B'],
        )
      },
    )
    financialsContract(test, () => store)
    test(
      'live appends (a few bars at a time past the last, the newest re-written as it forms) read as one series with the rest',
      [],
      async () => {
        const ts = sessionMinutes('SH', tradingDays('SH', 19_300, 3))
        const bars = walkBars(ts, [0.2, 0.6, 0.9])
        const n = barCount(bars)
        const history = n - 60
        const days = walkBars(tradingDays('SH', 19_000, 303), [0.3, 0.5])
        await store.write({
          instruments: [bareInstrument('600010.SH')],
          bars: [
            { symbol: '600010.SH', period: '1m', bars: sliceBars(bars, 0, history) },
            { symbol: '600010.SH', period: '1d', bars: sliceBars(days, 0, 300) },
          ],
        })
        // Each minute first as it forms (another close), then as it closes; a daily bar a day.
        for (let i = history; i < n; i++) {
          await store.write({ bars: [{ symbol: '600010.SH', period: '1m', bars: walkBars([ts[i]], [0.5]) }] })
          await store.write({ bars: [{ symbol: '600010.SH', period: '1m', bars: sliceBars(bars, i, i + 1) }] })
        }
        for (let d = 300; d < 303; d++)
          await store.write({ bars: [{ symbol: '600010.SH', period: '1d', bars: sliceBars(days, d, d + 1) }] })
        same(await all('600010.SH', '1m'), bars)
        same(await all('600010.SH', '1d'), days)
        const upTo = (to: number) => ts.filter((t) => t <= to).length
        for (const [from, to, limit] of [
          [ts[history - 5], ts[history + 5], 100],
          [ts[history + 10], ts[n - 1], 7],
          [ts[0], ts[history + 2], 4],
          [ts[n - 3], ts[n - 1] + 1, 2],
        ])
          same(
            await store.readBars({ symbol: '600010.SH', period: '1m', fromMs: from, toMs: to, limit }),
            sliceBars(bars, Math.max(ts.indexOf(from), upTo(to) - limit), upTo(to)),
          )
        // A later write over appended and stored bars wins where they meet; a delete takes appended bars too.
        const redo = walkBars(ts.slice(n - 100, n - 30), [0.77])
        await store.write({ bars: [{ symbol: '600010.SH', period: '1m', bars: redo }] })
        same(
          await store.readBars({ symbol: '600010.SH', period: '1m', fromMs: ts[n - 120], limit: ALL }),
          mergeBars(sliceBars(bars, n - 120, n), redo),
        )
        await store.write({ deleteBars: [{ symbol: '600010.SH', period: '1m', fromMs: ts[n - 20] }] })
        same(await all('600010.SH', '1m'), sliceBars(mergeBars(bars, redo), 0, n - 20))
      },
    )
    test('live quotes and depth: the latest per symbol, written with their batch or not at all', [], async () => {
      const quote = (ts: number, last: number) => ({
        symbol: '600011.SH',
        state: {
          last: {
            symbol: '600011.SH',
            timestamp: ts,
            lastPrice: last,
            open: 10,
            high: 10.5,
            low: 9.5,
            prevClose: 9.9,
            volume: 100,
            amount: 1000.5,
          },
        },
        ext: { name: '浦发银行', turnover_rate: 0.0123 },
      })
      const depth = (ts: number) => ({
        symbol: '600011.SH',
        timestamp: ts,
        bidPrices: [10.01, 10],
        bidVolumes: [5, 7],
        askPrices: [10.02, 10.03],
        askVolumes: [1, 2],
      })
      assert.equal((await store.readLiveQuotes(['600011.SH'])).size, 0)
      assert.equal((await store.readDepths(['600011.SH'])).get('600011.SH'), undefined)
      const w = await store.beginWrite()
      await w.putLiveQuotes([quote(1_700_000_000_000, 10.1)])
      await w.putDepth([depth(1_700_000_000_000)])
      await w.commit()
      const w2 = await store.beginWrite()
      await w2.putLiveQuotes([quote(1_700_000_003_000, 10.2)])
      await w2.putDepth([depth(1_700_000_003_000)])
      await w2.commit()
      const w3 = await store.beginWrite()
      await w3.putLiveQuotes([quote(1_700_000_006_000, 10.3)])
      await w3.putDepth([depth(1_700_000_006_000)])
      await w3.rollback()
      await eventually(async () =>
        assert.deepEqual(
          (await store.readLiveQuotes(['600011.SH', '600012.SH'])).get('600011.SH'),
          quote(1_700_000_003_000, 10.2),
        ),
      )
      assert.deepEqual((await store.readDepths(['600011.SH'])).get('600011.SH'), depth(1_700_000_003_000))
    })
    test(
      "putLive: a push's minute bars, day bars and latest quotes, stored as putBars and putLiveQuotes store them",
      [],
      async () => {
        const ts = sessionMinutes('SH', tradingDays('SH', 19_600, 2))
        const bars = walkBars(ts, [0.35, 0.65])
        const row = (i: number, scale = 1): BarRow => {
          const r = rowsOfBars(sliceBars(bars, i, i + 1))[0]
          return { ...r, high: r.high * scale, close: r.close * scale, volume: r.volume * scale }
        }
        const day = (t: number, close: number): BarRow => ({
          timestamp: t,
          open: 10,
          high: 11,
          low: 9,
          close,
          volume: 1000,
          amount: 10_050,
          prevClose: NaN,
        })
        const quote = (symbol: string, t: number): LiveQuote => ({
          symbol,
          state: {
            last: {
              symbol,
              timestamp: t,
              lastPrice: 10,
              open: 10,
              high: 11,
              low: 9,
              prevClose: 9.9,
              volume: 1000,
              amount: 10_050,
            },
          },
        })
        const [held, fresh] = ['600015.SH', '600016.SH']
        await store.write({
          instruments: [bareInstrument(held), bareInstrument(fresh)],
          bars: [{ symbol: held, period: '1m', bars: sliceBars(bars, 0, 300) }],
        })
        const dayMs = daily.timestamp[2999]
        const put = async (writes: LiveWrites) => {
          const w = await store.beginWrite()
          await w.putLive(writes)
          await w.commit()
        }
        // The forming minute, then it again with the next (the first closed), a symbol's first bars,
        // the day's bar replaced; then a correction of a minute among the stored ones.
        await put({
          minutes: new Map([[held, new Map([[ts[300], row(300)]])]]),
          days: new Map([[held, day(dayMs, 10.5)]]),
          latest: new Map([[held, quote(held, ts[300] + 5000)]]),
        })
        await put({
          minutes: new Map([
            [
              held,
              new Map([
                [ts[301], row(301)],
                [ts[300], row(300, 1.01)],
              ]),
            ],
            [fresh, new Map([[ts[10], row(10)]])],
          ]),
          days: new Map([
            [held, day(dayMs, 10.7)],
            [fresh, day(dayMs, 20)],
          ]),
          latest: new Map([
            [held, quote(held, ts[301] + 5000)],
            [fresh, quote(fresh, ts[10] + 5000)],
          ]),
        })
        await put({
          minutes: new Map([[held, new Map([[ts[100], row(100, 1.02)]])]]),
          days: new Map(),
          latest: new Map(),
        })
        const expected = [...rowsOfBars(sliceBars(bars, 0, 300)), row(300, 1.01), row(301)]
        expected[100] = row(100, 1.02)
        const read = async (symbol: string, period: StoredPeriod) =>
          rowsOfBars(await store.readBars({ symbol, period, limit: Number.MAX_SAFE_INTEGER }))
        assert.deepEqual(await read(held, '1m'), expected)
        assert.deepEqual(await read(fresh, '1m'), [row(10)])
        assert.deepEqual(await read(held, '1d'), [day(dayMs, 10.7)])
        assert.deepEqual(await read(fresh, '1d'), [day(dayMs, 20)])
        await eventually(async () =>
          assert.deepEqual(
            await store.readLiveQuotes([held, fresh]),
            new Map([
              [held, quote(held, ts[301] + 5000)],
              [fresh, quote(fresh, ts[10] + 5000)],
            ]),
          ),
        )
      },
    )
    test(
      "versions: a live append moves the data version and its symbol's (another symbol's only without per-symbol versions)",
      [],
      async () => {
        await store.write({
          instruments: [bareInstrument('600013.SH'), bareInstrument('600014.SH')],
          bars: ['600013.SH', '600014.SH'].map((symbol) => ({
            symbol,
            period: '1d' as const,
            bars: sliceBars(daily, 0, 100),
          })),
        })
        const before = await store.readVersions()
        assert.equal(before.data, await store.dataVersion())
        await store.write({ bars: [{ symbol: '600013.SH', period: '1d', bars: sliceBars(daily, 100, 101) }] })
        const after = await store.readVersions()
        assert.notEqual(after.data, before.data)
        assert.notEqual(after.of('600013.SH'), before.of('600013.SH'))
        if (store.capabilities.symbolVersions) assert.equal(after.of('600014.SH'), before.of('600014.SH'))
        else assert.equal(after.of('600014.SH'), after.data)
        // Anything but an append (here an instrument) moves every symbol's.
        await store.write({ instruments: [bareInstrument('600015.SH')] })
        const third = await store.readVersions()
        assert.notEqual(third.of('600014.SH'), after.of('600014.SH'))
      },
    )
    test('check() passes on a healthy store', [], async () => {
      await store.check()
      await keys.check()
    })
    test('API keys: created, found by hash, quotas set, revoked; every change moves keysVersion', [], async () => {
      const v0 = await keys.keysVersion()
      const k = await keys.createKey({ name: 'ci', hash: 'ab'.repeat(32) })
      const v1 = await keys.keysVersion()
      assert.notEqual(v1, v0)
      assert.equal((await keys.findKey('ab'.repeat(32)))?.id, k.id)
      assert.equal(k.revokedMs, null)
      assert.ok(await keys.setKeyRate(k.id, 120, 10))
      const v2 = await keys.keysVersion()
      assert.notEqual(v2, v1)
      assert.equal((await keys.findKey(k.hash))?.ratePerMin, 120)
      assert.ok(await keys.revokeKey(k.id))
      assert.notEqual(await keys.keysVersion(), v2)
      const revoked = (await keys.findKey(k.hash))?.revokedMs
      assert.ok(revoked)
      assert.ok(await keys.revokeKey(k.id)) // again: still true, first revocation time kept
      assert.equal((await keys.findKey(k.hash))?.revokedMs, revoked)
      assert.equal(await keys.revokeKey(99_999), false)
      assert.equal(await keys.setKeyRate(99_999, 1, 1), false)
      assert.equal(await keys.findKey('cd'.repeat(32)), undefined)
      assert.deepEqual(
        (await keys.listKeys()).map((x) => x.name),
        ['ci'],
      )
    })
    test('API keys carry a scope: read unless given, kept through revocation and quota changes', [], async () => {
      const reader = await keys.createKey({ name: 'reader', hash: '1a'.repeat(32) })
      const pusher = await keys.createKey({ name: 'pusher', hash: '1b'.repeat(32), scope: 'ingest' })
      const boss = await keys.createKey({ name: 'boss', hash: '1c'.repeat(32), scope: 'admin' })
      assert.deepEqual([reader.scope, pusher.scope, boss.scope], ['read', 'ingest', 'admin'])
      assert.equal((await keys.findKey('1b'.repeat(32)))?.scope, 'ingest')
      assert.ok(await keys.setKeyRate(pusher.id, 60, 5))
      assert.ok(await keys.revokeKey(boss.id))
      const listed = new Map((await keys.listKeys()).map((k) => [k.name, k.scope]))
      assert.deepEqual(
        ['reader', 'pusher', 'boss'].map((n) => listed.get(n)),
        ['read', 'ingest', 'admin'],
      )
    })
    test(
      'keys created at the same time by two instances get distinct ids, each finding its own key',
      ['liveImport'],
      async () => {
        const other = await open()
        try {
          const hash = (i: number) => i.toString(16).padStart(64, '0')
          const made = await Promise.all(
            Array.from({ length: 20 }, (_, i) =>
              (i % 2 ? other.keys : keys).createKey({ name: `k${i}`, hash: hash(i + 1) }),
            ),
          )
          assert.equal(new Set(made.map((k) => k.id)).size, 20)
          assert.ok(made.every((k) => Number.isSafeInteger(k.id) && k.id > 0))
          for (const [i, k] of made.entries())
            await eventually(async () => assert.equal((await keys.findKey(hash(i + 1)))?.id, k.id))
        } finally {
          await Promise.all([other.market.close(), other.keys.close()])
        }
      },
    )
    test(
      'a key change by another instance moves keysVersion here (at once, or within the 1 s polling bound) and is found',
      ['liveImport'],
      async () => {
        const other = await open()
        try {
          const seen = await keys.keysVersion()
          const k = await other.keys.createKey({ name: 'elsewhere', hash: 'ef'.repeat(32) })
          await eventually(async () => assert.notEqual(await keys.keysVersion(), seen))
          assert.equal((await keys.findKey('ef'.repeat(32)))?.id, k.id)
          const before = await keys.keysVersion()
          assert.ok(await other.keys.revokeKey(k.id))
          await eventually(async () => assert.notEqual(await keys.keysVersion(), before))
          assert.ok((await keys.findKey('ef'.repeat(32)))?.revokedMs)
        } finally {
          await Promise.all([other.market.close(), other.keys.close()])
        }
      },
    )
  })
}
