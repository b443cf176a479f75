// Financial statements end to end: `mdq import financials` through the real CLI into a real store
// file, served by /v1/financials/* over real HTTP; restatements, as_of, bad input, corrections.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { STATEMENT_FIELDS, STATEMENTS } from '../../src/domain/financials.js'
import { demoDb, getJson, startServer, type TestServer } from '../helpers/server.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let server: TestServer
let db: string
before(async () => {
  db = await demoDb(dir)
  server = await startServer(db)
})
after(async () => {
  await server.close()
  cleanup()
})

type Rec = Record<string, string | number | null>
type Answer = { data: Record<string, Rec[]> }
type ErrorBody = { code: number; message: string }
// Connection: close: CLI imports between requests can outlast the server's keep-alive on a loaded machine.
const get = <T = Answer>(path: string) =>
  getJson<T>(`${server.url}${path}`, { headers: { 'X-API-Key': server.key, Connection: 'close' } })
const mdq = (...args: string[]) => runMdq(['--db', db, ...args])
function ok(...args: string[]): string {
  const r = mdq(...args)
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}
async function refused(path: string, status: number, message: RegExp): Promise<void> {
  const r = await get<ErrorBody>(path)
  assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`)
  assert.equal(r.body.code, status)
  assert.match(r.body.message, message, path)
}

/** 600519.SH's income: FY2019 announced 2020-04-22 and restated 2021-03-31, Q1 2020, FY2020. */
const INCOME = 'symbol,period_end,announce_date,revenue,net_income,basic_eps'
const INCOME_ROWS = [
  '600519.SH,2019-12-31,2020-04-22,85429573467.25,43970000000,32.8',
  '600519.SH,2020-03-31,2020-04-29,25290000000.5,,11.89',
  '600519.SH,2019-12-31,2021-03-31,88854338485.11,44000000000,33.1',
  '600519.SH,20201231,20210331,97993240000,46697000000.78,37.17',
]
/** The record the route writes for a row: every income field, null where the file has none. */
function record(periodEnd: string, announceDate: string, given: Record<string, number>): Rec {
  const r: Rec = { period_end: periodEnd, announce_date: announceDate }
  for (const f of STATEMENT_FIELDS.income) r[f] = given[f] ?? null
  return r
}
const FY19 = record('2019-12-31', '2020-04-22', { revenue: 85429573467.25, net_income: 43970000000, basic_eps: 32.8 })
const FY19R = record('2019-12-31', '2021-03-31', { revenue: 88854338485.11, net_income: 44000000000, basic_eps: 33.1 })
const Q120 = record('2020-03-31', '2020-04-29', { revenue: 25290000000.5, basic_eps: 11.89 })
const FY20 = record('2020-12-31', '2021-03-31', { revenue: 97993240000, net_income: 46697000000.78, basic_eps: 37.17 })

describe('financial statements', () => {
  before(() => {
    const out = ok('import', 'financials', 'income', writeCsv(join(dir, 'income.csv'), INCOME, INCOME_ROWS))
    assert.match(out, /^imported financials income: 4 rows, 1 symbols/)
  })

  it('serve the latest version of each period, ascending; known symbols without any get [], unknown are left out', async () => {
    const r = await get('/v1/financials/income?symbols=600519.SH,600000.SH,999999.SH')
    assert.equal(r.status, 200)
    assert.deepEqual(r.body.data, { '600519.SH': [FY19R, Q120, FY20], '600000.SH': [] })
    assert.deepEqual(Object.keys(r.body.data), ['600519.SH', '600000.SH'])
    const text = await (
      await fetch(`${server.url}/v1/financials/income?symbols=600519.SH`, {
        headers: { 'X-API-Key': server.key, Connection: 'close' },
      })
    ).text()
    assert.match(text, /"net_income":44000000000\.0,/, 'values are written with a fraction part')
    assert.match(text, /"revenue":88854338485\.11,/)
  })

  it('start_date and end_date bound period_end (inclusive); latest keeps the last period', async () => {
    assert.deepEqual(
      (await get('/v1/financials/income?symbols=600519.SH&start_date=2020-01-01&end_date=2020-12-31')).body.data,
      { '600519.SH': [Q120, FY20] },
    )
    assert.deepEqual((await get('/v1/financials/income?symbols=600519.SH&latest=true')).body.data, {
      '600519.SH': [FY20],
    })
    assert.deepEqual((await get('/v1/financials/income?symbols=600519.SH&latest=true&end_date=2020-03-31')).body.data, {
      '600519.SH': [Q120],
    })
    assert.deepEqual((await get('/v1/financials/income?symbols=600519.SH&latest=false')).body.data, {
      '600519.SH': [FY19R, Q120, FY20],
    })
  })

  it('as_of: the version of each period announced by then; later periods are absent', async () => {
    const asOf = async (v: string) => (await get(`/v1/financials/income?symbols=600519.SH&as_of=${v}`)).body.data
    assert.deepEqual(await asOf('2020-04-21'), { '600519.SH': [] })
    assert.deepEqual(await asOf('2020-04-22'), { '600519.SH': [FY19] })
    assert.deepEqual(await asOf('2021-03-30'), { '600519.SH': [FY19, Q120] })
    assert.deepEqual(await asOf('2021-03-31'), { '600519.SH': [FY19R, Q120, FY20] })
    // Epoch ms: the announcement day counts from local midnight in Shanghai (2020-04-21T16:00Z).
    assert.deepEqual(await asOf(String(Date.UTC(2020, 3, 21, 16) - 1)), { '600519.SH': [] })
    assert.deepEqual(await asOf(String(Date.UTC(2020, 3, 21, 16))), { '600519.SH': [FY19] })
    assert.deepEqual((await get('/v1/financials/income?symbols=600519.SH&as_of=2021-03-30&latest=true')).body.data, {
      '600519.SH': [Q120],
    })
  })

  it('each statement has its own route and fields; shares feed instruments as_of', async () => {
    ok(
      'import',
      'financials',
      'shares',
      writeCsv(join(dir, 'shares.csv'), 'symbol,period_end,announce_date,total_shares,float_shares', [
        '600000.SH,2019-06-30,2019-06-20,29352080397,28103763899',
        '600000.SH,2020-12-31,2021-01-05,29352177375,29352177375',
      ]),
    )
    const shares = await get('/v1/financials/shares?symbols=600000.SH')
    assert.deepEqual(shares.body.data['600000.SH'], [
      { period_end: '2019-06-30', announce_date: '2019-06-20', float_shares: 28103763899, total_shares: 29352080397 },
      { period_end: '2020-12-31', announce_date: '2021-01-05', float_shares: 29352177375, total_shares: 29352177375 },
    ])
    assert.deepEqual((await get('/v1/financials/cash-flow?symbols=600000.SH,600519.SH')).body.data, {
      '600000.SH': [],
      '600519.SH': [],
    })
    type Inst = { data: { symbol: string; ext: { total_shares: number | null; float_shares: number | null } }[] }
    const now = (await get<Inst>('/v1/instruments?symbols=600000.SH,600519.SH')).body.data.map((i) => i.ext)
    const at = async (asOf: string) =>
      (await get<Inst>(`/v1/instruments?symbols=600000.SH,600519.SH&as_of=${asOf}`)).body.data.map((i) => [
        i.symbol,
        i.ext.total_shares,
        i.ext.float_shares,
      ])
    // Announced before it took effect: in force from period_end on, known from announce_date on.
    // 600519.SH has no shares history: its record stays as imported.
    assert.deepEqual(await at('2019-06-29'), [
      ['600000.SH', null, null],
      ['600519.SH', now[1].total_shares, now[1].float_shares],
    ])
    assert.deepEqual((await at('2019-06-30'))[0], ['600000.SH', 29352080397, 28103763899])
    assert.deepEqual((await at('2021-01-04'))[0], ['600000.SH', 29352080397, 28103763899])
    assert.deepEqual((await at('2021-01-05'))[0], ['600000.SH', 29352177375, 29352177375])
    assert.notDeepEqual(
      [now[0].total_shares, now[0].float_shares],
      [29352177375, 29352177375],
      'without as_of the instrument record is as imported',
    )
  })

  it('bad input: unknown statement (404 naming them), bad dates and as_of (400 naming the parameter), repeated parameters', async () => {
    await refused(
      '/v1/financials/dividends?symbols=600519.SH',
      404,
      /Unknown statement 'dividends'.*income, balance-sheet, cash-flow, metrics, shares/,
    )
    await refused(
      '/v1/financials/income?symbols=600519.SH&start_date=2020-13-01',
      400,
      /'start_date'.*not a calendar date/,
    )
    await refused(
      '/v1/financials/income?symbols=600519.SH&end_date=20200101',
      400,
      /'end_date'.*looks like YYYYMMDD: write it 2020-01-01/,
    )
    await refused(
      '/v1/financials/income?symbols=600519.SH&start_date=2021-01-01&end_date=2020-01-01',
      400,
      /'start_date' \(2021-01-01\) must not be after 'end_date' \(2020-01-01\)/,
    )
    await refused(
      '/v1/financials/income?symbols=600519.SH&as_of=1600000000',
      400,
      /'as_of'.*epoch seconds it is 2020-09-13T12:26:40\.000Z/,
    )
    await refused(
      '/v1/financials/income?symbols=600519.SH&as_of=yesterday',
      400,
      /'as_of'.*YYYY-MM-DD or epoch milliseconds/,
    )
    await refused('/v1/financials/income?symbols=600519.SH&latest=maybe', 400, /latest/)
    await refused('/v1/financials/income?symbols=600519.SH&as_of=2020-01-01&as_of=2021-01-01', 400, /as_of/)
    await refused('/v1/financials/income?symbols=6005.SH', 400, /symbol/)
    await refused(
      `/v1/financials/income?symbols=${Array.from({ length: 101 }, (_, i) => `${600000 + i}.SH`).join(',')}`,
      400,
      /at most 100/,
    )
  })

  it('bad files change nothing: another statement, unknown or missing columns, an unknown symbol, swapped dates', () => {
    const before = dumpStore(db)
    const cases: [string, string, string[], RegExp][] = [
      [
        'income',
        'symbol,period_end,announce_date,total_assets,total_equity',
        ['600519.SH,2020-12-31,2021-03-31,1,2'],
        /:1:1: unknown columns total_assets, total_equity for income \(they are balance-sheet fields: is this a balance-sheet file\?\)/,
      ],
      [
        'income',
        'symbol,period_end,revenue,colour',
        ['600519.SH,2020-12-31,1,red'],
        /missing column announce_date; unknown column colour for income/,
      ],
      [
        'metrics',
        'symbol,period_end,announce_date',
        ['600519.SH,2020-12-31,2021-03-31'],
        /no metrics field among the columns/,
      ],
      [
        'income',
        INCOME,
        ['600519.SH,2020-12-31,2021-03-31,1,2,3', '000002.SZ,2020-12-31,2021-03-31,1,2,3'],
        /:3:1: unknown symbol 000002\.SZ/,
      ],
      [
        'income',
        INCOME,
        ['600519.SH,2021-03-31,2020-12-31,1,2,3'],
        /:2:3: announce_date 2020-12-31 is before period_end 2021-03-31.*swapped/,
      ],
      ['income', INCOME, ['600519.SH,2020-12-31,2021-03-31,1,two,3'], /:2:5: net_income 'two' is not a number/],
      [
        'income',
        INCOME,
        ['600519.SH,2020-12-31,2021-03-31,12345678901234567890.123,2,3'],
        /:2:4: revenue 12345678901234567890\.123 has more digits than mdq keeps exactly \(it would be 12345678901234567000\)/,
      ],
      [
        'income',
        INCOME,
        ['600519.SH,2020-02-30,2021-03-31,1,2,3'],
        /:2:2: period_end '2020-02-30' is not a calendar date/,
      ],
    ]
    for (const [statement, header, rows, message] of cases) {
      const r = mdq('import', 'financials', statement, writeCsv(join(dir, 'bad.csv'), header, rows))
      assert.equal(r.status, 1, `${header}: ${r.stdout}`)
      assert.match(r.stderr, message)
    }
    const noStatement = mdq('import', 'financials', 'dividends', join(dir, 'bad.csv'))
    assert.match(
      noStatement.stderr,
      /'dividends' is not a statement; one of income, balance-sheet, cash-flow, metrics, shares/,
    )
    assert.match(mdq('import', 'financials', 'income').stderr, /give the CSV file after the statement/)
    assert.match(mdq('import', 'bars', join(dir, 'bad.csv'), 'extra.csv').stderr, /import bars takes one file/)
    assert.equal(dumpStore(db), before, 'failed imports change nothing')
  })

  it('--replace replaces every version of its periods per symbol; mdq delete financials and delete instruments remove them', async () => {
    // The corrected file covers 2019-12-31 .. 2020-03-31: both FY2019 versions and Q1 go, FY2020 stays.
    ok(
      'import',
      'financials',
      'income',
      writeCsv(join(dir, 'fixed.csv'), INCOME, [
        '600519.SH,2019-12-31,2020-04-22,1,2,3',
        '600519.SH,2020-03-31,2020-04-29,4,5,6',
      ]),
      '--replace',
    )
    const fixed = (await get('/v1/financials/income?symbols=600519.SH')).body.data['600519.SH']
    assert.deepEqual(
      fixed.map((r) => [r.period_end, r.announce_date, r.revenue]),
      [
        ['2019-12-31', '2020-04-22', 1],
        ['2020-03-31', '2020-04-29', 4],
        ['2020-12-31', '2021-03-31', 97993240000],
      ],
    )
    assert.equal(
      ok('delete', 'financials', 'income', '--symbol', '600519.SH', '--from', '2020-01-01'),
      'deleted 2 income versions of 600519.SH (2020-01-01 .. the last)\n',
    )
    assert.deepEqual(
      (await get('/v1/financials/income?symbols=600519.SH')).body.data['600519.SH'].map((r) => r.period_end),
      ['2019-12-31'],
    )
    assert.match(
      mdq('delete', 'financials', 'income', '--symbol', '600519.SH', '--to', '2020-02-30').stderr,
      /--to: the date '2020-02-30' is not a calendar date/,
    )
    assert.match(ok('delete', 'instruments', '600000.SH'), /and 2 statement versions\n$/)
    assert.deepEqual((await get('/v1/financials/shares?symbols=600000.SH')).body.data, {})
  })

  it('the OpenAPI document describes each statement route with the SDK model fields', async () => {
    type Op = {
      parameters: { name: string }[]
      responses: { 200: { content: { 'application/json': { schema: Schema } } } }
    }
    type Schema = { properties: Record<string, Schema>; additionalProperties: Schema; items: Schema }
    const spec = (await getJson<{ paths: Record<string, { get: Op }> }>(`${server.url}/openapi.json`)).body
    for (const s of STATEMENTS) {
      const op = spec.paths[`/v1/financials/${s}`].get
      assert.deepEqual(op.parameters.map((p) => p.name).sort(), [
        'as_of',
        'end_date',
        'latest',
        'start_date',
        'symbols',
      ])
      const rec = op.responses[200].content['application/json'].schema.properties.data.additionalProperties.items
      assert.deepEqual(Object.keys(rec.properties), ['period_end', 'announce_date', ...STATEMENT_FIELDS[s]], s)
    }
  })
})
