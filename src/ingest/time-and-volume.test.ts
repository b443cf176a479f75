// Import of bar times and volumes: the compact YYYYMMDD forms as local dates, impossible dates and
// epochs outside 1970-2099 refused with file:line:column (never a bare RangeError), whole volumes.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MdqError } from '../domain/errors.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'
import { dumpStore, tempDir, writeCsv } from '../../test/helpers/store-files.js'
import type { BarImportOptions } from './bars-import.js'
import { importFile } from './import-file.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const daily: BarImportOptions = {
  period: '1d',
  stamp: 'start',
  priceScale: 1,
  outsideSessions: 'abort',
  deriveExFactors: false,
}
const minute: BarImportOptions = { ...daily, period: '1m' }
const HEADER = 'symbol,time,open,high,low,close,volume'
let files = 0

async function importRows(rows: readonly string[], opts: BarImportOptions, header = HEADER) {
  const db = join(dir, `t${++files}.db`)
  const file = writeCsv(join(dir, `t${files}.csv`), header, rows)
  const store = SqliteMarketStore.open(db)
  try {
    await importFile(store, 'bars', file, opts)
    return await store.readBars({ symbol: '600000.SH', period: opts.period, limit: 100 })
  } finally {
    await store.close()
  }
}

async function refused(
  rows: readonly string[],
  opts: BarImportOptions,
  message: RegExp,
  header = HEADER,
): Promise<void> {
  const db = join(dir, `r${++files}.db`)
  const file = writeCsv(join(dir, `r${files}.csv`), header, rows)
  const store = SqliteMarketStore.open(db)
  const before = dumpStore(db)
  try {
    const err = await importFile(store, 'bars', file, opts).then(
      () => assert.fail('the import should fail'),
      (e: unknown) => e,
    )
    assert.ok(err instanceof MdqError && err.code === 'BAD_IMPORT', String(err))
    assert.ok(err.message.startsWith(`${file}:`), err.message)
    assert.match(err.message, message)
  } finally {
    await store.close()
  }
  assert.equal(dumpStore(db), before)
}

const iso = (t: number) => new Date(t).toISOString()

describe('bar times on import', () => {
  it('reads YYYYMMDD (Tushare, Baostock, LEAN) as the local date, like YYYY-MM-DD', async () => {
    const bars = await importRows(['600000.SH,20240102,10,10,10,10,1', '600000.SH,2024-01-03,10,10,10,10,1'], daily)
    assert.deepEqual(Array.from(bars.timestamp, iso), ['2024-01-01T16:00:00.000Z', '2024-01-02T16:00:00.000Z'])
  })

  it('reads YYYYMMDD HH:MM as local minute times', async () => {
    const bars = await importRows(
      ['600000.SH,20240102 09:30,10,10,10,10,1', '600000.SH,20240102 14:59:00,10,10,10,10,1'],
      minute,
    )
    assert.deepEqual(Array.from(bars.timestamp, iso), ['2024-01-02T01:30:00.000Z', '2024-01-02T06:59:00.000Z'])
  })

  it('still reads epoch milliseconds', async () => {
    const bars = await importRows(['600000.SH,1704159000000,10,10,10,10,1'], minute)
    assert.deepEqual(Array.from(bars.timestamp, iso), ['2024-01-02T01:30:00.000Z'])
  })

  const bad: [string, string, RegExp, BarImportOptions?][] = [
    ['2024-02-30', 'an impossible dashed date', /:2:2: time '2024-02-30': 2024-02-30 is not a calendar date/],
    ['20240230', 'an impossible compact date', /:2:2: time '20240230': 2024-02-30 is not a calendar date/],
    ['20231301', 'month 13', /:2:2: time '20231301': 2023-13-01 is not a calendar date/],
    ['2023-02-29', 'February 29th of a common year', /:2:2: time '2023-02-29': 2023-02-29 is not a calendar date/],
    ['20240102 24:00', 'hour 24', /:2:2: time '20240102 24:00' is not a valid time of day/, minute],
    [
      '1704153600',
      'epoch seconds',
      /:2:2: time '1704153600' is too small for epoch milliseconds .*as epoch seconds: 2024-01-02T00:00:00.000Z/,
    ],
    ['946857600', 'epoch seconds of 2000', /:2:2: time '946857600' is too small for epoch milliseconds/],
    ['4102444800000', 'an epoch in 2100', /:2:2: time '4102444800000' as epoch milliseconds is after 2099/],
    [
      '9999999999999999',
      'an epoch beyond what a Date holds',
      /:2:2: time '9999999999999999' as epoch milliseconds is after 2099/,
    ],
    ['99999999999999999999', 'twenty digits', /:2:2: time '99999999999999999999' as epoch milliseconds is after 2099/],
    ['1969-12-31', 'a date before 1970', /:2:2: time '1969-12-31' is outside 1970-2099/],
    ['2100-01-04', 'a date after 2099', /:2:2: time '2100-01-04' is outside 1970-2099/],
  ]
  for (const [time, what, message, opts] of bad) {
    it(`refuses ${what} (${time}) with file:line:column, the store unchanged`, async () => {
      await refused([`600000.SH,${time},10,10,10,10,1`], opts ?? daily, message)
    })
  }
})

describe('volumes on import', () => {
  it('refuses a fractional volume and one beyond 2^53, naming the cell', async () => {
    await refused(
      ['600000.SH,2024-01-02,10,10,10,10,1', '600000.SH,2024-01-03,10,10,10,10,12.5'],
      daily,
      /:3:7: volume 12.5 is not a whole number/,
    )
    await refused(
      ['600000.SH,2024-01-02,10,10,10,10,9007199254740993'],
      daily,
      /:2:7: volume 9007199254740993 is not a whole number/,
    )
  })
})
