/** @module The Store contract: one suite every backend runs (Hono's runTest idea), skipped by declared capability with a reason. */
import assert from 'node:assert/strict'
import { after, before, describe, it, type TestContext } from 'node:test'
import { barCount, rowsOfBars, sliceBars, type Bars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { MarketStore, StoreCapabilities } from '../../src/store/market-store.js'
import { sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'

export interface StoreContractOptions {
  readonly name: string
  readonly open: () => Promise<{ market: MarketStore; keys: KeyStore }>
  /** Tests that need a capability are skipped with this reason (also when the store declares it false). */
  readonly skip?: Partial<Record<keyof StoreCapabilities, string>>
  /** A reason every test is skipped (its server is not installed here); never set under CI=true. */
  readonly unavailable?: string | false
}

export function runStoreContract({ name, open, skip = {}, unavailable = false }: StoreContractOptions): void {
  describe(`${name}: Store contract`, () => {
    let store: MarketStore
    let keys: KeyStore
    const daily = walkBars(tradingDays('SH', 16000, 3000), [0.1, 0.4, 0.8, 0.3])
    const minute = walkBars(sessionMinutes('US', tradingDays('US', 19000, 30)), [0.6, 0.2])
    before(async () => {
      if (unavailable) return
      ;({ market: store, keys } = await open())
      await store.write({
        instruments: [bareInstrument('600000.SH', { name: 'Pudong', type: 'stock', tickSize: 0.01 }), bareInstrument('AAPL.US'), bareInstrument('00700.HK')],
        bars: [
          { symbol: '600000.SH', period: '1d', bars: daily },
          { symbol: 'AAPL.US', period: '1m', bars: minute },
        ],
        exFactors: [{ symbol: '600000.SH', events: [{ timestamp: daily.timestamp[100], exFactor: 1.1 }, { timestamp: daily.timestamp[2000], exFactor: 2 }] }],
      })
    })
    after(async () => {
      await keys?.close()
      await store?.close()
    })
    const test = (title: string, fn: (t: TestContext) => Promise<void>, needs?: keyof StoreCapabilities) =>
      it(title, { skip: unavailable || ((needs && skip[needs]) ?? false) }, async (t) => {
        if (needs && !store.capabilities[needs]) return t.skip(`${name} does not declare ${needs}`)
        await fn(t)
      })
    const same = (a: Bars, b: Bars) => assert.deepEqual(rowsOfBars(a), rowsOfBars(b))
    const read = (symbol: string, period: '1d' | '1m', limit = 10_000, fromMs?: number, toMs?: number) => store.readBars({ symbol, period, limit, fromMs, toMs })

    test('returns the latest N bars in ascending order, across chunks', async () => {
      same(await read('600000.SH', '1d', 1500), sliceBars(daily, 1500, 3000))
      same(await read('AAPL.US', '1m', 5000), sliceBars(minute, barCount(minute) - 5000, barCount(minute)))
    })
    test('selects inclusive [fromMs, toMs] and the latest limit inside it', async () => {
      const from = daily.timestamp[10]
      const to = daily.timestamp[20]
      same(await read('600000.SH', '1d', 100, from, to), sliceBars(daily, 10, 21))
      same(await read('600000.SH', '1d', 3, from, to), sliceBars(daily, 18, 21))
      same(await read('600000.SH', '1d', 3, undefined, daily.timestamp[0] - 1), sliceBars(daily, 0, 0))
    })
    test('an unknown symbol or period without bars reads as empty', async () => {
      assert.equal(barCount(await read('600000.SH', '1m', 10)), 0)
      assert.equal(barCount(await read('000001.SZ', '1d', 10)), 0)
    })
    test('re-writing the same bars changes nothing; a changed bar replaces the old one', async () => {
      const before = await store.dataVersion()
      const count = await store.importCount()
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 500, 700) }] })
      same(await read('600000.SH', '1d', 3000), daily)
      assert.notEqual(await store.dataVersion(), before)
      assert.equal(await store.importCount(), count + 1)
      const changed = walkBars([daily.timestamp[600]], [0.99])
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: changed }] })
      same(await read('600000.SH', '1d', 1, daily.timestamp[600], daily.timestamp[600]), changed)
      await store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: sliceBars(daily, 600, 601) }] })
      same(await read('600000.SH', '1d', 3000), daily)
    })
    test('a failing write leaves nothing behind', async () => {
      const version = await store.dataVersion()
      const bad = walkBars([daily.timestamp[5], daily.timestamp[4]], [0.5]) // not ascending
      await assert.rejects(store.write({ instruments: [bareInstrument('000001.SZ')], bars: [{ symbol: '000001.SZ', period: '1d', bars: walkBars([1e12], [0.1]) }, { symbol: '600000.SH', period: '1d', bars: bad }] }))
      assert.deepEqual(await store.readInstruments(['000001.SZ']), [])
      assert.equal(barCount(await read('000001.SZ', '1d', 10)), 0)
      assert.equal(await store.dataVersion(), version)
    })
    test('instruments come in the order asked, unknown ones left out, duplicates once', async () => {
      const got = await store.readInstruments(['AAPL.US', '999999.SH', '600000.SH', 'AAPL.US'])
      assert.deepEqual(got.map((i) => i.symbol), ['AAPL.US', '600000.SH'])
      assert.equal(got[1].name, 'Pudong')
      assert.equal(got[1].tickSize, 0.01)
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
    test('listInstruments: symbol ascending, filtered by exchange and type', async () => {
      assert.deepEqual((await store.listInstruments()).map((i) => i.symbol), ['00700.HK', '600000.SH', 'AAPL.US'])
      assert.deepEqual((await store.listInstruments({ exchange: 'SH' })).map((i) => i.symbol), ['600000.SH'])
      assert.deepEqual((await store.listInstruments({ type: 'stock' })).map((i) => i.symbol), ['600000.SH'])
      assert.deepEqual(await store.listInstruments({ exchange: 'SZ' }), [])
    })
    test('ex-factors: ascending per known symbol, [] without events, unknown left out, range inclusive', async () => {
      const all = await store.readExFactors(['600000.SH', 'AAPL.US', '000002.SZ'])
      assert.deepEqual([...all.keys()], ['600000.SH', 'AAPL.US'])
      assert.deepEqual(all.get('600000.SH')!.map((e) => e.exFactor), [1.1, 2])
      assert.deepEqual(all.get('AAPL.US'), [])
      const ranged = await store.readExFactors(['600000.SH'], daily.timestamp[2000], daily.timestamp[2000])
      assert.deepEqual(ranged.get('600000.SH'), [{ timestamp: daily.timestamp[2000], exFactor: 2 }])
    })
    test('readers see a write transaction only after commit; a rollback leaves nothing', async () => {
      const w = await store.beginWrite()
      await w.putBars('00700.HK', '1d', walkBars(tradingDays('HK', 19000, 5), [0.2]))
      assert.equal(barCount(await read('00700.HK', '1d', 10)), 0)
      await w.rollback()
      assert.equal(barCount(await read('00700.HK', '1d', 10)), 0)
      const w2 = await store.beginWrite()
      await w2.putBars('00700.HK', '1d', walkBars(tradingDays('HK', 19000, 5), [0.2]))
      await w2.commit()
      assert.equal(barCount(await read('00700.HK', '1d', 10)), 5)
      await store.write({ deleteBars: [{ symbol: '00700.HK', period: '1d' }] })
      assert.equal(barCount(await read('00700.HK', '1d', 10)), 0)
    }, 'liveImport')
    test('deleteBars removes an inclusive range; delete then put in one batch yields exactly the put bars', async () => {
      const s = 'AAPL.US'
      const from = minute.timestamp[100]
      const to = minute.timestamp[199]
      await store.write({ deleteBars: [{ symbol: s, period: '1m', fromMs: from, toMs: to }] })
      const left = await read(s, '1m', 100_000)
      assert.equal(barCount(left), barCount(minute) - 100)
      assert.deepEqual(rowsOfBars(left).slice(99, 101), rowsOfBars(minute).filter((_, i) => i === 99 || i === 200))
      // --replace: the file's range replaced by the file's bars, one of them moved, one changed.
      const replacement = walkBars([minute.timestamp[0], minute.timestamp[5], minute.timestamp[300]], [0.42])
      await store.write({ deleteBars: [{ symbol: s, period: '1m', fromMs: minute.timestamp[0], toMs: minute.timestamp[300] }], bars: [{ symbol: s, period: '1m', bars: replacement }] })
      same(await read(s, '1m', 3, undefined, minute.timestamp[300]), replacement)
      await store.write({ deleteBars: [{ symbol: s, period: '1m' }], bars: [{ symbol: s, period: '1m', bars: minute }] })
      same(await read(s, '1m', 100_000), minute)
    })
    test('deleteExFactors and deleteInstruments', async () => {
      await store.write({ deleteExFactors: [{ symbol: '600000.SH', fromMs: daily.timestamp[2000] }] })
      assert.deepEqual((await store.readExFactors(['600000.SH'])).get('600000.SH')!.map((e) => e.exFactor), [1.1])
      await store.write({ instruments: [bareInstrument('000002.SZ', { name: 'Vanke' })] })
      assert.equal((await store.readInstruments(['000002.SZ'])).length, 1)
      await store.write({ deleteInstruments: ['000002.SZ'] })
      assert.deepEqual(await store.readInstruments(['000002.SZ']), [])
      assert.deepEqual(await store.searchInstruments('vanke', 10), [])
      await store.write({ instruments: [bareInstrument('000002.SZ', { name: 'Vanke A' })] })
      assert.equal((await store.readInstruments(['000002.SZ']))[0].name, 'Vanke A')
      await store.write({ exFactors: [{ symbol: '600000.SH', events: [{ timestamp: daily.timestamp[2000], exFactor: 2 }] }], deleteInstruments: ['000002.SZ'] })
    })
    test('universes: imported ones read back; a put replaces a universe as a whole', async () => {
      const w = await store.beginWrite()
      await w.putUniverses([
        { id: 'mine', name: 'Mine', region: 'CN', category: 'equity', description: "a 'quoted' list", symbols: ['600000.SH', '000002.SZ'] },
        { id: 'other', name: 'Other', region: null, category: null, description: null, symbols: [] },
      ])
      await w.commit()
      await store.write({})
      const w2 = await store.beginWrite()
      await w2.putUniverses([{ id: 'mine', name: 'Mine 2', region: 'CN', category: 'equity', description: null, symbols: ['AAPL.US'] }])
      await w2.commit()
      assert.deepEqual(await store.readUniverses(), [
        { id: 'mine', name: 'Mine 2', region: 'CN', category: 'equity', description: null, symbols: ['AAPL.US'] },
        { id: 'other', name: 'Other', region: null, category: null, description: null, symbols: [] },
      ])
    })
    test('check() passes on a healthy store', async () => {
      await store.check()
      await keys.check()
    })
    test('API keys: created, found by hash, quotas set, revoked; keysVersion moves with each change', async () => {
      const v0 = await keys.keysVersion()
      const k = await keys.createKey({ name: 'ci', hash: 'ab'.repeat(32) })
      const v1 = await keys.keysVersion()
      assert.notEqual(v1, v0)
      assert.equal((await keys.findKey('ab'.repeat(32)))?.id, k.id)
      assert.equal(k.revokedMs, null)
      assert.ok(await keys.setKeyRate(k.id, 120, 10))
      assert.equal((await keys.findKey(k.hash))?.ratePerMin, 120)
      assert.ok(await keys.revokeKey(k.id))
      assert.ok((await keys.findKey(k.hash))?.revokedMs)
      assert.notEqual(await keys.keysVersion(), v1)
      assert.equal(await keys.revokeKey(99_999), false)
      assert.equal(await keys.setKeyRate(99_999, 1, 1), false)
      assert.deepEqual((await keys.listKeys()).map((x) => x.name), ['ci'])
    })
  })
}
