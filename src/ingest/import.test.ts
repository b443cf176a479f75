import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { barCount } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../../test/helpers/store-files.js'
import { importFile } from './import-file.js'
import type { BarImportOptions } from './bars-import.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'store.db')
const daily: BarImportOptions = {
  period: '1d',
  stamp: 'start',
  priceScale: 1,
  outsideSessions: 'abort',
  deriveExFactors: false,
}
const minute: BarImportOptions = { ...daily, period: '1m' }
const BARS = 'symbol,time,open,high,low,close,volume,amount,prev_close'

async function withStore<T>(fn: (s: SqliteMarketStore) => Promise<T>): Promise<T> {
  const store = SqliteMarketStore.open(db)
  try {
    return await fn(store)
  } finally {
    await store.close()
  }
}

describe('imports', () => {
  before(async () => {
    writeCsv(
      join(dir, 'instruments.csv'),
      'symbol,name,type,listing_date,tick_size,total_shares,float_shares,limit_up,limit_down',
      ['600000.sh,浦发银行,stock,1999-11-10,0.01,100,80,11,9', 'AAPL.US,"Apple, Inc.",stock,1980-12-12,0.01,,,,'],
    )
    writeCsv(join(dir, 'daily.csv'), BARS, [
      '600000.SH,2024-01-02,10,10.5,9.9,10.2,1000,10200.5,',
      '600000.SH,2024-01-03,10.2,10.4,10,10.3,900,,10.2',
      '600000.SH,2024-01-04,9,9.5,8.9,9.2,800,7400,9.1',
    ])
    writeCsv(join(dir, 'minute.csv'), 'time,open,high,low,close,volume', [
      '2024-01-02 09:30,10,10.1,9.9,10,5',
      '2024-01-02 14:59,10,10,10,10,1',
    ])
    await withStore(async (s) => {
      await importFile(s, 'instruments', join(dir, 'instruments.csv'), daily)
      await importFile(s, 'bars', join(dir, 'daily.csv'), { ...daily, deriveExFactors: true })
      await importFile(s, 'bars', join(dir, 'minute.csv'), { ...minute, symbol: '600000.SH' })
    })
  })

  it('imports instruments, bars (with a derived ex-factor) and minute bars', async () => {
    await withStore(async (s) => {
      const [pf, aapl] = await s.readInstruments(['600000.SH', 'AAPL.US'])
      assert.equal(pf.name, '浦发银行')
      assert.equal(pf.limitUp, 11)
      assert.equal(aapl.name, 'Apple, Inc.')
      assert.equal(aapl.totalShares, null)
      const bars = await s.readBars({ symbol: '600000.SH', period: '1d', limit: 10 })
      assert.deepEqual(Array.from(bars.close), [10.2, 10.3, 9.2])
      assert.ok(Number.isNaN(bars.prevClose[0]))
      assert.deepEqual(Array.from(bars.amount), [10200.5, 0, 7400])
      const events = (await s.readExFactors(['600000.SH'])).get('600000.SH')
      assert.deepEqual(events, [{ timestamp: bars.timestamp[2], exFactor: 10.3 / 9.1 }])
      assert.equal(barCount(await s.readBars({ symbol: '600000.SH', period: '1m', limit: 10 })), 2)
    })
  })

  it('an instruments file sets the fields of its columns and keeps the stored ones of the columns it lacks', async () => {
    const before = dumpStore(db, { withMeta: false })
    const lots = writeCsv(join(dir, 'lots.csv'), 'symbol,lot_size,limit_up', ['600000.SH,200,'])
    await withStore(async (s) => {
      const [was] = await s.readInstruments(['600000.SH'])
      await importFile(s, 'instruments', lots, daily)
      const [now] = await s.readInstruments(['600000.SH'])
      // lot_size set, limit_up cleared (an empty field), every other field as stored.
      assert.deepEqual(now, { ...was, lotSize: 200, limitUp: null })
      assert.equal(now.name, '浦发银行')
    })
    // Put back as it was for the tests after this one.
    await withStore((s) => importFile(s, 'instruments', join(dir, 'instruments.csv'), daily))
    await withStore(async (s) => {
      const cleared = writeCsv(join(dir, 'lots-back.csv'), 'symbol,lot_size', ['600000.SH,'])
      await importFile(s, 'instruments', cleared, daily)
    })
    assert.equal(dumpStore(db, { withMeta: false }), before)
  })

  it('text that is not UTF-8 (a GBK file) aborts naming file:line:column, and stores nothing', async () => {
    const gbk = join(dir, 'gbk.csv')
    // 浦发银行 in GBK: bytes that are not UTF-8.
    writeFileSync(
      gbk,
      Buffer.concat([
        Buffer.from('symbol,name\n600000.SH,'),
        Buffer.from([0xc6, 0xd6, 0xb7, 0xa2, 0xd2, 0xf8, 0xd0, 0xd0]),
        Buffer.from('\n'),
      ]),
    )
    const before = dumpStore(db)
    await withStore(async (s) => {
      const err = await importFile(s, 'instruments', gbk, daily).then(
        () => assert.fail('the import should fail'),
        (e: unknown) => e,
      )
      assert.ok(err instanceof MdqError, String(err))
      assert.match(err.message, /gbk\.csv:2:2: is not UTF-8 text \(files are read as UTF-8: convert it first/)
    })
    assert.equal(dumpStore(db), before)
  })

  it('importing the same rows again changes nothing', async () => {
    const before = dumpStore(db, { withMeta: false })
    await withStore(async (s) => {
      await importFile(s, 'bars', join(dir, 'daily.csv'), { ...daily, deriveExFactors: true })
      await importFile(s, 'instruments', join(dir, 'instruments.csv'), daily)
    })
    assert.equal(dumpStore(db, { withMeta: false }), before)
  })

  const bad: [
    string,
    string,
    readonly string[],
    BarImportOptions | 'instruments' | 'ex-factors' | 'actions',
    RegExp,
  ][] = [
    [
      'malformed number',
      BARS,
      ['600000.SH,2024-01-05,10,10.5x,9.9,10.2,1000,,'],
      daily,
      /:2:4: high '10.5x' is not a number/,
    ],
    ['empty required number', BARS, ['600000.SH,2024-01-05,,10.5,9.9,10.2,1000,,'], daily, /:2:3: open is required/],
    ['high below low', BARS, ['600000.SH,2024-01-05,10,9.8,9.9,9.9,1000,,'], daily, /:2:4: high 9.8 is below low 9.9/],
    ['close above high', BARS, ['600000.SH,2024-01-05,10,10.5,9.9,10.6,1000,,'], daily, /:2:6: close 10.6 is outside/],
    ['negative volume', BARS, ['600000.SH,2024-01-05,10,10.5,9.9,10.2,-1,,'], daily, /:2:7: volume -1 is negative/],
    [
      'weekend date',
      BARS,
      ['600000.SH,2024-01-05,10,10.5,9.9,10.2,1,,', '600000.SH,2024-01-06,10,10.5,9.9,10.2,1,,'],
      daily,
      /:3:2: 2024-01-06 falls on a weekend/,
    ],
    ['unknown exchange', BARS, ['600000.XX,2024-01-05,10,10.5,9.9,10.2,1,,'], daily, /:2:1: unknown exchange 'XX'/],
    [
      'malformed time',
      BARS,
      ['600000.SH,05/01/2024,10,10.5,9.9,10.2,1,,'],
      daily,
      /:2:2: time '05\/01\/2024' is neither/,
    ],
    [
      'minute bar outside sessions',
      BARS,
      ['600000.SH,2024-01-05 09:30,10,10.5,9.9,10.2,1,,', '600000.SH,2024-01-05 11:30,10,10.5,9.9,10.2,1,,'],
      minute,
      /:3:2: bar at 2024-01-05 11:30 is outside the regular sessions of SH/,
    ],
    [
      'minute rows read as daily (no --period 1m)',
      BARS,
      ['600000.SH,2024-01-05 09:30,10,10.5,9.9,10.2,1,,', '600000.SH,2024-01-05 09:31,10,10.5,9.9,10.2,1,,'],
      daily,
      /:3:2: a second 600000.SH bar on 2024-01-05 at another time \(2024-01-05 09:31\): a daily file holds one bar a day \(for minute bars give --period 1m\)/,
    ],
    [
      'missing column',
      'symbol,time,open,high,low,volume',
      ['600000.SH,2024-01-05,10,10.5,9.9,1'],
      daily,
      /:1:1: the header does not fit a bars file: missing column 'close'/,
    ],
    [
      'unknown symbol for ex-factors',
      'symbol,ex_date,ex_factor',
      ['600000.SH,2024-01-03,1.1', '600519.SH,2024-01-03,1.1'],
      'ex-factors',
      /:3:1: unknown symbol 600519.SH/,
    ],
    [
      'bad ex_date',
      'symbol,ex_date,ex_factor',
      ['600000.SH,2024-02-30,1.1'],
      'ex-factors',
      /:2:2: ex_date '2024-02-30' is not a calendar date/,
    ],
    [
      'non-positive ex_factor',
      'symbol,ex_date,ex_factor',
      ['600000.SH,2024-01-03,0'],
      'ex-factors',
      /:2:2: the ex-factor of this row is 0/,
    ],
    [
      'unknown security type',
      'symbol,type',
      ['600000.SH,stonk'],
      'instruments',
      /:2:2: type 'stonk' is not one of stock, etf/,
    ],
    [
      'rights issue without its price',
      'symbol,ex_date,rights_ratio,rights_price',
      ['600000.SH,2024-01-04,0.3,'],
      'actions',
      /:2:3: a rights issue needs its rights_price/,
    ],
    [
      'action with no bar before it',
      'symbol,ex_date,cash_dividend',
      ['600000.SH,2020-01-03,0.1'],
      'actions',
      /:2:2: no daily bar of 600000.SH before this ex_date/,
    ],
  ]
  for (const [name, header, rows, kind, message] of bad) {
    it(`a bad file (${name}) aborts naming file:line:column and leaves the store byte-for-byte as it was`, async () => {
      const file = writeCsv(join(dir, `bad-${name.replace(/\W+/g, '-')}.csv`), header, rows)
      const before = dumpStore(db)
      await withStore(async (s) => {
        const err = await importFile(
          s,
          typeof kind === 'string' ? kind : 'bars',
          file,
          typeof kind === 'string' ? daily : kind,
        ).then(
          () => assert.fail('the import should fail'),
          (e: unknown) => e,
        )
        assert.ok(err instanceof MdqError, String(err))
        assert.ok(err.message.startsWith(file), err.message)
        assert.match(err.message, message)
      })
      assert.equal(dumpStore(db), before)
    })
  }

  it('--outside-sessions skip drops such bars and reports how many; --stamp end shifts to bar starts', async () => {
    const file = writeCsv(join(dir, 'mixed.csv'), 'time,open,high,low,close,volume', [
      '2024-01-05 09:25,1,1,1,1,1',
      '2024-01-05 09:31,1,1,1,1,1',
      '2024-01-05 15:00,1,1,1,1,1',
      '2024-01-05 15:01,1,1,1,1,1',
    ])
    await withStore(async (s) => {
      const summary = await importFile(s, 'bars', file, {
        ...minute,
        symbol: '000001.SZ',
        stamp: 'end',
        outsideSessions: 'skip',
      })
      assert.equal(summary.rows, 4)
      assert.equal(summary.skipped, 2)
      const bars = await s.readBars({ symbol: '000001.SZ', period: '1m', limit: 10 })
      assert.deepEqual(
        Array.from(bars.timestamp, (t) => new Date(t).toISOString()),
        ['2024-01-05T01:30:00.000Z', '2024-01-05T06:59:00.000Z'],
      )
    })
  })

  it('actions become ex-factors with the exchange formula, P = the last raw close before the ex-date', async () => {
    const file = writeCsv(
      join(dir, 'actions.csv'),
      'symbol,ex_date,cash_dividend,bonus_ratio,rights_ratio,rights_price,split_ratio',
      ['600000.SH,2024-01-04,0.16,0.3,,,'],
    )
    await withStore(async (s) => {
      await importFile(s, 'actions', file, daily)
      const events = (await s.readExFactors(['600000.SH'])).get('600000.SH')!
      assert.equal(events.length, 1)
      assert.equal(events[0].exFactor, 10.3 / ((10.3 - 0.16) / 1.3))
    })
  })

  it('the CLI prints a one-line summary and exits 1 with file:line:column on a bad row', () => {
    const ok = runMdq(['--db', db, 'import', 'bars', join(dir, 'daily.csv')])
    assert.equal(ok.status, 0, ok.stderr)
    assert.match(ok.stdout, /^imported bars: 3 rows, 1 symbols, from .* in \d+\.\d\d s \([\d,]+ rows\/s\)\n$/)
    const badFile = writeCsv(join(dir, 'cli-bad.csv'), BARS, ['600000.SH,2024-01-05,1,1,1,1,-5,,'])
    const bad = runMdq(['--db', db, 'import', 'bars', badFile])
    assert.equal(bad.status, 1)
    assert.equal(bad.stderr, `mdq: ${badFile}:2:7: volume -5 is negative\n`)
  })
})
