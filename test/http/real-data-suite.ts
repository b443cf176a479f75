/**
 * @module Imported real data served over HTTP, as one suite every deployment runs
 * (test/http/real-data*.test.ts): Baostock 600000 (derived ex-factors) vs Tushare qfq, LEAN AAPL vs
 * Alpha Vantage, LEAN daily bars aggregated into weeks and months, Hikyuu's 600000 corporate actions
 * vs Hikyuu's EQUAL_FORWARD/EQUAL_BACKWARD.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { MARKETS } from '../../src/domain/market.js'
import type { DeploymentHandle } from '../helpers/deployments.js'
import { maxDeviationFromConstant } from '../helpers/ratios.js'
import { readLines } from '../helpers/shared-data.js'
import { data, requires } from '../helpers/requirements.js'
import { runMdq, tempDir, writeCsv } from '../helpers/store-files.js'
import { getJson, type KlinesData } from '../helpers/server.js'
import { readAlphaVantage } from '../reference/alphavantage.js'
import { hikyuuReference, readBaostock, readTushareCloses } from '../reference/cn.js'
import { LEAN } from '../reference/lean.js'

export const REAL_DATA_SKIP = requires(
  data('cn/baostock_raw_daily'),
  data('cn/tushare_qfq_daily'),
  data(LEAN),
  data('us-lean/reference'),
  data('cn/hikyuu_test_data'),
).missing
/**
 * Hikyuu's SH600000 history goes in under another code: Baostock's 600000.SH is already there, with
 * ex-factors derived from prev_close rather than from corporate actions.
 */
export const HIKYUU_SYMBOL = '600999.SH'
/** The symbols loadRealData imports. */
export const REAL_DATA_SYMBOLS = ['600000.SH', 'AAPL.US', HIKYUU_SYMBOL] as const

/** Hikyuu's raw daily bars and its corporate actions (送/转增 both bonus shares, per 10 -> per share), as mdq's CSV files. */
function hikyuuCsvs(dir: string): { bars: string; actions: string } {
  const day = (d: string) => `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`
  const [, ...bars] = readLines('cn/hikyuu_test_data/csv/day_raw_SH600000.csv')
  const [, ...actions] = readLines('cn/hikyuu_test_data/csv/stkweight_SH600000.csv')
  return {
    bars: writeCsv(
      join(dir, 'hikyuu-bars.csv'),
      'symbol,time,open,high,low,close,volume,amount',
      bars.map((l) => {
        const [date, o, h, lo, c, amountK, lots] = l.split(',')
        return `${HIKYUU_SYMBOL},${day(date)},${o},${h},${lo},${c},${Number(lots) * 100},${Number(amountK) * 1000}`
      }),
    ),
    // Rows without any action (the listing day's share counts) are no events.
    actions: writeCsv(
      join(dir, 'hikyuu-actions.csv'),
      'symbol,ex_date,cash_dividend,bonus_ratio,rights_ratio,rights_price,split_ratio',
      actions.flatMap((l) => {
        const f = l.split(',')
        const [gift, rights, rightsPrice, cash, transfer] = f.slice(4, 9).map(Number)
        if (gift + rights + cash + transfer === 0) return []
        return [`${HIKYUU_SYMBOL},${day(f[3])},${cash / 10},${(gift + transfer) / 10},${rights / 10},${rightsPrice},1`]
      }),
    ),
  }
}

/** Imports the suite's data into `store` (a --store URL) through the mdq CLI. */
export function loadRealData(store: string): void {
  const { dir, cleanup } = tempDir()
  const mdq = (args: string[]) => {
    const r = runMdq(['--store', store, ...args])
    assert.equal(r.status, 0, r.stderr)
  }
  try {
    const rows = readBaostock('600000').filter((r) => r.traded)
    mdq([
      'import',
      'bars',
      writeCsv(
        join(dir, 'cn.csv'),
        'symbol,time,open,high,low,close,volume,amount,prev_close',
        rows.map(
          (r) =>
            `600000.SH,${r.date},${r.open},${r.high},${r.low},${r.close},${r.volumeShares},${r.amount},${r.preclose}`,
        ),
      ),
      '--derive-ex-factors',
    ])
    const us = writeCsv(
      join(dir, 'aapl.csv'),
      'time,open,high,low,close,volume',
      readLines(`${LEAN}/daily/aapl.csv`).map((l) => {
        const [stamp, ...rest] = l.split(',')
        return `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)},${rest.join(',')}`
      }),
    )
    mdq(['import', 'bars', us, '--symbol', 'AAPL.US', '--price-scale', '10000'])
    // AAPL's ex-factors from the LEAN factor file: f = factor_(i+1) / factor_i on the next trading day.
    const days = new Set(readLines(`${LEAN}/daily/aapl.csv`).map((l) => l.slice(0, 8)))
    const sorted = [...days].sort()
    const factors = readLines(`${LEAN}/factor_files/aapl.csv`).map((l) => l.split(','))
    const events: string[] = []
    for (let i = 0; i + 1 < factors.length; i++) {
      const f =
        (Number(factors[i + 1][1]) * Number(factors[i + 1][2])) / (Number(factors[i][1]) * Number(factors[i][2]))
      const ex = sorted.find((d) => d > factors[i][0])
      if (ex && Math.abs(f - 1) > 1e-12)
        events.push(`AAPL.US,${ex.slice(0, 4)}-${ex.slice(4, 6)}-${ex.slice(6, 8)},${f}`)
    }
    mdq(['import', 'ex-factors', writeCsv(join(dir, 'ef.csv'), 'symbol,ex_date,ex_factor', events)])
    // The actions' P (the close before each ex-date) is read from the bars already committed.
    const hikyuu = hikyuuCsvs(dir)
    mdq(['import', 'bars', hikyuu.bars])
    mdq(['import', 'actions', hikyuu.actions])
  } finally {
    cleanup()
  }
}

export function realDataSuite(server: DeploymentHandle): void {
  const { it } = server
  const klines = async (q: string) =>
    (await getJson<{ data: KlinesData }>(`${server.url}/v1/klines?${q}`, { headers: { 'X-API-Key': server.key } })).body
      .data

  it('600000.SH forward closes / Tushare qfq closes stay constant (<= 9e-4, measured 8.24e-4), paged through end_time', async () => {
    const closes = new Map<number, number>()
    let end = ''
    for (;;) {
      const d = await klines(`symbol=600000.SH&count=500&adjust=forward${end}`)
      if (d.timestamp.length === 0) break
      d.timestamp.forEach((t, i) => closes.set(t, d.close[i]))
      end = `&end_time=${d.timestamp[0] - 1}`
    }
    const qfq = readTushareCloses('600000')
    const ratios = [...closes].filter(([t]) => qfq.has(t)).map(([t, c]) => c / qfq.get(t)!)
    assert.ok(ratios.length > 1200)
    const dev = maxDeviationFromConstant(ratios)
    console.log(`600000.SH over HTTP: forward/qfq max relative deviation ${dev.toExponential(2)}`)
    assert.ok(dev <= 9e-4, String(dev))
  })

  it('AAPL.US forward/raw per day = Alpha Vantage adjusted_close/close per day x constant (<= 2.5e-4, measured 2.24e-4; 2000-2020)', async () => {
    const fwd = await klines('symbol=AAPL.US&count=10000&adjust=forward')
    const raw = await klines('symbol=AAPL.US&count=10000&adjust=none')
    assert.deepEqual(fwd.timestamp, raw.timestamp)
    const av = new Map(readAlphaVantage('AAPL').map((r) => [MARKETS.US.zone.midnightUtc(r.day), r]))
    const ratios: number[] = []
    fwd.timestamp.forEach((t, i) => {
      const ref = av.get(t)
      if (ref && ref.date >= '2000-01-01' && ref.date <= '2020-12-31' && raw.close[i] > 5)
        ratios.push(fwd.close[i] / raw.close[i] / (ref.adjustedClose / ref.close))
    })
    assert.ok(ratios.length > 5000)
    const dev = maxDeviationFromConstant(ratios)
    console.log(`AAPL.US over HTTP: factor deviation ${dev.toExponential(2)}`)
    assert.ok(dev <= 2.5e-4, `deviation ${dev}`)
  })

  it('backward keeps the earliest bar raw; 1w and 1M aggregate the adjusted daily bars', async () => {
    const bwd = await klines('symbol=AAPL.US&count=10000&adjust=backward')
    const raw = await klines('symbol=AAPL.US&count=10000&adjust=none')
    assert.equal(bwd.close[0], raw.close[0])
    for (const period of ['1w', '1M'] as const) {
      const agg = await klines(`symbol=AAPL.US&period=${period}&count=3&adjust=forward`)
      const daily = await klines(
        `symbol=AAPL.US&count=100&adjust=forward&start_time=${agg.timestamp[1]}&end_time=${agg.timestamp[2] - 1}`,
      )
      assert.ok(daily.timestamp.length >= (period === '1w' ? 3 : 15), `${period}: daily bars inside the middle bar`)
      assert.equal(agg.open[1], daily.open[0], `${period} open`)
      assert.equal(agg.high[1], Math.max(...daily.high), `${period} high`)
      assert.equal(agg.low[1], Math.min(...daily.low), `${period} low`)
      assert.equal(agg.close[1], daily.close[daily.close.length - 1], `${period} close`)
      assert.equal(
        agg.volume[1],
        daily.volume.reduce((a, b) => a + b, 0),
        `${period} volume`,
      )
    }
  })

  // At the store level the adjusted prices are within 5.2e-6 (forward) and 1.9e-6 (backward) of
  // Hikyuu's; rounded to the wire's 4 decimals, as Hikyuu prints them, all 40 are equal (measured).
  for (const [hikyuuMode, adjust] of [
    ['EQUAL_FORWARD', 'forward'],
    ['EQUAL_BACKWARD', 'backward'],
  ] as const) {
    it(`${HIKYUU_SYMBOL} (Hikyuu's 600000) ${adjust} from its corporate actions: OHLC equal to Hikyuu ${hikyuuMode}'s 4 decimals`, async () => {
      const d = await klines(`symbol=${HIKYUU_SYMBOL}&count=10000&adjust=${adjust}`)
      assert.equal(d.timestamp.length, 2836)
      const refs = hikyuuReference().filter((r) => r.mode === hikyuuMode)
      assert.equal(refs.length, 5)
      for (const ref of refs) {
        const i = d.timestamp.indexOf(ref.timestamp)
        assert.ok(i >= 0, `bar ${ref.date}`)
        for (const f of ['open', 'high', 'low', 'close'] as const) assert.equal(d[f][i], ref[f], `${ref.date} ${f}`)
      }
    })
  }
}
