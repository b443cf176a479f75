// `--format tushare` and `--format baostock` on the real CN files: stored bars, units and ex-factors
// against the Baostock and Tushare files themselves (../shared/data/cn/README.md).
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe } from 'node:test'
import { barCount } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { data, requires } from '../helpers/requirements.js'
import { readLines, sharedPath } from '../helpers/shared-data.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'
import { baostockBars, CN_CODES, readBaostock } from '../reference/cn.js'

const SH = MARKETS.SH.zone
const { dir, cleanup } = tempDir()
after(cleanup)
const baostockFile = (code: string) => sharedPath(`cn/baostock_raw_daily/sh.${code}.csv`)

function mdq(db: string, args: string[]) {
  return runMdq(['--db', db, ...args])
}

function mdqOk(db: string, args: string[]): string {
  const r = mdq(db, args)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

async function readBack(db: string, symbol: string) {
  const store = SqliteMarketStore.open(db)
  try {
    const bars = await store.readBars({ symbol, period: '1d', limit: 100_000 })
    const events = (await store.readExFactors([symbol])).get(symbol) ?? []
    return { bars, events }
  } finally {
    await store.close()
  }
}

describe('--format baostock: query_history_k_data_plus daily files as they come', () => {
  const need = requires(data('cn/baostock_raw_daily'))
  const db = join(dir, 'baostock.db')

  need.it('every traded day of the three files is stored as Baostock gives it (shares, CNY, preclose)', async () => {
    for (const code of CN_CODES) {
      const out = mdqOk(db, ['import', 'bars', baostockFile(code), '--format', 'baostock', '--derive-ex-factors'])
      const suspended = readBaostock(code).filter((r) => !r.traded).length
      assert.match(out, suspended ? new RegExp(`${suspended} suspended days`) : /^(?!.*suspended)/)
      const expected = baostockBars(code)
      const { bars } = await readBack(db, `${code}.SH`)
      assert.equal(barCount(bars), barCount(expected))
      for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prevClose'] as const)
        assert.deepEqual(Array.from(bars[f]), Array.from(expected[f]), `${code} ${f}`)
    }
  })

  need.it(
    "600519.SH's 2020-06-24 dividend: preclose 1457.48 after a close of 1474.50 (the README's example)",
    async () => {
      const { bars, events } = await readBack(db, '600519.SH')
      const day = SH.midnightUtc(SH.localDay(Date.UTC(2020, 5, 24, 4)))
      const i = Array.from(bars.timestamp).indexOf(day)
      assert.equal(bars.prevClose[i], 1457.48)
      assert.equal(bars.close[i - 1], 1474.5)
      const event = events.find((e) => e.timestamp === day)
      assert.ok(event, 'an ex-factor on 2020-06-24')
      assert.ok(Math.abs(event.exFactor - 1474.5 / 1457.48) < 1e-12, String(event.exFactor))
    },
  )

  need.it('a forward-adjusted file (adjustflag 2) is refused at the row, naming adjustflag; nothing stored', () => {
    const lines = readFileSync(baostockFile('600000'), 'utf8').split('\n')
    const header = lines[0].split(',')
    const at = header.indexOf('adjustflag')
    const row = lines[5].split(',')
    row[at] = '2'
    lines[5] = row.join(',')
    const file = join(dir, 'qfq.csv')
    writeFileSync(file, lines.join('\n'))
    const fresh = join(dir, 'refused.db')
    mdqOk(fresh, ['import', 'instruments', writeCsv(join(dir, 'i.csv'), 'symbol', ['600000.SH'])])
    const before = dumpStore(fresh)
    const r = mdq(fresh, ['import', 'bars', file, '--format', 'baostock'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, new RegExp(`qfq.csv:6:${at + 1}: adjustflag 2 \\(forward-adjusted\\)`))
    assert.equal(dumpStore(fresh), before)
  })
})

/** Tushare's daily shape built from the real files: Baostock's raw prices and amount (in thousands), Tushare's own vol (lots, as its file has them), newest first as Tushare serves. */
function tushareDaily(code: string): { file: string; lots: Map<string, string> } {
  const [, ...tushare] = readLines(`cn/tushare_qfq_daily/${code}.csv`)
  const lots = new Map(tushare.map((l) => [l.split(',')[0], l.split(',')[5]]))
  const thousands = (amount: string) => {
    const [whole, frac = ''] = amount.split('.')
    return `${whole.slice(0, -3) || '0'}.${whole.slice(-3).padStart(3, '0')}${frac}`
  }
  const [head, ...lines] = readLines(`cn/baostock_raw_daily/sh.${code}.csv`)
  const col = Object.fromEntries(head.split(',').map((n, i) => [n, i]))
  const rows = lines
    .map((l) => l.split(','))
    .filter((f) => f[col.tradestatus] === '1' && lots.has(f[col.date]))
    .map((f) => {
      const date = f[col.date].replaceAll('-', '')
      const [o, h, lo, c, pc] = [f[col.open], f[col.high], f[col.low], f[col.close], f[col.preclose]]
      const change = (Number(c) - Number(pc)).toFixed(2)
      return `${code}.SH,${date},${o},${h},${lo},${c},${pc},${change},0.0,${lots.get(f[col.date])},${thousands(f[col.amount])}`
    })
    .reverse()
  const file = writeCsv(
    join(dir, `tushare-${code}.csv`),
    'ts_code,trade_date,open,high,low,close,pre_close,change,pct_chg,vol,amount',
    rows,
  )
  return { file, lots }
}

describe('--format tushare: daily bars, adj_factor, statements', () => {
  const need = requires(data('cn/tushare_qfq_daily'), data('cn/baostock_raw_daily'))
  const db = join(dir, 'tushare.db')

  need.it(
    "vol in lots of 100 and amount in thousands are stored as shares and CNY (Tushare's lots x 100 = Baostock's shares)",
    async () => {
      for (const code of CN_CODES) {
        const { file } = tushareDaily(code)
        mdqOk(db, ['import', 'bars', file, '--format', 'tushare'])
        const expected = baostockBars(code)
        const { bars } = await readBack(db, `${code}.SH`)
        assert.equal(barCount(bars), barCount(expected))
        for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'amount', 'prevClose'] as const)
          assert.deepEqual(Array.from(bars[f]), Array.from(expected[f]), `${code} ${f}`)
        // The two vendors' volumes agree to the share on every day but one (Tushare 2806694.63 lots, Baostock 280669456).
        const differs = Array.from(bars.volume).flatMap((v, i) =>
          v === expected.volume[i] ? [] : [[SH.isoDate(bars.timestamp[i]), v]],
        )
        assert.deepEqual(differs, code === '601318' ? [['2020-07-06', 280669463]] : [], code)
      }
    },
  )

  need.it('adj_factor (newest first) becomes one ex-factor per change: F(t) / F(previous day)', async () => {
    // Tushare's F(t) is the product of close(e-1) / preclose(e) over ex-dates e <= t (README): built so from Baostock.
    const rows = readBaostock('600519').filter((r) => r.traded)
    let f = 1
    const expected: [string, number][] = []
    const adj = rows.map((r, i) => {
      if (i > 0 && r.preclose !== rows[i - 1].close) {
        f *= rows[i - 1].close / r.preclose
        expected.push([r.date, rows[i - 1].close / r.preclose])
      }
      return `600519.SH,${r.date.replaceAll('-', '')},${f}`
    })
    mdqOk(db, [
      'import',
      'ex-factors',
      writeCsv(join(dir, 'adj.csv'), 'ts_code,trade_date,adj_factor', adj.reverse()),
      '--format',
      'tushare',
    ])
    const { events } = await readBack(db, '600519.SH')
    assert.ok(expected.length >= 5, `${expected.length} events`)
    assert.deepEqual(
      events.map((e) => SH.isoDate(e.timestamp)),
      expected.map(([d]) => d),
    )
    events.forEach((e, i) => assert.ok(Math.abs(e.exFactor / expected[i][1] - 1) < 1e-11, `${expected[i][0]}`))
  })

  need.it('a file of another shape names the columns a Tushare daily file has; nothing stored', () => {
    const before = dumpStore(db)
    const r = mdq(db, ['import', 'bars', sharedPath('cn/tushare_qfq_daily/600519.csv'), '--format', 'tushare'])
    assert.equal(r.status, 1)
    assert.match(
      r.stderr,
      /600519\.csv:1:1: not a Tushare daily bars file: missing columns ts_code, trade_date, vol \(expected ts_code, trade_date, open, high, low, close, vol, optionally amount, pre_close; header: date,open,close,high,low,volume\)/,
    )
    assert.equal(dumpStore(db), before)
  })

  need.it('a vol that is not a plain decimal points at its line and column of the Tushare file; nothing stored', () => {
    const before = dumpStore(db)
    const file = writeCsv(join(dir, 'bad-vol.csv'), 'ts_code,trade_date,open,high,low,close,pre_close,vol,amount', [
      '600519.SH,20250408,1500,1510,1490,1505,1500,100.5,150000',
      '600519.SH,20250409,1500,1510,1490,1505,1500,1e3,150000',
    ])
    const r = mdq(db, ['import', 'bars', file, '--format', 'tushare'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /bad-vol\.csv:3:8: vol \(lots of 100 shares\) '1e3' is not a plain decimal number/)
    assert.equal(dumpStore(db), before)
  })
})
