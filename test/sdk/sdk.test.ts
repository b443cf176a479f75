// The official TickFlow Python SDK (sync and async clients) against a running mdq over real data: every REST method.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { STATEMENT_FIELDS } from '../../src/domain/financials.js'
import { MARKETS } from '../../src/domain/market.js'
import { runSdkScript, sdkSkip } from '../helpers/python-sdk.js'
import { buildRealStore, CN_SYMBOLS, REAL_STORE_SKIP, REAL_SYMBOLS, WATCH_UNIVERSE } from '../helpers/real-store.js'
import { startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { readBaostock } from '../reference/cn.js'
import { LEAN, readLeanMinuteDay } from '../reference/lean.js'
import { readLines } from '../helpers/shared-data.js'

type Quote = {
  symbol: string
  timestamp: number
  last_price: number
  open: number
  high: number
  low: number
  volume: number
  prev_close: number
  session: string
  ext: { change_pct: number; change_amount: number; name: string }
}
type Universe = { id: string; symbol_count: number; symbols?: string[] }
interface Report {
  get?: Record<string, KlinesData>
  batch_equal: Record<string, boolean>
  batch_dtypes: Record<string, Record<string, string>>
  whole?: { dtypes: Record<string, string>; row: Record<string, number> }
  intraday: KlinesData
  intraday_5m?: KlinesData
  intraday_batch: Record<string, KlinesData>
  ex_factors: Record<string, { timestamp: number; ex_factor: number }[]>
  instrument: { symbol: string; ext: { name_en: string | null } }
  instruments: { symbol: string }[]
  exchanges: { exchange: string; region: string; count: number }[]
  sh_stocks?: { symbol: string }[]
  sh_batch: { symbols: string[]; equal: Record<string, boolean> }
  universes: Universe[]
  universe: Universe
  universe_batch: Record<string, Universe>
  quotes: Quote[]
  quotes_universe?: Quote[]
  quotes_by_symbols: Quote[]
  quotes_by_universes: Quote[]
  quotes_df_dtypes?: Record<string, string>
  not_served: Record<string, string | null>
  financials: Record<string, Record<string, Statement[]>>
  financials_df: Record<string, { columns: string[]; dtypes: Record<string, string>; rows: Statement[] }>
  income_range?: Record<string, Statement[]>
  income_latest?: Record<string, Statement[]>
}
type Statement = Record<string, string | number | null>
/** A record as the SDK returns it: every field of its statement, null where the file had none. */
function statement(kind: keyof typeof STATEMENT_FIELDS, values: Statement): Statement {
  return Object.fromEntries([
    ['period_end', values.period_end],
    ['announce_date', values.announce_date],
    ...STATEMENT_FIELDS[kind].map((f) => [f, values[f] ?? null]),
  ])
}
const FY2019 = statement('income', {
  period_end: '2019-12-31',
  announce_date: '2021-03-30',
  revenue: 88854338485.11,
  net_income: 41406471014.43,
  basic_eps: 32.96,
})
const FY2020 = statement('income', {
  period_end: '2020-12-31',
  announce_date: '2021-03-30',
  revenue: 97993240000,
  net_income: 46697000000.78,
  basic_eps: 37.17,
})
const PUDONG_FY2020 = statement('income', {
  period_end: '2020-12-31',
  announce_date: '2021-03-30',
  revenue: 196384000000,
  basic_eps: 1.88,
})

const skip = REAL_STORE_SKIP || sdkSkip()
const SH = MARKETS.SH.zone
const NY = MARKETS.US.zone
const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`)
const WHOLE_DAY = '2020-03-10' // 600519.SH traded at whole prices only that day: 1113 / 1168 / 1113 / 1156

/** The quote each symbol must have, from the reference files alone (not from mdq). */
function expectedQuotes(): Map<string, Omit<Quote, 'session' | 'ext'>> {
  const out = new Map<string, Omit<Quote, 'session' | 'ext'>>()
  for (const symbol of CN_SYMBOLS) {
    const last = readBaostock(symbol.slice(0, 6))
      .filter((r) => r.traded)
      .at(-1)!
    const [y, m, d] = last.date.split('-').map(Number)
    out.set(symbol, {
      symbol,
      timestamp: SH.utcOf(y, m, d),
      last_price: last.close,
      open: last.open,
      high: last.high,
      low: last.low,
      volume: last.volumeShares,
      prev_close: last.preclose,
    })
  }
  const aapl = readLines(`${LEAN}/daily/aapl.csv`)
    .slice(-2)
    .map((l) => l.split(','))
  const [ymd] = aapl[1][0].split(' ')
  const p = (row: string[], i: number) => Number(row[i]) / 10000
  out.set('AAPL.US', {
    symbol: 'AAPL.US',
    timestamp: NY.utcOf(Number(ymd.slice(0, 4)), Number(ymd.slice(4, 6)), Number(ymd.slice(6, 8))),
    last_price: p(aapl[1], 4),
    open: p(aapl[1], 1),
    high: p(aapl[1], 2),
    low: p(aapl[1], 3),
    volume: Number(aapl[1][5]),
    prev_close: p(aapl[0], 4),
  })
  // SPY has minute bars only: its day is aggregated from the regular-session minutes of 2013-10-11.
  const regular = (ymd: string) => readLeanMinuteDay('spy', ymd).filter((r) => r.minute >= 570 && r.minute < 960)
  const day = regular('20131011')
  out.set('SPY.US', {
    symbol: 'SPY.US',
    timestamp: day.at(-1)!.timestamp,
    last_price: day.at(-1)!.close,
    open: day[0].open,
    high: Math.max(...day.map((r) => r.high)),
    low: Math.min(...day.map((r) => r.low)),
    volume: day.reduce((s, r) => s + r.volume, 0),
    prev_close: regular('20131010').at(-1)!.close,
  })
  return out
}

function checkQuotes(quotes: readonly Quote[], symbols: readonly string[]): void {
  const expected = expectedQuotes()
  assert.deepEqual(
    quotes.map((q) => q.symbol),
    symbols,
  )
  for (const q of quotes) {
    const e = expected.get(q.symbol)!
    assert.equal(q.timestamp, e.timestamp, `${q.symbol} timestamp`)
    assert.equal(q.volume, e.volume, `${q.symbol} volume`)
    for (const f of ['last_price', 'open', 'high', 'low', 'prev_close'] as const) close(q[f], e[f], `${q.symbol} ${f}`)
    const pct = (e.last_price - e.prev_close) / e.prev_close
    assert.ok(Math.abs(q.ext.change_pct - pct) <= 5e-7, `${q.symbol} change_pct ${q.ext.change_pct} vs ${pct}`)
    // The exact decimal difference (prices of at most 4 decimals, in integers of 1/10,000): no float noise.
    const change = (Math.round(e.last_price * 10_000) - Math.round(e.prev_close * 10_000)) / 10_000
    assert.equal(q.ext.change_amount, change, `${q.symbol} change_amount`)
    assert.equal(q.session, 'closed', 'the test server clock is pinned to a Sunday')
  }
}

describe('TickFlow Python SDK against mdq (real data)', () => {
  const { dir, cleanup } = tempDir()
  let server: TestServer | undefined
  const reports: Partial<Record<'sync' | 'async', Promise<Report>>> = {}
  const report = (mode: 'sync' | 'async') => {
    const scenario = {
      symbols: REAL_SYMBOLS,
      whole: { symbol: '600519.SH', time: SH.utcOf(2020, 3, 10) },
      intraday: 'SPY.US',
      universe: WATCH_UNIVERSE,
    }
    return (reports[mode] ??= runSdkScript<Report>('drive.py', [
      server!.url,
      server!.key,
      mode,
      JSON.stringify(scenario),
    ]))
  }
  before(async () => {
    if (skip) return
    // Sunday 2026-11-22 12:00 UTC: every exchange is closed, so `session` is known.
    server = await startServer(buildRealStore(dir), { now: () => Date.UTC(2026, 10, 22, 12) })
  })
  after(async () => {
    await server?.close()
    cleanup()
  })

  for (const mode of ['sync', 'async'] as const) {
    it(
      `${mode}: klines.batch in chunks of 2 (as_dataframe) equals klines.get for every symbol; prices float64, volume int64`,
      { skip },
      async () => {
        const r = await report(mode)
        assert.deepEqual(Object.keys(r.batch_equal).sort(), [...REAL_SYMBOLS].sort())
        for (const [symbol, equal] of Object.entries(r.batch_equal))
          assert.ok(equal, `${symbol}: batch DataFrame differs from klines.get`)
        for (const symbol of ['600000.SH', '600519.SH', '601318.SH', 'AAPL.US']) {
          const d = r.batch_dtypes[symbol]
          for (const c of ['open', 'high', 'low', 'close', 'amount']) assert.equal(d[c], 'float64', `${symbol} ${c}`)
          assert.equal(d.volume, 'int64', `${symbol} volume`)
          assert.equal(d.timestamp, 'int64', `${symbol} timestamp`)
        }
      },
    )

    it(`${mode}: exchanges.get_instruments("SH") feeds klines.batch`, { skip }, async () => {
      const r = await report(mode)
      assert.deepEqual(r.exchanges, [
        { exchange: 'HK', region: 'HK', count: 1 },
        { exchange: 'SH', region: 'CN', count: 3 },
        { exchange: 'US', region: 'US', count: 2 },
      ])
      assert.deepEqual(r.sh_batch.symbols, [...CN_SYMBOLS])
      for (const s of CN_SYMBOLS) assert.ok(r.sh_batch.equal[s], s)
    })

    it(
      `${mode}: intraday and intraday_batch give SPY's last minute day; symbols without minutes get empty arrays`,
      { skip },
      async () => {
        const r = await report(mode)
        const day = readLeanMinuteDay('spy', '20131011').filter((b) => b.minute >= 570 && b.minute < 960)
        assert.deepEqual(
          r.intraday.timestamp,
          day.map((b) => b.timestamp),
        )
        assert.deepEqual(
          r.intraday.close,
          day.map((b) => b.close),
        )
        assert.deepEqual(r.intraday_batch['SPY.US'], r.intraday)
        for (const s of CN_SYMBOLS) assert.deepEqual(r.intraday_batch[s].timestamp, [], s)
      },
    )

    it(`${mode}: ex_factors, instruments (name_en), universes`, { skip }, async () => {
      const r = await report(mode)
      assert.deepEqual(Object.keys(r.ex_factors).sort(), [...REAL_SYMBOLS].sort())
      assert.deepEqual(r.ex_factors['SPY.US'], [])
      assert.ok(r.ex_factors['AAPL.US'].length > 5 && r.ex_factors['600000.SH'].length > 0)
      assert.equal(r.instrument.ext.name_en, 'Shanghai Pudong Development Bank')
      assert.deepEqual(
        r.instruments.map((i) => i.symbol),
        [...REAL_SYMBOLS],
      )
      const counts = Object.fromEntries(r.universes.map((u) => [u.id, u.symbol_count]))
      assert.deepEqual(counts, { CN_Equity_A: 3, CN_ETF: 0, HK_Equity: 1, US_Equity: 1, [WATCH_UNIVERSE]: 3 })
      assert.deepEqual(r.universe.symbols, ['600519.SH', 'AAPL.US', 'SPY.US'])
      assert.ok(r.universe_batch[WATCH_UNIVERSE] && !('NO_SUCH' in r.universe_batch))
    })

    it(
      `${mode}: quotes agree with the stored bars (last_price, prev_close, change_pct), by symbols and by universes`,
      { skip },
      async () => {
        const r = await report(mode)
        checkQuotes(r.quotes, REAL_SYMBOLS)
        checkQuotes(r.quotes_by_symbols, REAL_SYMBOLS)
        checkQuotes(
          r.quotes_by_universes,
          mode === 'sync' ? ['AAPL.US', ...CN_SYMBOLS] : ['600519.SH', 'AAPL.US', 'SPY.US'],
        )
      },
    )

    it(`${mode}: depth of a symbol with none pushed raises NotFoundError saying so`, { skip }, async () => {
      const r = await report(mode)
      assert.match(r.not_served.depth ?? '', /No depth was pushed for /)
    })

    it(
      `${mode}: financials.income, .balance_sheet, .cash_flow, .metrics, .shares in chunks of 2: the latest version of each period`,
      { skip },
      async () => {
        const f = (await report(mode)).financials
        const none = { '601318.SH': [], 'AAPL.US': [], 'SPY.US': [] }
        assert.deepEqual(f.income, { '600519.SH': [FY2019, FY2020], '600000.SH': [PUDONG_FY2020], ...none })
        assert.deepEqual(f.balance_sheet, {
          '600519.SH': [
            statement('balance-sheet', {
              period_end: '2020-12-31',
              announce_date: '2021-03-30',
              total_assets: 213395810000.5,
              total_liabilities: 45675000000,
              total_equity: 167720810000.5,
            }),
          ],
          '600000.SH': [],
          ...none,
        })
        assert.deepEqual(f.cash_flow['600000.SH'], [
          statement('cash-flow', {
            period_end: '2020-12-31',
            announce_date: '2021-03-30',
            net_operating_cash_flow: -12000000000.25,
            capex: 3500000000,
          }),
        ])
        assert.deepEqual(f.metrics['600519.SH'], [
          statement('metrics', {
            period_end: '2020-12-31',
            announce_date: '2021-03-30',
            roe: 0.3141,
            gross_margin: 0.9141,
          }),
        ])
        assert.deepEqual(f.shares, {
          '600000.SH': [
            {
              period_end: '2020-12-31',
              announce_date: '2021-01-05',
              float_shares: 29352177375,
              total_shares: 29352177375,
            },
          ],
          '600519.SH': [],
          ...none,
        })
      },
    )

    it(
      `${mode}: financials as_dataframe: one row per record with its symbol; fields with values float64, wholly empty ones object`,
      { skip },
      async () => {
        const df = (await report(mode)).financials_df
        const income = df.income
        assert.deepEqual(income.columns, ['symbol', 'period_end', 'announce_date', ...STATEMENT_FIELDS.income])
        // Symbols in the order asked (600000.SH first), then records by period.
        assert.deepEqual(income.rows, [
          { symbol: '600000.SH', ...PUDONG_FY2020 },
          { symbol: '600519.SH', ...FY2019 },
          { symbol: '600519.SH', ...FY2020 },
        ])
        for (const f of STATEMENT_FIELDS.income)
          assert.equal(
            income.dtypes[f],
            f === 'revenue' || f === 'net_income' || f === 'basic_eps' ? 'float64' : 'object',
            f,
          )
        assert.equal(df.shares.dtypes.total_shares, 'float64')
        assert.deepEqual(
          df.metrics.rows.map((r) => [r.symbol, r.roe]),
          [['600519.SH', 0.3141]],
        )
      },
    )
  }

  it(
    'sync: klines.get of a window of whole prices still gives float64 price columns; latest forward close = raw close',
    { skip },
    async () => {
      const r = await report('sync')
      for (const c of ['open', 'high', 'low', 'close', 'amount']) assert.equal(r.whole!.dtypes[c], 'float64', c)
      const ref = readBaostock('600519').find((x) => x.date === WHOLE_DAY)!
      assert.deepEqual(r.whole!.row, {
        open: ref.open,
        high: ref.high,
        low: ref.low,
        close: ref.close,
        amount: ref.amount,
      })
      assert.ok([ref.open, ref.high, ref.low, ref.close].every(Number.isInteger), 'the window really is whole prices')
      for (const s of CN_SYMBOLS)
        assert.equal(
          r.get![s].close.at(-1),
          readBaostock(s.slice(0, 6))
            .filter((x) => x.traded)
            .at(-1)!.close,
          s,
        )
      assert.deepEqual(r.intraday_5m!.timestamp.at(-1), NY.utcOf(2013, 10, 11, 15 * 60 + 55))
      assert.equal(r.sh_stocks!.length, 3)
      for (const c of Object.keys(r.quotes_df_dtypes!)) assert.equal(r.quotes_df_dtypes![c], 'float64', c)
      checkQuotes(r.quotes_universe!, ['600519.SH', 'AAPL.US', 'SPY.US'])
      assert.deepEqual(r.income_range, { '600519.SH': [FY2020] })
      assert.deepEqual(r.income_latest, { '600519.SH': [FY2020], '600000.SH': [PUDONG_FY2020] })
    },
  )
})
