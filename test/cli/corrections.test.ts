// Corrections through the real CLI on a real store file, served by a running `mdq serve`:
// mdq delete bars | ex-factors | instruments and mdq import bars --replace, each all or nothing.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
const db = join(dir, 'corrections.db')
const BARS = 'symbol,time,open,high,low,close,volume,amount,prev_close'
/** Ten CN trading days of January 2024. */
const DAYS = [
  '2024-01-02',
  '2024-01-03',
  '2024-01-04',
  '2024-01-05',
  '2024-01-08',
  '2024-01-09',
  '2024-01-10',
  '2024-01-11',
  '2024-01-12',
  '2024-01-15',
]
const sh = MARKETS.SH.zone
const dayMs = (d: string) => sh.utcOf(Number(d.slice(0, 4)), Number(d.slice(5, 7)), Number(d.slice(8, 10)))
/** Close of day i of a symbol's synthetic history; each row's prev_close is the previous close (no events). */
const closeOf = (base: number, i: number) => base + i / 10
const dailyRows = (symbol: string, base: number) =>
  DAYS.map(
    (d, i) =>
      `${symbol},${d},${closeOf(base, i)},${closeOf(base, i) + 1},${closeOf(base, i) - 1},${closeOf(base, i)},1000,,${i === 0 ? '' : closeOf(base, i - 1)}`,
  )

function mdq(...args: string[]) {
  return runMdq(['--db', db, ...args])
}
function ok(...args: string[]): string {
  const r = mdq(...args)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}
async function read<T>(fn: (s: SqliteMarketStore) => Promise<T>): Promise<T> {
  const s = SqliteMarketStore.open(db, { readonly: true })
  try {
    return await fn(s)
  } finally {
    await s.close()
  }
}
const timestamps = (symbol: string, period: '1m' | '1d') =>
  read(async (s) => Array.from((await s.readBars({ symbol, period, limit: 1e6 })).timestamp))
const closes = (symbol: string) =>
  read(async (s) => Array.from((await s.readBars({ symbol, period: '1d', limit: 1e6 })).close))

describe('corrections through the CLI', () => {
  let server: ServeProcess
  let key: string
  before(async () => {
    writeCsv(join(dir, 'instruments.csv'), 'symbol,name', [
      '600000.SH,浦发银行',
      '000001.SZ,平安银行',
      '600519.SH,贵州茅台',
    ])
    writeCsv(join(dir, 'daily.csv'), BARS, [
      ...dailyRows('600000.SH', 10),
      ...dailyRows('000001.SZ', 20),
      ...dailyRows('600519.SH', 30),
    ])
    writeCsv(join(dir, 'minute.csv'), 'symbol,time,open,high,low,close,volume', [
      '600000.SH,2024-01-02 09:30,10,10,10,10,1',
      '600000.SH,2024-01-02 14:59,10,10,10,10,1',
      '600000.SH,2024-01-03 09:30,10,10,10,10,1',
      '600000.SH,2024-01-03 09:31,10,10,10,10,1',
    ])
    writeCsv(join(dir, 'events.csv'), 'symbol,ex_date,ex_factor', [
      '600000.SH,2024-01-05,1.1',
      '600000.SH,2024-01-10,1.2',
      '000001.SZ,2024-01-09,1.3',
    ])
    ok('import', 'instruments', join(dir, 'instruments.csv'))
    ok('import', 'bars', join(dir, 'daily.csv'))
    ok('import', 'bars', join(dir, 'minute.csv'), '--period', '1m')
    ok('import', 'ex-factors', join(dir, 'events.csv'))
    key = ok('keys', 'create', '--name', 'corrections').trim()
    server = await spawnServe(['--db', db], ['--rate-limit', 'off'])
  })
  after(async () => {
    await server?.stop()
    cleanup()
  })
  const klineDays = async (symbol: string) => {
    const r = await fetch(`${server.base}/v1/klines?symbol=${symbol}&period=1d&adjust=none&count=100`, {
      headers: { 'X-API-Key': key, Connection: 'close' },
    })
    assert.equal(r.status, 200)
    return ((await r.json()) as { data: { timestamp: number[] } }).data.timestamp
  }

  it('delete bars: exactly the inclusive range of one symbol and period (1d unless --period, as for import), with a summary, seen at once by a running server', async () => {
    assert.deepEqual(await klineDays('600000.SH'), DAYS.map(dayMs))
    assert.equal(
      ok('delete', 'bars', '--symbol', '600000.sh', '--from', '2024-01-04', '--to', '2024-01-05'),
      'deleted 2 1d bars of 600000.SH (2024-01-04 .. 2024-01-05)\n',
    )
    const left = DAYS.filter((d) => d !== '2024-01-04' && d !== '2024-01-05').map(dayMs)
    assert.deepEqual(await timestamps('600000.SH', '1d'), left)
    assert.deepEqual(await klineDays('600000.SH'), left)
    assert.deepEqual(await klineDays('000001.SZ'), DAYS.map(dayMs), 'other symbols untouched')
    assert.equal((await timestamps('600000.SH', '1m')).length, 4, 'other periods untouched')
  })

  it('delete bars: a bare --to date includes that whole day; epoch ms works as in import files; nothing matched is 0', async () => {
    assert.equal(
      ok('delete', 'bars', '--symbol', '600000.SH', '--period', '1m', '--to', '2024-01-02'),
      'deleted 2 1m bars of 600000.SH (the first .. 2024-01-02)\n',
    )
    const minute = sh.utcOf(2024, 1, 3, 9 * 60 + 31)
    assert.equal(
      ok('delete', 'bars', '--symbol', '600000.SH', '--period', '1m', '--from', String(minute)),
      `deleted 1 1m bars of 600000.SH (${minute} .. the last)\n`,
    )
    assert.deepEqual(await timestamps('600000.SH', '1m'), [sh.utcOf(2024, 1, 3, 9 * 60 + 30)])
    assert.equal(
      ok(
        'delete',
        'bars',
        '--symbol',
        '600000.SH',
        '--period',
        '1m',
        '--from',
        '2023-01-01 09:30',
        '--to',
        '2023-12-31',
      ),
      'deleted 0 1m bars of 600000.SH (2023-01-01 09:30 .. 2023-12-31)\n',
    )
  })

  it('delete ex-factors: the range of one symbol only', async () => {
    assert.equal(
      ok('delete', 'ex-factors', '--symbol', '600000.SH', '--from', '2024-01-06'),
      'deleted 1 ex-factor events of 600000.SH (2024-01-06 .. the last)\n',
    )
    const events = await read((s) => s.readExFactors(['600000.SH', '000001.SZ']))
    assert.deepEqual(events.get('600000.SH'), [{ timestamp: dayMs('2024-01-05'), exFactor: 1.1 }])
    assert.deepEqual(events.get('000001.SZ'), [{ timestamp: dayMs('2024-01-09'), exFactor: 1.3 }])
  })

  it('bad input is one clear line, exit 1, and changes nothing', () => {
    const before = dumpStore(db)
    const cases: [string[], RegExp][] = [
      [
        ['delete', 'bars', '--symbol', '600000.SH', '--period', '5m'],
        /argument '5m' is invalid\. Allowed choices are 1m, 1d/,
      ],
      [['delete', 'bars', '--symbol', '601988.SH'], /^mdq: unknown instrument 601988\.SH: nothing deleted\n$/],
      [
        ['delete', 'bars', '--symbol', '601988.SH', '--period', '1m', '--from', '2024-01-02'],
        /^mdq: unknown instrument 601988\.SH: nothing deleted\n$/,
      ],
      [['delete', 'ex-factors', '--symbol', 'AAPL.US'], /^mdq: unknown instrument AAPL\.US: nothing deleted\n$/],
      [['delete', 'bars', '--period', '1d'], /required option '--symbol <symbol>' not specified/],
      [
        ['delete', 'bars', '--symbol', '600000.SH', '--period', '1d', '--from', '2024-13-01'],
        /^mdq: --from: time '2024-13-01': 2024-13-01 is not a calendar date\n$/,
      ],
      [
        ['delete', 'bars', '--symbol', '600000.SH', '--period', '1d', '--to', 'yesterday'],
        /^mdq: --to: time 'yesterday' is neither epoch milliseconds nor a local/,
      ],
      [
        ['delete', 'bars', '--symbol', '600000.SH', '--period', '1d', '--from', '2024-01-10', '--to', '2024-01-09'],
        /^mdq: --from 2024-01-10 is after --to 2024-01-09\n$/,
      ],
      [
        ['delete', 'ex-factors', '--symbol', '600000'],
        /^mdq: Parameter '--symbol': '600000' is not of the form <code>\.<exchange>/,
      ],
      [['delete', 'instruments', '000001.SZ', '999999.SH'], /^mdq: unknown instrument 999999\.SH: nothing deleted/],
      [['delete', 'instruments'], /missing required argument 'symbols'/],
      [['import', 'ex-factors', join(dir, 'events.csv'), '--replace'], /--replace applies to bars and financials only/],
    ]
    for (const [args, expected] of cases) {
      const r = mdq(...args)
      assert.equal(r.status, 1, args.join(' '))
      assert.match(r.stderr, expected)
      assert.equal(r.stdout, '')
    }
    const missing = runMdq([
      '--db',
      join(dir, 'no-such.db'),
      'delete',
      'bars',
      '--symbol',
      '600000.SH',
      '--period',
      '1d',
    ])
    assert.equal(missing.status, 1)
    assert.match(missing.stderr, /^mdq: no store at .*no-such\.db \(no such file\)/)
    assert.equal(dumpStore(db), before)
  })

  it('delete instruments: the instruments with all their bars and ex-factors', async () => {
    assert.equal(
      ok('delete', 'instruments', '000001.SZ'),
      'deleted 1 instruments with 10 bars, 1 ex-factor events and 0 statement versions\n',
    )
    assert.deepEqual(await timestamps('000001.SZ', '1d'), [])
    assert.deepEqual(
      await read((s) => s.readInstruments(['000001.SZ', '600000.SH'])).then((l) => l.map((i) => i.symbol)),
      ['600000.SH'],
    )
    const r = await fetch(`${server.base}/v1/klines?symbol=000001.SZ&period=1d`, {
      headers: { 'X-API-Key': key, Connection: 'close' },
    })
    assert.equal(r.status, 404)
    await r.arrayBuffer()
  })

  it("import bars --replace: the file's bars replace the stored ones in its range per symbol; ex-factors derive from the corrected history", async () => {
    // 600519.SH had 30.0 .. 30.9 over DAYS with prev_close = the previous close. The corrected file
    // drops 2024-01-09 and changes the close of 2024-01-10 to 33; the stored 2024-01-11 keeps its
    // prev_close 30.6, so the corrected history now holds an event there: 33 / 30.6.
    const fixed = writeCsv(join(dir, 'fixed.csv'), BARS, [
      '600519.SH,2024-01-08,30.4,31.4,29.4,30.4,1000,,30.3',
      '600519.SH,2024-01-10,30.6,33.5,29.6,33,1000,,30.4',
    ])
    const out = ok('import', 'bars', fixed, '--replace', '--derive-ex-factors')
    assert.match(out, /^imported bars: 2 rows \(1 ex-factor events, 3 stored bars replaced\), 1 symbols/)
    assert.deepEqual(await timestamps('600519.SH', '1d'), DAYS.filter((d) => d !== '2024-01-09').map(dayMs))
    assert.deepEqual(await closes('600519.SH'), [30, 30.1, 30.2, 30.3, 30.4, 33, 30.7, 30.8, 30.9])
    assert.deepEqual((await read((s) => s.readExFactors(['600519.SH']))).get('600519.SH'), [
      { timestamp: dayMs('2024-01-11'), exFactor: 33 / 30.6 },
    ])
    assert.deepEqual(await klineDays('600519.SH'), DAYS.filter((d) => d !== '2024-01-09').map(dayMs))
  })

  it('import bars --replace: per symbol and period, unsorted rows, other symbols and periods untouched', async () => {
    ok(
      'import',
      'bars',
      writeCsv(join(dir, 'm1.csv'), 'symbol,time,open,high,low,close,volume', [
        '600519.SH,2024-01-02 09:30,1,1,1,1,1',
        '600519.SH,2024-01-02 09:31,1,1,1,1,1',
        '600519.SH,2024-01-02 09:32,1,1,1,1,1',
        '600519.SH,2024-01-02 09:33,1,1,1,1,1',
      ]),
      '--period',
      '1m',
    )
    const daily = await timestamps('600519.SH', '1d')
    const file = writeCsv(join(dir, 'm2.csv'), 'symbol,time,open,high,low,close,volume', [
      '600519.SH,2024-01-02 09:33,2,2,2,2,2',
      '600000.SH,2024-01-03 09:35,2,2,2,2,2',
      '600519.SH,2024-01-02 09:31,2,2,2,2,2',
    ])
    // Replaced: 600519.SH's 09:31, 09:32 and 09:33 (its range in the file); nothing at 600000.SH's 09:35.
    assert.match(
      ok('import', 'bars', file, '--period', '1m', '--replace'),
      /^imported bars: 3 rows \(3 stored bars replaced\), 2 symbols/,
    )
    const m = (h: number, min: number) => sh.utcOf(2024, 1, h === 3 ? 3 : 2, 9 * 60 + min)
    // 600519.SH: [09:31, 09:33] replaced (09:32 gone), 09:30 kept; 600000.SH: 09:35 added, its 01-03 09:30 bar outside the range kept.
    assert.deepEqual(await timestamps('600519.SH', '1m'), [m(2, 30), m(2, 31), m(2, 33)])
    assert.deepEqual(
      await read(async (s) => Array.from((await s.readBars({ symbol: '600519.SH', period: '1m', limit: 10 })).volume)),
      [1, 2, 2],
    )
    assert.deepEqual(await timestamps('600000.SH', '1m'), [m(3, 30), m(3, 35)])
    assert.deepEqual(await timestamps('600519.SH', '1d'), daily, 'the daily bars are another period')
  })

  it('import bars --replace is all or nothing: a bad row leaves the store as it was', async () => {
    const before = dumpStore(db)
    const bad = writeCsv(join(dir, 'bad.csv'), BARS, [
      '600519.SH,2024-01-02,1,1,1,1,1,,',
      '600519.SH,2024-01-15,1,1,1,1,-1,,',
    ])
    const r = mdq('import', 'bars', bad, '--replace')
    assert.equal(r.status, 1)
    assert.equal(r.stderr, `mdq: ${bad}:3:7: volume -1 is negative\n`)
    assert.equal(dumpStore(db), before)
  })
})
