/** @module The store contract's statement and dated-universe cases (run by store-contract.ts for every backend). */
import assert from 'node:assert/strict'
import type { StatementRecord } from '../../src/domain/financials.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import type { MarketStore } from '../../src/store/market-store.js'

type Test = (title: string, needs: readonly [], fn: () => Promise<void>) => void

const v = (periodEnd: string, announceDate: string, values: StatementRecord['values']): StatementRecord => ({
  periodEnd,
  announceDate,
  values,
})
/** Values a text round trip could change: many digits, tiny, huge, negative, whole. */
const Q4 = v('2019-12-31', '2020-03-28', { revenue: 107_564_900_000.37, net_income: -0.1 - 0.2, basic_eps: 1e-7 })
const Q4_RESTATED = v('2019-12-31', '2021-04-30', { revenue: 107_000_000_000, net_income: 2.5 })
const Q3 = v('2019-09-30', '2019-10-30', { revenue: 70_000_000_000.12346, basic_eps: null })
const Q1 = v('2020-03-31', '2020-04-29', { revenue: 1.7976931348623157e308 })

export function financialsContract(test: Test, store: () => MarketStore): void {
  const read = (symbols: string[], range = {}) => store().readFinancials('income', symbols, range)
  // Nulls are not stored: a value absent reads as absent (the wire writes null for it).
  const stored = (r: StatementRecord): StatementRecord => ({
    ...r,
    values: Object.fromEntries(Object.entries(r.values).filter(([, x]) => x !== null)),
  })

  test('financials: every version kept, ascending by period then announce date, values exact', [], async () => {
    await store().write({
      instruments: [bareInstrument('600100.SH'), bareInstrument('600101.SH')],
      financials: [
        { statement: 'income', symbol: '600100.SH', records: [Q1, Q4_RESTATED, Q3, Q4] },
        { statement: 'cash-flow', symbol: '600100.SH', records: [v('2019-12-31', '2020-03-28', { capex: 5 })] },
      ],
    })
    assert.deepEqual(
      await read(['600100.SH', '600101.SH', '600100.SH']),
      new Map([['600100.SH', [Q3, Q4, Q4_RESTATED, Q1].map(stored)]]),
    )
    assert.deepEqual(
      await read(['600100.SH'], { fromPeriod: '2019-12-31', toPeriod: '2019-12-31' }),
      new Map([['600100.SH', [Q4, Q4_RESTATED].map(stored)]]),
    )
    assert.deepEqual(await read(['600100.SH'], { fromPeriod: '2020-01-01' }), new Map([['600100.SH', [stored(Q1)]]]))
    assert.deepEqual(await read(['600100.SH'], { toPeriod: '2019-06-30' }), new Map())
    assert.deepEqual((await store().readFinancials('cash-flow', ['600100.SH'])).get('600100.SH'), [
      v('2019-12-31', '2020-03-28', { capex: 5 }),
    ])
    assert.deepEqual(await store().readFinancials('metrics', ['600100.SH']), new Map())
  })

  test('financials: a version written again replaces its values, in a later write or later in one', [], async () => {
    const fixed = v(Q3.periodEnd, Q3.announceDate, { revenue: 1 })
    await store().write({ financials: [{ statement: 'income', symbol: '600100.SH', records: [fixed] }] })
    const w = await store().beginWrite()
    await w.putFinancials({
      statement: 'income',
      symbol: '600101.SH',
      records: [v('2020-06-30', '2020-08-01', { revenue: 1 })],
    })
    await w.putFinancials({
      statement: 'income',
      symbol: '600101.SH',
      records: [v('2020-06-30', '2020-08-01', { revenue: 2 })],
    })
    await w.commit()
    assert.deepEqual((await read(['600100.SH'], { toPeriod: '2019-09-30' })).get('600100.SH'), [fixed])
    assert.deepEqual((await read(['600101.SH'])).get('600101.SH'), [v('2020-06-30', '2020-08-01', { revenue: 2 })])
  })

  test(
    'financials: deletes take every version of the periods in range of one statement; a delete then a put keep the put',
    [],
    async () => {
      await store().write({
        instruments: [bareInstrument('600102.SH')],
        financials: [
          { statement: 'income', symbol: '600102.SH', records: [Q3, Q4, Q4_RESTATED, Q1] },
          { statement: 'metrics', symbol: '600102.SH', records: [v('2019-12-31', '2020-03-28', { roe: 0.12 })] },
        ],
      })
      await store().write({
        deleteFinancials: [
          { statement: 'income', symbol: '600102.SH', fromPeriod: '2019-10-01', toPeriod: '2019-12-31' },
        ],
      })
      assert.deepEqual((await read(['600102.SH'])).get('600102.SH'), [Q3, Q1].map(stored))
      assert.equal((await store().readFinancials('metrics', ['600102.SH'])).get('600102.SH')?.length, 1)
      const w = await store().beginWrite()
      await w.deleteFinancials({ statement: 'income', symbol: '600102.SH' })
      await w.putFinancials({ statement: 'income', symbol: '600102.SH', records: [Q4] })
      await w.commit()
      assert.deepEqual((await read(['600102.SH'])).get('600102.SH'), [stored(Q4)])
    },
  )

  test('financials: a failed or rolled-back write leaves none', [], async () => {
    const version = await store().dataVersion()
    await assert.rejects(
      store().write({
        financials: [{ statement: 'income', symbol: '600103.SH', records: [Q4] }],
        bars: [
          {
            symbol: '600103.SH',
            period: '1d',
            bars: { ...emptyBars(2), timestamp: new Float64Array([2e12, 1e12]) }, // not ascending
          },
        ],
      }),
    )
    const w = await store().beginWrite()
    await w.putFinancials({ statement: 'income', symbol: '600103.SH', records: [Q1] })
    await w.deleteFinancials({ statement: 'income', symbol: '600100.SH' })
    await w.rollback()
    assert.deepEqual(await read(['600103.SH']), new Map())
    assert.equal((await read(['600100.SH'])).get('600100.SH')?.length, 4)
    assert.equal(await store().dataVersion(), version)
  })

  test('universes: dated memberships are kept with their dates; a plain list replacing them has none', [], async () => {
    const spells = [
      { symbol: '600000.SH', inDate: '2015-01-05', outDate: '2018-06-11' },
      { symbol: 'AAPL.US', inDate: null, outDate: null },
      { symbol: '600000.SH', inDate: '2020-06-15', outDate: null },
      { symbol: '510300.SH', inDate: '2016-01-04', outDate: '2017-01-03' },
    ]
    const fields = { name: 'Dated', region: null, category: 'index', description: null }
    await store().write({ instruments: [bareInstrument('600100.SH')] })
    const w = await store().beginWrite()
    await w.putUniverses([{ id: 'DATED', ...fields, symbols: ['AAPL.US', '600000.SH'], spells }])
    await w.commit()
    const dated = (await store().readUniverses()).find((u) => u.id === 'DATED')
    assert.deepEqual(dated, { id: 'DATED', ...fields, symbols: ['AAPL.US', '600000.SH'], spells })
    const w2 = await store().beginWrite()
    await w2.putUniverses([{ id: 'DATED', ...fields, symbols: ['AAPL.US'] }])
    await w2.commit()
    assert.deepEqual(
      (await store().readUniverses()).find((u) => u.id === 'DATED'),
      { id: 'DATED', ...fields, symbols: ['AAPL.US'] },
    )
  })
}

function emptyBars(n: number) {
  const col = () => new Float64Array(n).fill(1)
  return { open: col(), high: col(), low: col(), close: col(), volume: col(), amount: col(), prevClose: col() }
}
