/** @module The Store contract: one suite every backend runs (Hono's runTest idea), skips named with a reason. */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sessionMinutes, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { barCount, rowsOfBars, sliceBars, type Bars } from '../domain/bars.js'
import { bareInstrument } from '../domain/instrument.js'
import type { Store } from './store.js'

export function runStoreContract(name: string, open: () => Promise<Store>, skip: Record<string, string> = {}): void {
  describe(`${name}: Store contract`, () => {
    let store: Store
    const daily = walkBars(tradingDays('SH', 16000, 3000), [0.1, 0.4, 0.8, 0.3])
    const minute = walkBars(sessionMinutes('US', tradingDays('US', 19000, 30)), [0.6, 0.2])
    before(async () => {
      store = await open()
      await store.write({
        instruments: [bareInstrument('600000.SH', { name: 'Pudong', type: 'stock', tickSize: 0.01 }), bareInstrument('AAPL.US'), bareInstrument('00700.HK')],
        bars: [
          { symbol: '600000.SH', period: '1d', bars: daily },
          { symbol: 'AAPL.US', period: '1m', bars: minute },
        ],
        exFactors: [{ symbol: '600000.SH', events: [{ timestamp: daily.timestamp[100], exFactor: 1.1 }, { timestamp: daily.timestamp[2000], exFactor: 2 }] }],
      })
    })
    after(() => store.close())
    const test = (title: string, fn: () => Promise<void>) => it(title, { skip: skip[title] ?? false }, fn)
    const same = (a: Bars, b: Bars) => assert.deepEqual(rowsOfBars(a), rowsOfBars(b))

    test('returns the latest N bars in ascending order, across chunks', async () => {
      same(await store.readBars({ symbol: '600000.SH', period: '1d', limit: 1500 }), sliceBars(daily, 1500, 3000))
      same(await store.readBars({ symbol: 'AAPL.US', period: '1m', limit: 5000 }), sliceBars(minute, barCount(minute) - 5000, barCount(minute)))
    })
    test('selects inclusive [fromMs, toMs] and the latest limit inside it', async () => {
      const from = daily.timestamp[10]
      const to = daily.timestamp[20]
      same(await store.readBars({ symbol: '600000.SH', period: '1d', fromMs: from, toMs: to, limit: 100 }), sliceBars(daily, 10, 21))
      same(await store.readBars({ symbol: '600000.SH', period: '1d', fromMs: from, toMs: to, limit: 3 }), sliceBars(daily, 18, 21))
      same(await store.readBars({ symbol: '600000.SH', period: '1d', toMs: daily.timestamp[0] - 1, limit: 3 }), sliceBars(daily, 0, 0))
    })
    test('an unknown symbol or period without bars reads as empty', async () => {
      assert.equal(barCount(await store.readBars({ symbol: '600000.SH', period: '1m', limit: 10 })), 0)
      assert.equal(barCount(await store.readBars({ symbol: '000001.SZ', period: '1d', limit: 10 })), 0)
    })
    test('re-writing the same bars changes nothing; a changed bar replaces the old one', async () => {
      const before = await store.dataVersion()
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 500, 700) }] })
      same(await store.readBars({ symbol: '600000.SH', period: '1d', limit: 3000 }), daily)
      assert.notEqual(await store.dataVersion(), before)
      assert.ok((await store.importCount()) >= 2)
      const changed = walkBars([daily.timestamp[600]], [0.99])
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: changed }] })
      const back = await store.readBars({ symbol: '600000.SH', period: '1d', fromMs: daily.timestamp[600], toMs: daily.timestamp[600], limit: 1 })
      same(back, changed)
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 600, 601) }] })
    })
    test('a failing write leaves nothing behind', async () => {
      const version = await store.dataVersion()
      const bad = walkBars([daily.timestamp[5], daily.timestamp[4]], [0.5]) // not ascending
      await assert.rejects(store.write({ instruments: [bareInstrument('000001.SZ')], bars: [{ symbol: '000001.SZ', period: '1d', bars: walkBars([1e12], [0.1]) }, { symbol: '600000.SH', period: '1d', bars: bad }] }))
      assert.deepEqual(await store.readInstruments(['000001.SZ']), [])
      assert.equal(barCount(await store.readBars({ symbol: '000001.SZ', period: '1d', limit: 10 })), 0)
      assert.equal(await store.dataVersion(), version)
    })
    test('instruments come in the order asked, unknown ones left out, duplicates once', async () => {
      const got = await store.readInstruments(['AAPL.US', '999999.SH', '600000.SH', 'AAPL.US'])
      assert.deepEqual(got.map((i) => i.symbol), ['AAPL.US', '600000.SH'])
      assert.equal(got[1].name, 'Pudong')
      assert.equal(got[0].name, null)
      assert.equal(got[0].region, 'US')
    })
    test('search finds instruments by symbol, code or name, case-insensitively, with % and _ taken literally', async () => {
      assert.deepEqual((await store.searchInstruments('pudong', 10)).map((i) => i.symbol), ['600000.SH'])
      assert.deepEqual((await store.searchInstruments('aap', 10)).map((i) => i.symbol), ['AAPL.US'])
      assert.deepEqual((await store.searchInstruments('0', 1)).map((i) => i.symbol), ['00700.HK'])
      assert.deepEqual(await store.searchInstruments('%', 10), [])
      assert.deepEqual(await store.searchInstruments('_', 10), [])
    })
    test('ex-factors: ascending per known symbol, [] without events, unknown left out, range inclusive', async () => {
      const all = await store.readExFactors(['600000.SH', 'AAPL.US', '000002.SZ'])
      assert.deepEqual([...all.keys()], ['600000.SH', 'AAPL.US'])
      assert.deepEqual(all.get('600000.SH')!.map((e) => e.exFactor), [1.1, 2])
      assert.deepEqual(all.get('AAPL.US'), [])
      const ranged = await store.readExFactors(['600000.SH'], daily.timestamp[2000], daily.timestamp[2000])
      assert.deepEqual(ranged.get('600000.SH'), [{ timestamp: daily.timestamp[2000], exFactor: 2 }])
    })
    test('a writer sees its own writes; readers only after commit', async () => {
      const w = await store.beginWrite()
      await w.putBars('00700.HK', '1d', walkBars(tradingDays('HK', 19000, 5), [0.2]))
      assert.equal(barCount(await w.readBars({ symbol: '00700.HK', period: '1d', limit: 10 })), 5)
      if (store.capabilities.liveImport && name !== 'sqlite :memory:') assert.equal(barCount(await store.readBars({ symbol: '00700.HK', period: '1d', limit: 10 })), 0)
      await w.rollback()
      assert.equal(barCount(await store.readBars({ symbol: '00700.HK', period: '1d', limit: 10 })), 0)
    })
    test('check() passes on a healthy store', async () => {
      await store.check()
    })
    // Listing and universes (issue 10).
    test('listInstruments: all or by exchange and/or type, symbol ascending; name_en and lot_size kept', async () => {
      await store.write({ instruments: [bareInstrument('510300.SH', { type: 'etf', nameEn: 'CSI 300 ETF' }), bareInstrument('09988.HK', { type: 'stock', lotSize: 100 })] })
      assert.deepEqual((await store.listInstruments()).map((i) => i.symbol), ['00700.HK', '09988.HK', '510300.SH', '600000.SH', 'AAPL.US'])
      assert.deepEqual((await store.listInstruments({ exchange: 'SH' })).map((i) => i.symbol), ['510300.SH', '600000.SH'])
      assert.deepEqual((await store.listInstruments({ exchange: 'SH', type: 'etf' })).map((i) => [i.symbol, i.nameEn]), [['510300.SH', 'CSI 300 ETF']])
      assert.deepEqual((await store.searchInstruments('csi 300', 10)).map((i) => i.symbol), ['510300.SH'], 'search finds English names too')
      assert.deepEqual((await store.listInstruments({ type: 'stock' })).map((i) => [i.symbol, i.lotSize]), [['09988.HK', 100], ['600000.SH', null]])
      assert.deepEqual(await store.listInstruments({ exchange: 'BJ' }), [])
    })
    test('universes: putUniverses replaces each listed universe whole, in one write; readUniverses by id', async () => {
      assert.deepEqual(await store.readUniverses(), [])
      const w = await store.beginWrite()
      await w.putUniverses([
        { id: 'B', name: 'Bee', region: 'CN', category: 'equity', description: 'd', symbols: ['600000.SH', '510300.SH'] },
        { id: 'A', name: 'A', region: null, category: null, description: null, symbols: ['AAPL.US'] },
      ])
      await w.commit()
      const w2 = await store.beginWrite()
      await w2.putUniverses([{ id: 'B', name: 'Bee 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] }])
      await w2.commit()
      assert.deepEqual(await store.readUniverses(), [
        { id: 'A', name: 'A', region: null, category: null, description: null, symbols: ['AAPL.US'] },
        { id: 'B', name: 'Bee 2', region: 'CN', category: 'etf', description: null, symbols: ['510300.SH'] },
      ])
      const w3 = await store.beginWrite()
      await w3.putUniverses([{ id: 'C', name: 'C', region: null, category: null, description: null, symbols: [] }])
      await w3.rollback()
      assert.deepEqual((await store.readUniverses()).map((u) => u.id), ['A', 'B'])
    })
    test('API keys: created, found by hash, quotas set, revoked', async () => {
      const k = await store.createKey({ name: 'ci', hash: 'ab'.repeat(32) })
      assert.equal((await store.findKey('ab'.repeat(32)))?.id, k.id)
      assert.equal(k.revokedMs, null)
      assert.ok(await store.setKeyRate(k.id, 120, 10))
      assert.equal((await store.findKey(k.hash))?.ratePerMin, 120)
      assert.ok(await store.revokeKey(k.id))
      assert.ok((await store.findKey(k.hash))?.revokedMs)
      assert.equal(await store.revokeKey(99_999), false)
      assert.deepEqual((await store.listKeys()).map((x) => x.name), ['ci'])
    })
  })
}
