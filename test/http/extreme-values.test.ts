// Values at the edges of what an import takes, through the real CLI and a real `mdq serve`: beyond the
// bounds an import is refused naming the cell; at the bounds every period and adjust mode answers
// finite numbers, no null, no non-zero price written as 0.0, volumes and amounts summed exactly.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { civilFromDays, daysFromCivil, formatCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { MAX_AMOUNT, MAX_PRICE, MAX_VOLUME, MIN_PRICE } from '../../src/domain/value-bounds.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { dumpStore, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
const db = join(dir, 'extreme.db')
let files = 0
const BARS = 'symbol,time,open,high,low,close,volume,amount,prev_close'

function mdq(...args: string[]) {
  return runMdq(['--db', db, ...args])
}
function importOk(kind: string, header: string, rows: readonly string[], ...args: string[]): void {
  const file = join(dir, `ok${++files}.csv`)
  writeFileSync(file, [header, ...rows].join('\n') + '\n')
  const r = mdq('import', kind, file, ...args)
  assert.equal(r.status, 0, r.stderr)
}
function refused(kind: string, header: string, rows: readonly string[], message: RegExp, ...args: string[]): void {
  const file = join(dir, `bad${++files}.csv`)
  writeFileSync(file, [header, ...rows].join('\n') + '\n')
  const before = dumpStore(db)
  const r = mdq('import', kind, file, ...args)
  assert.equal(r.status, 1, `exit status; stdout: ${r.stdout}`)
  assert.match(r.stderr, message)
  assert.equal(dumpStore(db), before, 'the store is unchanged')
}

/** Every weekday of 2024, as YYYY-MM-DD. */
const WEEKDAYS = Array.from({ length: 366 }, (_, i) => daysFromCivil(2024, 1, 1) + i)
  .filter((d) => isoWeekday(d) < 5)
  .map((d) => formatCivil(civilFromDays(d)))
/** Amounts of the week of 2024-01-08 whose exact sum is 4419832049.68 (a float sum rounds it to ...049.680001 on the way out). */
const WEEK_AMOUNTS = ['883966409.94', '883966409.93', '883966409.93', '883966409.94', '883966409.94']

describe('values at and beyond the import bounds', () => {
  let server: ServeProcess
  let key: string
  before(async () => {
    importOk(
      'bars',
      BARS,
      WEEKDAYS.map((d, i) => {
        const amount = d >= '2024-01-08' && d <= '2024-01-12' ? WEEK_AMOUNTS[i - 5] : String(MAX_AMOUNT)
        return `600000.SH,${d},1,${MAX_PRICE},${MIN_PRICE},${i % 2 ? MAX_PRICE : MIN_PRICE},${MAX_VOLUME},${amount},`
      }),
    )
    // Two events moving prices by 10^14 each: 10^28 in all, inside the 10^30 a symbol's factors may span.
    importOk('ex-factors', 'symbol,ex_date,ex_factor', ['600000.SH,2024-03-01,1e14', '600000.SH,2024-09-02,1e14'])
    const us = MARKETS.US.zone
    const open = us.utcOf(2024, 1, 2, 9 * 60 + 30)
    importOk(
      'bars',
      BARS,
      Array.from(
        { length: 390 },
        (_, m) =>
          `AAPL.US,${open + m * 60_000},${MIN_PRICE},${MAX_PRICE},${MIN_PRICE},${MAX_PRICE},${MAX_VOLUME},${MAX_AMOUNT},`,
      ),
      '--period',
      '1m',
    )
    key = mdq('keys', 'create', '--name', 'extreme').stdout.trim()
    server = await spawnServe(['--db', db], ['--rate-limit', 'off', '--workers', '0'])
  })
  after(async () => {
    await server?.stop()
    cleanup()
  })

  const text = async (path: string) => {
    const res = await fetch(`${server.base}${path}`, { headers: { 'X-API-Key': key } })
    const body = await res.text()
    assert.equal(res.status, 200, body)
    return body
  }

  it('refuses prices, volumes, amounts and factors beyond the bounds, naming line and column', () => {
    const row = (o: string, h: string, l: string, c: string, v = '1', a = '', pc = '') =>
      `600519.SH,2024-01-03,${o},${h},${l},${c},${v},${a},${pc}`
    refused('bars', BARS, [row('1e308', '1e308', '1', '1')], /:2:4: high 1e\+308 is above 100000000, the largest price/)
    refused('bars', BARS, [row('1', '1.7e308', '1', '1')], /:2:4: high 1\.7e\+308 is above 100000000/)
    refused('bars', BARS, [row('5e-324', '1', '5e-324', '1')], /:2:5: low 5e-324 is below 0\.0001, the smallest price/)
    refused(
      'bars',
      BARS,
      [row('1', '1', '1', '1', '9007199254740991')],
      /:2:7: volume 9007199254740991 is not a whole number up to 10000000000000/,
    )
    refused('bars', BARS, [row('1', '1', '1', '1', '1', '1e308')], /:2:8: amount 1e\+308 is above the largest amount/)
    refused('bars', BARS, [row('1', '1', '1', '1', '1', '', '0.00001')], /:2:9: prev_close 0\.00001 is outside/)
    refused(
      'bars',
      'symbol,time,open,high,low,close,volume',
      ['SPY.US,2024-01-03,4700000000,4700000000,4700000000,4700000000,1'],
      /high 4700000000 is above 100000000, the largest price mdq keeps \(prices in deci-cents\? give --price-scale 10000\)/,
    )
    refused(
      'ex-factors',
      'symbol,ex_date,ex_factor',
      ['600000.SH,2024-06-03,1e300'],
      /:2:2: the ex-factors of 600000\.SH would move its prices by 10\^328\.0 .* more than the 10\^30/,
    )
    refused(
      'ex-factors',
      'symbol,ex_date,ex_factor',
      ['600000.SH,2024-06-03,2', '600000.SH,2024-06-04,1e-3'],
      /:3:2: the ex-factors of 600000\.SH would move its prices by 10\^31\.3 .*the largest here is 0\.001/,
    )
  })

  it('answers every period and adjust mode in finite numbers: no null, no non-zero price as 0.0, exact sums', async () => {
    const cases = [
      ...['1d', '1w', '1M', '1Q', '1Y'].map((period) => ['600000.SH', period] as const),
      ...['1m', '5m', '15m', '30m', '60m'].map((period) => ['AAPL.US', period] as const),
    ]
    for (const [symbol, period] of cases) {
      for (const adjust of ['none', 'forward', 'backward', 'forward_additive', 'backward_additive']) {
        const what = `${symbol} ${period} ${adjust}`
        const body = await text(`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=10000`)
        assert.doesNotMatch(body, /null/, what)
        const d = JSON.parse(body).data as Record<string, number[]>
        assert.ok(d.timestamp.length > 0, what)
        for (const field of ['open', 'high', 'low', 'close', 'prev_close'])
          for (const x of d[field]) {
            assert.ok(Number.isFinite(x), `${what} ${field} ${x}`)
            if (!adjust.endsWith('additive')) assert.ok(x > 0, `${what} ${field} ${x}`)
          }
        for (const [i, v] of d.volume.entries()) {
          assert.ok(Number.isSafeInteger(v) && v % MAX_VOLUME === 0, `${what} volume ${v}`)
          if (symbol === 'AAPL.US') assert.equal(d.amount[i], (v / MAX_VOLUME) * MAX_AMOUNT, `${what} amount`)
        }
      }
    }
    const forward = JSON.parse(await text('/v1/klines?symbol=600000.SH&adjust=forward&count=10000')).data
    const near = (x: number, y: number) => Math.abs(x / y - 1) < 1e-3
    assert.ok(near(forward.low[0], 1e-32), `the earliest low, divided by both factors, is not 0.0: ${forward.low[0]}`)
    const backward = JSON.parse(await text('/v1/klines?symbol=600000.SH&adjust=backward&count=1')).data
    assert.ok(near(backward.high[0], 1e36), `the latest high times both factors: ${backward.high[0]}`)
    const yearly = JSON.parse(await text('/v1/klines?symbol=600000.SH&period=1Y&adjust=none')).data
    assert.deepEqual(yearly.volume, [WEEKDAYS.length * MAX_VOLUME])
    const weekly = await text(
      '/v1/klines?symbol=600000.SH&period=1w&adjust=none&start_time=1704643200000&end_time=1704643200000',
    )
    assert.match(weekly, /"amount":\[4419832049\.68\]/)
    const quote = JSON.parse(await text('/v1/quotes?symbols=AAPL.US')).data[0]
    assert.equal(quote.volume, 390 * MAX_VOLUME)
    assert.equal(quote.amount, 390 * MAX_AMOUNT)
  })
})
