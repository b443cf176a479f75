// `mdq import --format tushare` statements (report_type 1, corrections, restatements) and what every
// format refuses: another statement's file, a kind it does not read, a unit option it sets itself.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'presets.db')
const mdq = (args: string[]) => runMdq(['--db', db, ...args])

const INCOME_HEADER =
  'ts_code,ann_date,f_ann_date,end_date,report_type,comp_type,end_type,basic_eps,diluted_eps,total_revenue,revenue,oper_cost,sell_exp,admin_exp,fin_exp,operate_profit,non_oper_income,non_oper_exp,total_profit,income_tax,n_income,n_income_attr_p,rd_exp,update_flag'
// Newest first as Tushare serves: FY2020 as first published (flag 0) and corrected (flag 1) the same
// day, FY2019 restated in 2021, FY2019 as announced in 2020, and that year's single-quarter report (type 2).
const INCOME_ROWS = [
  '600519.SH,20210330,20210331,20201231,1,1,4,37.17,37.17,97993240000,94915380000,8150000000,2547000000,6790000000,-234000000,66634000000,10000000,450000000,66197000000,16724000000,49523000000,46697000000.78,50000000,1',
  '600519.SH,20210330,20210331,20201231,1,1,4,37.17,37.17,97993240000,94915380000,8150000000,2547000000,6790000000,-234000000,66634000000,10000000,450000000,66197000000,16724000000,49000000000,46600000000,50000000,0',
  '600519.SH,20210330,20210331,20191231,1,1,4,32.96,32.96,88854338485.11,85429573467.25,7300000000,3279000000,6167000000,67000000,59000000000,20000000,270000000,58783000000,14700000000,44000000000,41406471014.43,,0',
  '600519.SH,20200328,20200328,20191231,1,1,4,32.8,32.8,88854338485.11,85429573467.25,7300000000,3279000000,6167000000,67000000,59000000000,20000000,270000000,58783000000,14700000000,43970000000,41206471014.43,,0',
  '600519.SH,20200328,20200328,20191231,2,1,4,9.1,9.1,25000000000,24000000000,2000000000,900000000,1700000000,20000000,16000000000,5000000,70000000,15900000000,4000000000,11900000000,11400000000,,0',
]

describe('--format tushare statements', () => {
  it('income: report_type 1 only, a correction (update_flag 1) over its original, a restatement kept as a version', async () => {
    const setup = mdq(['import', 'instruments', writeCsv(join(dir, 'i.csv'), 'symbol', ['600519.SH'])])
    assert.equal(setup.status, 0, setup.stderr)
    const file = writeCsv(join(dir, 'income.csv'), INCOME_HEADER, INCOME_ROWS)
    const r = mdq(['import', 'financials', 'income', file, '--format', 'tushare'])
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /; 1 row of report types other than 1 \(consolidated\) left out/)
    const store = SqliteMarketStore.open(db)
    const versions = (await store.readFinancials('income', ['600519.SH'])).get('600519.SH') ?? []
    await store.close()
    assert.deepEqual(
      versions.map((v) => [v.periodEnd, v.announceDate, v.values.net_income_attributable, v.values.revenue]),
      [
        ['2019-12-31', '2020-03-28', 41206471014.43, 88854338485.11],
        ['2019-12-31', '2021-03-30', 41406471014.43, 88854338485.11],
        ['2020-12-31', '2021-03-30', 46697000000.78, 97993240000],
      ],
    )
    // Tushare's names for the SDK's fields, in CNY as Tushare gives them; an empty rd_exp is no value (served as null).
    assert.deepEqual(versions[2].values, {
      admin_expense: 6790000000,
      basic_eps: 37.17,
      diluted_eps: 37.17,
      financial_expense: -234000000,
      income_tax: 16724000000,
      net_income: 49523000000,
      net_income_attributable: 46697000000.78,
      non_operating_expense: 450000000,
      non_operating_income: 10000000,
      operating_cost: 8150000000,
      operating_profit: 66634000000,
      rd_expense: 50000000,
      revenue: 97993240000,
      selling_expense: 2547000000,
      total_profit: 66197000000,
    })
    assert.equal('rd_expense' in versions[0].values, false)
  })

  it('a balancesheet file imported as income names what it looks like; nothing stored', () => {
    const before = dumpStore(db)
    const file = writeCsv(
      join(dir, 'bs.csv'),
      'ts_code,ann_date,f_ann_date,end_date,report_type,comp_type,total_share,money_cap,total_assets,total_liab',
      ['600519.SH,20210330,20210330,20201231,1,1,1256197800,36091090000,213395810000.5,45675000000'],
    )
    const r = mdq(['import', 'financials', 'income', file, '--format', 'tushare'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /bs\.csv:1:1: not a Tushare income file: none of its columns admin_exp, basic_eps/)
    assert.match(r.stderr, /this looks like a Tushare balancesheet \(balance-sheet\) file/)
    assert.equal(dumpStore(db), before)
  })

  it('a file without the key columns names the columns a Tushare statement has; nothing stored', () => {
    const before = dumpStore(db)
    const file = writeCsv(join(dir, 'mdq-income.csv'), 'symbol,period_end,announce_date,revenue', [
      '600519.SH,2020-12-31,2021-03-30,97993240000',
    ])
    const r = mdq(['import', 'financials', 'income', file, '--format', 'tushare'])
    assert.equal(r.status, 1)
    assert.match(
      r.stderr,
      /mdq-income\.csv:1:1: not a Tushare income file: missing columns ts_code, ann_date, end_date \(expected ts_code, ann_date, end_date, optionally report_type, update_flag; header: symbol,period_end,announce_date,revenue\)/,
    )
    assert.equal(dumpStore(db), before)
  })
})

describe('--format baostock and tushare rows', () => {
  it('a suspended day (tradestatus 0) is left out and counted', async () => {
    const file = writeCsv(
      join(dir, 'bs-suspended.csv'),
      'date,code,open,high,low,close,preclose,volume,amount,adjustflag,tradestatus',
      [
        '2024-01-02,sh.600519,1685.00,1688.88,1650.00,1685.01,1726.00,3215644,5440082000.00,3,1',
        '2024-01-03,sh.600519,1685.01,1685.01,1685.01,1685.01,1685.01,0,0.00,3,0',
        '2024-01-04,sh.600519,1681.11,1699.00,1671.00,1681.00,1685.01,2618561,4407800000.00,3,1',
      ],
    )
    const r = mdq(['import', 'bars', file, '--format', 'baostock'])
    assert.equal(r.status, 0, r.stderr)
    assert.match(r.stdout, /: 2 rows, 1 symbols, .*; 1 suspended day \(tradestatus 0\) left out/)
    const store = SqliteMarketStore.open(db)
    const bars = await store.readBars({ symbol: '600519.SH', period: '1d', limit: 10 })
    await store.close()
    assert.deepEqual(Array.from(bars.close), [1685.01, 1681])
    assert.deepEqual(Array.from(bars.volume), [3215644, 2618561])
  })

  it("an error the bar checks find points at the Tushare file's own column (amount is the 9th here, mdq's 8th)", () => {
    const before = dumpStore(db)
    const file = writeCsv(join(dir, 'neg.csv'), 'ts_code,trade_date,open,high,low,close,pre_close,vol,amount', [
      '600519.SH,20240105,1680,1690,1670,1685,1681,100,-150',
    ])
    const r = mdq(['import', 'bars', file, '--format', 'tushare'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /neg\.csv:2:9: amount -150000 is negative/)
    assert.equal(dumpStore(db), before)
  })
})

describe('--format refusals', () => {
  const file = () => writeCsv(join(dir, 'any.csv'), 'symbol', ['600519.SH'])
  const cases: [string, string[], RegExp][] = [
    [
      'tushare metrics',
      ['financials', 'metrics'],
      /--format tushare reads bars \(daily\), ex-factors \(adj_factor\) and financials income, balance-sheet, cash-flow, not financials metrics/,
    ],
    ['baostock instruments', ['instruments'], /--format baostock reads bars \(daily\), not instruments/],
    [
      'lean universes',
      ['universes'],
      /--format lean reads bars \(daily and minute\) and ex-factors \(factor files\), not universes/,
    ],
  ]
  for (const [name, kind, message] of cases)
    it(`${name}: refused, nothing stored`, () => {
      const before = dumpStore(db)
      const r = mdq(['import', ...kind, file(), '--format', name.split(' ')[0]])
      assert.equal(r.status, 1)
      assert.match(r.stderr, message)
      assert.equal(dumpStore(db), before)
    })

  it('--price-scale with a format is refused: the format knows its units', () => {
    const r = mdq(['import', 'bars', file(), '--format', 'lean', '--price-scale', '10000'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /--price-scale: the lean format converts its own units/)
  })

  it('baostock with --period 1m is refused: Baostock has no 1-minute bars', () => {
    const r = mdq(['import', 'bars', file(), '--format', 'baostock', '--period', '1m'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /Baostock has no 1-minute bars/)
  })
})
