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
    test('a writer sees its own writes; readers see them only after commit, never after rollback', async () => {
      // ':memory:' has one connection, so its readers share the open transaction.
      const isolated = store.capabilities.liveImport && name !== 'sqlite :memory:'
      const hk = walkBars(tradingDays('HK', 19000, 5), [0.2])
      const read = () => store.readBars({ symbol: '00700.HK', period: '1d', limit: 10 })
      const w = await store.beginWrite()
      await w.putBars('00700.HK', '1d', hk)
      same(await w.readBars({ symbol: '00700.HK', period: '1d', limit: 10 }), hk)
      if (isolated) assert.equal(barCount(await read()), 0)
      await w.rollback()
      assert.equal(barCount(await read()), 0)
      const version = await store.dataVersion()
      const w2 = await store.beginWrite()
      await w2.putBars('00700.HK', '1d', hk)
      if (isolated) assert.equal(barCount(await read()), 0)
      if (isolated) assert.equal(await store.dataVersion(), version)
      await w2.commit()
      same(await read(), hk)
      assert.notEqual(await store.dataVersion(), version)
    })
    test('check() passes on a healthy store', async () => {
      await store.check()
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
