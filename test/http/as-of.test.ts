// as_of over real HTTP on the demo store: the answers as known on a date, checked against answers
// the same server gives without as_of (identities that hold by the adjustment formulas), its
// validation on every route, the cache and ETags keyed by it, dated universes.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { importFile } from '../../src/ingest/import-file.js'
import { DAILY } from '../helpers/day-by-day.js'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

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

const SH = MARKETS.SH.zone
type ErrorBody = { code: number; message: string }
// Connection: close: CLI imports between requests can outlast the server's keep-alive on a loaded machine.
const get = <T = { data: KlinesData }>(path: string, headers: Record<string, string> = {}) =>
  getJson<T>(`${server.url}${path}`, { headers: { 'X-API-Key': server.key, Connection: 'close', ...headers } })
const post = <T>(path: string, body: unknown) =>
  getJson<T>(`${server.url}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'X-API-Key': server.key, 'Content-Type': 'application/json', Connection: 'close' },
  })
const endOf = (y: number, m: number, d: number) => SH.utcOf(y, m, d) + 86_400_000 - 1
/** 600519.SH goes ex-dividend every 24 June in the demo (2020-06-24 a Wednesday). */
const DAY_BEFORE = '2020-06-23'
const EX_DATE = '2020-06-24'

describe('as_of on klines', () => {
  it('none and backward as of a day = the same request ending that day (later events never reach earlier bars)', async () => {
    for (const adjust of ['none', 'backward', 'backward_additive']) {
      const asOf = await get(`/v1/klines?symbol=600519.SH&adjust=${adjust}&count=300&as_of=${DAY_BEFORE}`)
      const ended = await get(`/v1/klines?symbol=600519.SH&adjust=${adjust}&count=300&end_time=${endOf(2020, 6, 23)}`)
      assert.equal(asOf.status, 200)
      assert.deepEqual(asOf.body, ended.body, adjust)
    }
  })

  it('forward as of a day: that day stays raw, every earlier bar is the backward series over the same constant', async () => {
    for (const day of [DAY_BEFORE, EX_DATE]) {
      const end = endOf(2020, 6, Number(day.slice(8)))
      const fwd = (await get(`/v1/klines?symbol=600519.SH&count=300&as_of=${day}`)).body.data
      const raw = (await get(`/v1/klines?symbol=600519.SH&count=300&adjust=none&end_time=${end}`)).body.data
      const back = (await get(`/v1/klines?symbol=600519.SH&count=300&adjust=backward&end_time=${end}`)).body.data
      assert.deepEqual(fwd.timestamp, raw.timestamp)
      assert.equal(fwd.close.at(-1), raw.close.at(-1), `${day}: the as_of day is raw`)
      const k = back.close.at(-1)! / raw.close.at(-1)!
      fwd.close.forEach((c, i) =>
        assert.ok(Math.abs(c - back.close[i] / k) <= 2e-4, `${day} bar ${i}: ${c} vs ${back.close[i] / k}`),
      )
      assert.notDeepEqual(fwd.close, raw.close, 'earlier events do adjust')
    }
    // Without as_of the dividend of 24 June moves the 23rd; as of the 23rd it does not.
    const today = (await get(`/v1/klines?symbol=600519.SH&count=1&end_time=${endOf(2020, 6, 23)}`)).body.data.close[0]
    const then = (await get(`/v1/klines?symbol=600519.SH&count=1&as_of=${DAY_BEFORE}`)).body.data.close[0]
    assert.ok(today < then, `${today} < ${then}`)
  })

  it('a week as of its Wednesday holds Monday to Wednesday only; epoch ms is that instant', async () => {
    const daily = (await get(`/v1/klines?symbol=600519.SH&adjust=none&count=3&end_time=${endOf(2020, 6, 24)}`)).body
      .data
    const week = (await get(`/v1/klines?symbol=600519.SH&period=1w&adjust=none&count=1&as_of=${EX_DATE}`)).body.data
    assert.equal(week.timestamp[0], SH.utcOf(2020, 6, 22))
    assert.equal(
      week.volume[0],
      daily.volume.reduce((a, b) => a + b, 0),
    )
    assert.equal(week.close[0], daily.close[2])
    // 15:00 in Shanghai closes the 24th: a millisecond before, its daily bar is not complete yet.
    const close = SH.utcOf(2020, 6, 24, 15 * 60)
    const before = (await get(`/v1/klines?symbol=600519.SH&adjust=none&count=1&as_of=${close - 1}`)).body.data
    const at = (await get(`/v1/klines?symbol=600519.SH&adjust=none&count=1&as_of=${close}`)).body.data
    assert.deepEqual([before.timestamp[0], at.timestamp[0]], [SH.utcOf(2020, 6, 23), SH.utcOf(2020, 6, 24)])
  })

  it('batch as of a day = each symbol as of that day; intraday = the last minute day by then', async () => {
    const q = `count=50&adjust=forward&as_of=${DAY_BEFORE}`
    const batch = await get<{ data: Record<string, KlinesData> }>(`/v1/klines/batch?symbols=600519.SH,AAPL.US&${q}`)
    for (const s of ['600519.SH', 'AAPL.US'])
      assert.deepEqual(batch.body.data[s], (await get(`/v1/klines?symbol=${s}&${q}`)).body.data, s)
    const all = (await get('/v1/klines?symbol=600519.SH&period=1m&adjust=none&count=10000')).body.data
    const days = [...new Set(all.timestamp.map((t) => SH.localDay(t)))]
    assert.ok(days.length >= 3)
    const day = days.at(-2)!
    const iso = new Date(SH.midnightUtc(day) + 8 * 3_600_000).toISOString().slice(0, 10)
    const intraday = (await get(`/v1/klines/intraday?symbol=600519.SH&as_of=${iso}`)).body.data
    assert.deepEqual(
      intraday.timestamp,
      all.timestamp.filter((t) => SH.localDay(t) === day),
    )
    const batchIntraday = await get<{ data: Record<string, KlinesData> }>(
      `/v1/klines/intraday/batch?symbols=600519.SH&as_of=${iso}`,
    )
    assert.deepEqual(batchIntraday.body.data['600519.SH'], intraday)
  })

  it('ex-factors as of a day: the events with an ex-date by then', async () => {
    type Ev = { data: Record<string, { timestamp: number }[]> }
    const all = (await get<Ev>('/v1/klines/ex-factors?symbols=600519.SH')).body.data['600519.SH']
    const then = (await get<Ev>(`/v1/klines/ex-factors?symbols=600519.SH&as_of=${EX_DATE}`)).body.data['600519.SH']
    assert.deepEqual(
      then,
      all.filter((e) => e.timestamp <= SH.utcOf(2020, 6, 24)),
    )
    assert.equal(then.at(-1)!.timestamp, SH.utcOf(2020, 6, 24))
    const dayBefore = (await get<Ev>(`/v1/klines/ex-factors?symbols=600519.SH&as_of=${DAY_BEFORE}`)).body.data[
      '600519.SH'
    ]
    assert.equal(dayBefore.length, then.length - 1)
  })

  it("a minute bar takes its day's daily prev_close only once that daily bar is complete", async () => {
    // 300750.SZ: the daily bar of 2024-03-12 carries the exchange's reference price 9.5; its 1m bars none.
    const bars = 'symbol,time,open,high,low,close,volume,amount,prev_close'
    const csv = (name: string, rows: string[]) => writeCsv(join(dir, name), bars, rows)
    await importFile(server.store, 'instruments', writeCsv(join(dir, 'i.csv'), 'symbol', ['300750.SZ']), DAILY)
    await importFile(
      server.store,
      'bars',
      csv('d.csv', ['300750.SZ,2024-03-11,10,10,10,10,1,,', '300750.SZ,2024-03-12,9.6,9.7,9.5,9.6,1,,9.5']),
      DAILY,
    )
    await importFile(
      server.store,
      'bars',
      csv('m.csv', [
        '300750.SZ,2024-03-11 14:59,10,10,10,10,1,,',
        '300750.SZ,2024-03-12 09:30,9.6,9.6,9.6,9.6,1,,',
        '300750.SZ,2024-03-12 09:31,9.6,9.6,9.6,9.6,1,,',
      ]),
      { ...DAILY, period: '1m' },
    )
    const firstPrevClose = async (asOf: string) =>
      (await get(`/v1/klines?symbol=300750.SZ&period=1m&adjust=none&as_of=${asOf}`)).body.data.prev_close.at(-2)
    // At 10:00 the day's daily bar is not complete: the first minute's prev_close is the previous minute's close.
    assert.equal(await firstPrevClose(String(SH.utcOf(2024, 3, 12, 10 * 60))), 10)
    assert.equal(await firstPrevClose('2024-03-12'), 9.5)
  })

  it("quotes as of a day: that day's bar", async () => {
    type Q = { data: { timestamp: number; last_price: number }[] }
    const q = (await get<Q>(`/v1/quotes?symbols=600519.SH&as_of=${DAY_BEFORE}`)).body.data[0]
    const bar = (await get(`/v1/klines?symbol=600519.SH&adjust=none&count=1&end_time=${endOf(2020, 6, 23)}`)).body.data
    assert.deepEqual([q.timestamp, q.last_price], [bar.timestamp[0], bar.close[0]])
  })
})

describe('as_of: validation, cache and ETags', () => {
  it('is refused with a 400 naming it on every route that takes it', async () => {
    const routes = [
      '/v1/klines?symbol=600519.SH',
      '/v1/klines/batch?symbols=600519.SH',
      '/v1/klines/intraday?symbol=600519.SH',
      '/v1/klines/intraday/batch?symbols=600519.SH',
      '/v1/klines/ex-factors?symbols=600519.SH',
      '/v1/instruments?symbols=600519.SH',
      '/v1/exchanges/SH/instruments?',
      '/v1/universes?',
      '/v1/universes/CN_Equity_A?',
      '/v1/quotes?symbols=600519.SH',
      '/v1/financials/income?symbols=600519.SH',
    ]
    const bad: [string, RegExp][] = [
      ['2020-02-30', /not a calendar date/],
      ['20200623', /looks like a date YYYYMMDD: write it 2020-06-23/],
      ['1592870400', /epoch seconds it is 2020-06-23T00:00:00\.000Z: multiply by 1000/],
      ['4102444800000', /after 2099/],
      ['tomorrow', /neither a date nor a whole number/],
    ]
    for (const route of routes)
      for (const [value, message] of bad) {
        const r = await get<ErrorBody>(`${route}&as_of=${value}`)
        assert.equal(r.status, 400, `${route} ${value}`)
        assert.match(r.body.message, /^Parameter 'as_of' /, route)
        assert.match(r.body.message, message, `${route} ${value}`)
      }
    for (const path of ['/v1/instruments', '/v1/universes/batch', '/v1/quotes']) {
      const body = path === '/v1/universes/batch' ? { ids: ['CN_Equity_A'] } : { symbols: ['600519.SH'] }
      const r = await post<ErrorBody>(`${path}?as_of=2020-13-01`, body)
      assert.equal(r.status, 400, path)
      assert.match(r.body.message, /'as_of'/)
    }
  })

  it('answers and ETags are kept per as_of: a repeat is a 304, another as_of another answer', async () => {
    const path = '/v1/klines?symbol=000001.SZ&count=20'
    const a = await get(`${path}&as_of=${DAY_BEFORE}`)
    const b = await get(`${path}&as_of=2021-06-23`)
    const now = await get(path)
    const tags = [a, b, now].map((r) => r.headers.get('etag'))
    assert.equal(new Set(tags).size, 3, 'three answers, three tags')
    assert.notDeepEqual(a.body, b.body)
    const again = await get(`${path}&as_of=${DAY_BEFORE}`)
    assert.deepEqual(again.body, a.body)
    assert.equal(again.headers.get('etag'), tags[0])
    const notModified = await fetch(`${server.url}${path}&as_of=${DAY_BEFORE}`, {
      headers: { 'X-API-Key': server.key, 'If-None-Match': tags[0]! },
    })
    assert.equal(notModified.status, 304)
    const stale = await fetch(`${server.url}${path}&as_of=2021-06-23`, {
      headers: { 'X-API-Key': server.key, 'If-None-Match': tags[0]! },
    })
    assert.equal(stale.status, 200, "another as_of's tag does not match")
    await stale.arrayBuffer()
  })
})

describe('as_of on universes imported with dates', () => {
  type U = { data: { id: string; symbol_count: number; symbols: string[] } }
  before(() => {
    const r = runMdq([
      '--db',
      db,
      'import',
      'universes',
      writeCsv(join(dir, 'idx.csv'), 'universe_id,symbol,name,category,in_date,out_date', [
        'IDX,600000.SH,My index,index,2015-01-05,2018-06-11',
        'IDX,600519.SH,,,2016-01-04,',
        'IDX,600000.SH,,,2020-06-15,',
        'IDX,000001.SZ,,,2015-01-05,2020-06-15',
      ]),
    ])
    assert.equal(r.status, 0, r.stderr)
  })

  it('members of that day (out_date exclusive); without as_of the members not yet out', async () => {
    const on = async (day: string) => (await get<U>(`/v1/universes/IDX?as_of=${day}`)).body.data.symbols
    assert.deepEqual(await on('2015-06-01'), ['600000.SH', '000001.SZ'])
    assert.deepEqual(await on('2018-06-11'), ['600519.SH', '000001.SZ'])
    assert.deepEqual(await on('2020-06-14'), ['600519.SH', '000001.SZ'])
    assert.deepEqual(await on('2020-06-15'), ['600519.SH', '600000.SH'], 'in the order of their rows')
    assert.deepEqual(await on('2014-12-31'), [])
    assert.deepEqual((await get<U>('/v1/universes/IDX')).body.data.symbols, ['600519.SH', '600000.SH'])
    const list = await get<{ data: { id: string; symbol_count: number }[] }>('/v1/universes?as_of=2016-06-01')
    assert.equal(list.body.data.find((u) => u.id === 'IDX')?.symbol_count, 3)
    const batch = await post<{ data: Record<string, { symbols: string[] }> }>('/v1/universes/batch?as_of=2015-06-01', {
      ids: ['IDX'],
    })
    assert.deepEqual(batch.body.data.IDX.symbols, ['600000.SH', '000001.SZ'])
    type Q = { data: { symbol: string }[] }
    const quotes = await get<Q>('/v1/quotes?universes=IDX&as_of=2015-06-01')
    assert.deepEqual(
      quotes.body.data.map((q) => q.symbol),
      ['600000.SH', '000001.SZ'],
    )
  })

  it('bad dated files are refused and change nothing', () => {
    const cases: [string[], RegExp][] = [
      [['X,600000.SH,2020-01-01,2019-01-01'], /:2:4: out_date 2019-01-01 is not after in_date 2020-01-01/],
      [
        ['X,600000.SH,2015-01-01,2019-01-01', 'X,600000.SH,2018-06-01,'],
        /:3:3: 600000\.SH is already a member of X then \(2015-01-01 \.\. 2019-01-01\)/,
      ],
      [['X,600000.SH,2015-13-01,'], /:2:3: in_date '2015-13-01' is not a calendar date/],
    ]
    for (const [rows, message] of cases) {
      const r = runMdq([
        '--db',
        db,
        'import',
        'universes',
        writeCsv(join(dir, 'bad.csv'), 'universe_id,symbol,in_date,out_date', rows),
      ])
      assert.equal(r.status, 1)
      assert.match(r.stderr, message)
    }
  })
})
