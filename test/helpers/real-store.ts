/** @module A store of real data from ../shared/data, built through the `mdq import` CLI: CN daily, US daily and minutes, instruments, a universe, test statements. */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { STATEMENTS, type Statement } from '../../src/domain/financials.js'
import { readBaostock } from '../reference/cn.js'
import { LEAN, LEAN_MINUTE_DAYS } from '../reference/lean.js'
import { data } from './requirements.js'
import { readLines } from './shared-data.js'
import { runMdq, writeCsv } from './store-files.js'

export const REAL_STORE_SKIP = data('cn/baostock_raw_daily') || data(LEAN)
export const CN_SYMBOLS = ['600000.SH', '600519.SH', '601318.SH'] as const
/** Symbols with bars: three CN daily, AAPL daily with ex-factors, SPY minutes only. */
export const REAL_SYMBOLS = [...CN_SYMBOLS, 'AAPL.US', 'SPY.US'] as const
export const WATCH_UNIVERSE = 'MY_WATCH'

/**
 * Statements for the SDK tests, one file per statement: made-up figures (../shared/data holds no
 * statements), 600519.SH's FY2019 income restated a year later, 600000.SH with cash flow and shares.
 */
export const STATEMENT_FILES: Readonly<Record<Statement, readonly string[]>> = {
  income: [
    'symbol,period_end,announce_date,revenue,net_income,basic_eps',
    '600519.SH,2019-12-31,2020-03-28,88854338485.11,41206471014.43,32.8',
    '600519.SH,2019-12-31,2021-03-30,88854338485.11,41406471014.43,32.96',
    '600519.SH,2020-12-31,2021-03-30,97993240000,46697000000.78,37.17',
    '600000.SH,2020-12-31,2021-03-30,196384000000,,1.88',
  ],
  'balance-sheet': [
    'symbol,period_end,announce_date,total_assets,total_liabilities,total_equity',
    '600519.SH,2020-12-31,2021-03-30,213395810000.5,45675000000,167720810000.5',
  ],
  'cash-flow': [
    'symbol,period_end,announce_date,net_operating_cash_flow,capex',
    '600000.SH,2020-12-31,2021-03-30,-12000000000.25,3500000000',
  ],
  metrics: ['symbol,period_end,announce_date,roe,gross_margin', '600519.SH,2020-12-31,2021-03-30,0.3141,0.9141'],
  shares: [
    'symbol,period_end,announce_date,total_shares,float_shares',
    '600000.SH,2020-12-31,2021-01-05,29352177375,29352177375',
  ],
}

const ymd = (s: string) => `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}`

function mdq(db: string, args: string[]): void {
  const r = runMdq(['--db', db, ...args])
  assert.equal(r.status, 0, r.stderr)
}

/** Builds `dir/real.db` and returns its path. */
export function buildRealStore(dir: string): string {
  const db = join(dir, 'real.db')
  mdq(db, [
    'import',
    'instruments',
    writeCsv(join(dir, 'instruments.csv'), 'symbol,name,type,name_en,lot_size', [
      '600000.SH,浦发银行,stock,Shanghai Pudong Development Bank,',
      '600519.SH,贵州茅台,stock,Kweichow Moutai,',
      '601318.SH,中国平安,stock,,',
      'AAPL.US,Apple Inc.,stock,,',
      'SPY.US,SPDR S&P 500 ETF Trust,etf,,',
      '00700.HK,腾讯控股,stock,,100',
    ]),
  ])
  const cnRows = CN_SYMBOLS.flatMap((symbol) =>
    readBaostock(symbol.slice(0, 6))
      .filter((r) => r.traded)
      .map(
        (r) =>
          `${symbol},${r.date},${r.open},${r.high},${r.low},${r.close},${r.volumeShares},${r.amount},${r.preclose}`,
      ),
  )
  mdq(db, [
    'import',
    'bars',
    writeCsv(join(dir, 'cn.csv'), 'symbol,time,open,high,low,close,volume,amount,prev_close', cnRows),
    '--derive-ex-factors',
  ])
  const aapl = readLines(`${LEAN}/daily/aapl.csv`).map((l) => {
    const [stamp, ...rest] = l.split(',')
    return `${ymd(stamp)},${rest.join(',')}`
  })
  mdq(db, [
    'import',
    'bars',
    writeCsv(join(dir, 'aapl.csv'), 'time,open,high,low,close,volume', aapl),
    '--symbol',
    'AAPL.US',
    '--price-scale',
    '10000',
  ])
  // AAPL's ex-factors from the LEAN factor file: f = factor_(i+1) / factor_i on the next trading day.
  const days = readLines(`${LEAN}/daily/aapl.csv`).map((l) => l.slice(0, 8))
  const factors = readLines(`${LEAN}/factor_files/aapl.csv`).map((l) => l.split(','))
  const events: string[] = []
  for (let i = 0; i + 1 < factors.length; i++) {
    const f = (Number(factors[i + 1][1]) * Number(factors[i + 1][2])) / (Number(factors[i][1]) * Number(factors[i][2]))
    const ex = days.find((d) => d > factors[i][0])
    if (ex && Math.abs(f - 1) > 1e-12) events.push(`AAPL.US,${ymd(ex)},${f}`)
  }
  mdq(db, ['import', 'ex-factors', writeCsv(join(dir, 'ef.csv'), 'symbol,ex_date,ex_factor', events)])
  // SPY: minute bars only (LEAN stamps bar starts, in ms since local midnight), so its quote comes from 1m bars.
  const spy = LEAN_MINUTE_DAYS.spy.flatMap((day) =>
    readLines(`${LEAN}/minute/spy/${day}_spy_minute_trade.csv`).map((l) => {
      const [ms, ...rest] = l.split(',')
      const minute = Number(ms) / 60_000
      return `${ymd(day)} ${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')},${rest.join(',')}`
    }),
  )
  mdq(db, [
    'import',
    'bars',
    writeCsv(join(dir, 'spy.csv'), 'time,open,high,low,close,volume', spy),
    '--period',
    '1m',
    '--symbol',
    'SPY.US',
    '--price-scale',
    '10000',
    '--outside-sessions',
    'skip',
  ])
  mdq(db, [
    'import',
    'universes',
    writeCsv(join(dir, 'universes.csv'), 'universe_id,symbol,name,region,category,description', [
      `${WATCH_UNIVERSE},600519.SH,My watch list,CN,equity,Moutai and friends`,
      `${WATCH_UNIVERSE},AAPL.US,,,,`,
      `${WATCH_UNIVERSE},SPY.US,,,,`,
    ]),
  ])
  for (const statement of STATEMENTS) {
    const [header, ...rows] = STATEMENT_FILES[statement]
    mdq(db, ['import', 'financials', statement, writeCsv(join(dir, `${statement}.csv`), header, rows)])
  }
  return db
}
