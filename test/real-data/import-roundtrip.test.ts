// Real data through `mdq import` and back out of the store: LEAN SPY/AAPL daily and minute, Baostock 600000.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe } from 'node:test'
import { barCount } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { readLines } from '../helpers/shared-data.js'
import { data, requires } from '../helpers/requirements.js'
import { runMdq, tempDir, writeCsv } from '../helpers/store-files.js'
import { baostockBars, readBaostock } from '../reference/cn.js'
import { LEAN, LEAN_MINUTE_DAYS, readLeanBars, readLeanMinuteDay } from '../reference/lean.js'

const NY = MARKETS.US.zone
const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'real.db')
const hhmm = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`

function mdqOk(args: string[]): string {
  const r = runMdq(['--db', db, ...args])
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

describe('LEAN bars round-trip through mdq import (--price-scale 10000)', () => {
  const need = requires(data(LEAN))
  for (const ticker of ['spy', 'aapl'] as const) {
    const symbol = `${ticker.toUpperCase()}.US`
    need.it(`${symbol} daily: every bar reads back equal to the source`, async () => {
      // The LEAN file as an import CSV: local dates, prices still in deci-cents.
      const rows = readLines(`${LEAN}/daily/${ticker}.csv`).map((l) => {
        const [stamp, ...rest] = l.split(',')
        return `${symbol},${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)},${rest.join(',')}`
      })
      const file = writeCsv(join(dir, `${ticker}-daily.csv`), 'symbol,time,open,high,low,close,volume', rows)
      assert.match(
        mdqOk(['import', 'bars', file, '--period', '1d', '--price-scale', '10000']),
        new RegExp(`${rows.length.toLocaleString('en-US')} rows`),
      )
      const source = readLeanBars('daily', ticker)
      const store = SqliteMarketStore.open(db)
      const back = await store.readBars({ symbol, period: '1d', limit: 100_000 })
      await store.close()
      assert.equal(barCount(back), barCount(source))
      for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'volume'] as const)
        assert.deepEqual(Array.from(back[f]), Array.from(source[f]), f)
    })

    need.it(`${symbol} minute: regular-session bars read back equal; extended hours skipped and counted`, async () => {
      let expected = 0
      let skipped = 0
      for (const ymd of LEAN_MINUTE_DAYS[ticker]) {
        const day = readLeanMinuteDay(ticker, ymd)
        const rows = readLines(`${LEAN}/minute/${ticker}/${ymd}_${ticker}_minute_trade.csv`).map((l) => {
          const [ms, ...rest] = l.split(',')
          return `${ymd.slice(0, 4)}-${ymd.slice(4, 6)}-${ymd.slice(6, 8)} ${hhmm(Number(ms) / 60_000)},${rest.join(',')}`
        })
        const file = writeCsv(join(dir, `${ticker}-${ymd}.csv`), 'time,open,high,low,close,volume', rows)
        const out = mdqOk([
          'import',
          'bars',
          file,
          '--period',
          '1m',
          '--symbol',
          symbol,
          '--price-scale',
          '10000',
          '--outside-sessions',
          'skip',
        ])
        const regular = day.filter((r) => r.minute >= 570 && r.minute < 960)
        expected += regular.length
        skipped += day.length - regular.length
        assert.match(
          out,
          new RegExp(`\\(${(day.length - regular.length).toLocaleString('en-US')} skipped outside sessions\\)`),
        )
        const store = SqliteMarketStore.open(db)
        const back = await store.readBars({
          symbol,
          period: '1m',
          fromMs: regular[0].timestamp,
          toMs: regular[regular.length - 1].timestamp,
          limit: 10_000,
        })
        await store.close()
        assert.deepEqual(
          Array.from(back.timestamp),
          regular.map((r) => r.timestamp),
        )
        assert.deepEqual(
          Array.from(back.close),
          regular.map((r) => r.close),
        )
        assert.deepEqual(
          Array.from(back.volume),
          regular.map((r) => r.volume),
        )
      }
      assert.ok(expected > 1000 && skipped > 100)
      assert.equal(NY.name, 'America/New_York')
    })
  }
})

describe('Baostock 600000 daily round-trips with --derive-ex-factors', () => {
  const need = requires(data('cn/baostock_raw_daily'))
  need.it('bars read back equal; every derived event is close(previous day) / preclose(ex-date)', async () => {
    const rows = readBaostock('600000').filter((r) => r.traded)
    const file = writeCsv(
      join(dir, 'sh600000.csv'),
      'symbol,time,open,high,low,close,volume,amount,prev_close',
      rows.map(
        (r) =>
          `600000.SH,${r.date},${r.open},${r.high},${r.low},${r.close},${r.volumeShares},${r.amount},${r.preclose}`,
      ),
    )
    assert.match(mdqOk(['import', 'bars', file, '--derive-ex-factors']), /5 ex-factor events/)
    const store = SqliteMarketStore.open(db)
    const back = await store.readBars({ symbol: '600000.SH', period: '1d', limit: 10_000 })
    const events = (await store.readExFactors(['600000.SH'])).get('600000.SH')!
    await store.close()
    const source = baostockBars('600000')
    for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prevClose'] as const)
      assert.deepEqual(Array.from(back[f]), Array.from(source[f]), f)
    assert.equal(events.length, 5)
    for (const e of events) {
      const i = rows.findIndex((r) => r.date === MARKETS.SH.zone.isoDate(e.timestamp))
      assert.ok(i > 0)
      assert.equal(e.exFactor, rows[i - 1].close / rows[i].preclose)
      assert.notEqual(rows[i - 1].close, rows[i].preclose)
    }
  })
})
