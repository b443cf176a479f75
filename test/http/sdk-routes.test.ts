// TickFlow's other stored-data routes, parameter by parameter and error by error, over real HTTP against the demo store.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { MemoryRateLimiter } from '../../src/auth/rate-limiter.js'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { MARKETS } from '../../src/domain/market.js'
import { demoDb, getJson, rawRequest, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let server: TestServer
let db: string
// Wednesday 2026-11-18 02:00 UTC: 10:00 in Shanghai and Hong Kong (a session), 21:00 the evening before in New York.
const NOW = Date.UTC(2026, 10, 18, 2)
/** The server's clock (for a quote's session): NOW, but for the test that moves it. */
let now = NOW
before(async () => {
  db = await demoDb(dir)
  server = await startServer(db, { now: () => now })
})
after(async () => {
  await server.close()
  cleanup()
})

type ErrorBody = { code: number; message: string }
const get = <T = unknown>(path: string, init: RequestInit = {}) =>
  getJson<T>(`${server.url}${path}`, {
    ...init,
    headers: { 'X-API-Key': server.key, ...(init.headers as Record<string, string>) },
  })
const post = <T = unknown>(path: string, body: string) =>
  get<T>(path, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })
async function refused(path: string, status: number, message: RegExp, init: RequestInit = {}): Promise<void> {
  const r = await get<ErrorBody>(path, init)
  assert.equal(r.status, status, `${path}: ${JSON.stringify(r.body)}`)
  assert.equal(r.body.code, status)
  assert.match(r.body.message, message, path)
  assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
}
type Batch = { unknown_symbols?: string[]; data: Record<string, KlinesData> }

describe('GET /v1/klines/batch', () => {
  it('answers per symbol exactly what /v1/klines answers, for every adjust mode and several periods', async () => {
    for (const period of ['1d', '1w', '60m', '1m']) {
      for (const adjust of ADJUSTS) {
        const q = `period=${period}&adjust=${adjust}&count=120`
        const batch = await get<Batch>(`/v1/klines/batch?symbols=600519.SH,AAPL.US,00700.HK&${q}`)
        assert.equal(batch.status, 200)
        for (const s of ['600519.SH', 'AAPL.US', '00700.HK'])
          assert.deepEqual(
            batch.body.data[s],
            (await get<{ data: KlinesData }>(`/v1/klines?symbol=${s}&${q}`)).body.data,
            `${s} ${q}`,
          )
      }
    }
    const range = await get<Batch>(
      '/v1/klines/batch?symbols=000001.SZ&start_time=1700000000000&end_time=1710000000000&count=5',
    )
    assert.deepEqual(
      range.body.data['000001.SZ'],
      (
        await get<{ data: KlinesData }>(
          '/v1/klines?symbol=000001.SZ&start_time=1700000000000&end_time=1710000000000&count=5',
        )
      ).body.data,
    )
  })

  it('canonical keys in the order asked, duplicates once, unknown symbols named apart; the bytes are the same as the single answers', async () => {
    const single = async (s: string) =>
      (await rawRequest(`${server.url}/v1/klines?symbol=${s}&count=3`, { 'X-API-Key': server.key })).body
        .toString()
        .slice('{"data":'.length, -1)
    const batch = async (symbols: string) =>
      (await rawRequest(`${server.url}/v1/klines/batch?symbols=${symbols}&count=3`, { 'X-API-Key': server.key })).body
    const both = `"AAPL.US":${await single('AAPL.US')},"600519.SH":${await single('600519.SH')}`
    // Every symbol known: the answer is `data` alone, as before.
    assert.equal((await batch('aapl.us,600519.sh,AAPL.US')).toString(), `{"data":{${both}}}`)
    assert.equal(
      (await batch('aapl.us,999999.SH,600519.sh,AAPL.US,888888.sz,999999.sh')).toString(),
      `{"unknown_symbols":["999999.SH","888888.SZ"],"data":{${both}}}`,
    )
    assert.deepEqual((await get<Batch>('/v1/klines/batch?symbols=999999.SH')).body, {
      unknown_symbols: ['999999.SH'],
      data: {},
    })
  })

  it("a malformed symbol is a 400 naming the symbol meant, for another vendor's spelling in any case", async () => {
    for (const [given, meant] of [
      ['600000.SS', '600000.SH'],
      ['600000.ss', '600000.SH'],
      ['000001.XSHE', '000001.SZ'],
      ['sh.600000', '600000.SH'],
      ['SZ000001', '000001.SZ'],
      ['0700.HK', '00700.HK'],
      ['aapl.o', 'AAPL.US'],
      ['BRK.B', 'BRK.B.US'],
      ['600519', '600519.SH'],
    ])
      await refused(
        `/v1/klines/batch?symbols=AAPL.US,${given}`,
        400,
        new RegExp(`^Parameter 'symbols': .* Did you mean '${meant.replace(/\./g, '\\.')}'\\?$`),
      )
    await refused('/v1/klines?symbol=600000.SS', 400, /Did you mean '600000\.SH'\?$/)
    await refused('/v1/klines/batch?symbols=600000.XX', 400, /allowed: SH, SZ, BJ, HK, US\.$/) // no guess
  })

  it('streams compressed too (gzip), and answers 304 to its ETag', async () => {
    const r = await rawRequest(`${server.url}/v1/klines/batch?symbols=600519.SH,AAPL.US&count=2000`, {
      'X-API-Key': server.key,
      'Accept-Encoding': 'gzip',
    })
    assert.equal(r.headers['content-encoding'], 'gzip')
    assert.deepEqual(Object.keys(JSON.parse(gunzipSync(r.body).toString()).data), ['600519.SH', 'AAPL.US'])
    const again = await rawRequest(`${server.url}/v1/klines/batch?symbols=600519.SH,AAPL.US&count=2000`, {
      'X-API-Key': server.key,
      'If-None-Match': String(r.headers.etag),
    })
    assert.equal(again.status, 304)
  })

  it('refuses bad parameters with a 400 naming them', async () => {
    await refused('/v1/klines/batch', 400, /'symbols' is required/)
    await refused('/v1/klines/batch?symbols=', 400, /'symbols' is empty/)
    await refused('/v1/klines/batch?symbols=,,', 400, /'symbols' must name at least one/)
    await refused(
      `/v1/klines/batch?symbols=${Array.from({ length: 101 }, (_, i) => `${600000 + i}.SH`).join(',')}`,
      400,
      /at most 100 symbols \(got 101\)/,
    )
    await refused('/v1/klines/batch?symbols=600519.SH,BAD', 400, /'symbols'.*'BAD'/)
    await refused('/v1/klines/batch?symbols=600519.SH&count=0', 400, /'count' must be at least 1/)
    await refused('/v1/klines/batch?symbols=600519.SH&count=10001', 400, /'count' must be at most 10000/)
    await refused('/v1/klines/batch?symbols=600519.SH&period=2h', 400, /'period' must be one of/)
    await refused('/v1/klines/batch?symbols=600519.SH&adjust=qfq', 400, /'adjust' must be one of/)
    await refused(
      '/v1/klines/batch?symbols=600519.SH&start_time=10000000005&end_time=10000000004',
      400,
      /'start_time' \(10000000005\) must not be after 'end_time' \(10000000004\)/,
    )
    await refused('/v1/klines/batch?symbols=600519.SH&symbols=AAPL.US', 400, /'symbols' is given more than once/)
    await refused('/v1/klines/batch?symbols=600519.SH', 401, /key/i, { headers: { 'X-API-Key': 'mdq_wrong' } })
  })
})

describe('GET /v1/klines/intraday (and /batch)', () => {
  const dayOf = async (symbol: string) => {
    const last = (await get<{ data: KlinesData }>(`/v1/klines?symbol=${symbol}&period=1m&count=1&adjust=none`)).body
      .data.timestamp[0]
    const zone = MARKETS[symbol.endsWith('.US') ? 'US' : symbol.endsWith('.HK') ? 'HK' : 'SH'].zone
    const day = zone.localDay(last)
    return `start_time=${zone.midnightUtc(day)}&end_time=${zone.midnightUtc(day + 1) - 1}`
  }

  it("answers the latest minute day's bars, unadjusted, in any minute period; count keeps the latest", async () => {
    for (const symbol of ['600519.SH', 'AAPL.US', '00700.HK']) {
      const range = await dayOf(symbol)
      for (const period of ['1m', '5m', '10m', '60m']) {
        const expected = (
          await get<{ data: KlinesData }>(
            `/v1/klines?symbol=${symbol}&period=${period}&adjust=none&count=10000&${range}`,
          )
        ).body.data
        assert.ok(expected.timestamp.length > 0)
        const r = await get<{ data: KlinesData }>(
          `/v1/klines/intraday?symbol=${symbol}${period === '1m' ? '' : `&period=${period}`}`,
        )
        assert.deepEqual(r.body.data, expected, `${symbol} ${period}`)
      }
      const last3 = (await get<{ data: KlinesData }>(`/v1/klines/intraday?symbol=${symbol}&count=3`)).body.data
      assert.deepEqual(
        last3.close,
        (await get<{ data: KlinesData }>(`/v1/klines?symbol=${symbol}&period=1m&adjust=none&count=3`)).body.data.close,
      )
    }
  })

  it('batch: per symbol what the single route answers; unknown left out', async () => {
    const r = await get<Batch>('/v1/klines/intraday/batch?symbols=600519.SH,999999.SH,SPY.US&period=15m&count=4')
    assert.deepEqual(Object.keys(r.body.data), ['600519.SH', 'SPY.US'])
    assert.deepEqual(r.body.unknown_symbols, ['999999.SH'])
    for (const s of ['600519.SH', 'SPY.US'])
      assert.deepEqual(
        r.body.data[s],
        (await get<{ data: KlinesData }>(`/v1/klines/intraday?symbol=${s}&period=15m&count=4`)).body.data,
      )
  })

  it('refuses bad parameters; an unknown symbol is a 404', async () => {
    await refused('/v1/klines/intraday', 400, /'symbol' is required/)
    await refused(
      '/v1/klines/intraday?symbol=600519.SH&period=1d',
      400,
      /'period' must be one of 1m, 5m, 10m, 15m, 30m, 60m/,
    )
    await refused('/v1/klines/intraday?symbol=600519.SH&count=0', 400, /'count' must be at least 1/)
    await refused('/v1/klines/intraday?symbol=600519.SH&adjust=none', 200, /^$/).catch(() => undefined) // unknown parameters are ignored
    assert.equal((await get('/v1/klines/intraday?symbol=600519.SH&adjust=none')).status, 200)
    await refused('/v1/klines/intraday?symbol=999999.SH', 404, /Unknown symbol '999999.SH'/)
    await refused('/v1/klines/intraday?symbol=12.SH', 400, /6 digits/)
    await refused('/v1/klines/intraday/batch?symbols=600519.SH&period=1w', 400, /'period' must be one of/)
    await refused('/v1/klines/intraday/batch', 400, /'symbols' is required/)
  })
})

describe('GET /v1/exchanges and /v1/exchanges/{exchange}/instruments', () => {
  it('lists exchanges with instruments, ascending, with counts that match their instrument lists', async () => {
    const r = await get<{ data: { exchange: string; region: string; count: number }[] }>('/v1/exchanges')
    assert.deepEqual(
      r.body.data.map((e) => e.exchange),
      ['HK', 'SH', 'SZ', 'US'],
    )
    for (const e of r.body.data) {
      const list = await get<{ exchange: string; count: number; data: { symbol: string; exchange: string }[] }>(
        `/v1/exchanges/${e.exchange.toLowerCase()}/instruments`,
      )
      assert.equal(list.body.exchange, e.exchange)
      assert.equal(list.body.count, e.count)
      assert.equal(list.body.data.length, e.count)
      assert.ok(list.body.data.every((i) => i.exchange === e.exchange))
      assert.deepEqual(
        list.body.data.map((i) => i.symbol),
        [...list.body.data.map((i) => i.symbol)].sort(),
      )
    }
    assert.deepEqual(
      r.body.data.find((e) => e.exchange === 'SH'),
      { exchange: 'SH', region: 'CN', count: 4 },
    )
  })

  it('filters by type; refuses an unknown exchange or type', async () => {
    const etf = await get<{ count: number; data: { symbol: string; type: string }[] }>(
      '/v1/exchanges/SH/instruments?type=etf',
    )
    assert.deepEqual(
      etf.body.data.map((i) => i.symbol),
      ['510300.SH'],
    )
    assert.equal((await get<{ count: number }>('/v1/exchanges/HK/instruments?type=bond')).body.count, 0)
    await refused('/v1/exchanges/XX/instruments', 400, /unknown exchange 'XX'; allowed: SH, SZ, BJ, HK, US/)
    await refused('/v1/exchanges/SH/instruments?type=warrant', 400, /'type' must be one of stock, etf/)
    await refused('/v1/exchanges/SH/instruments?type=', 400, /'type' is empty/)
  })
})

describe('universes', () => {
  it('four built-in universes derived from the instruments', async () => {
    const r = await get<{ data: { id: string; region: string; category: string; symbol_count: number }[] }>(
      '/v1/universes',
    )
    assert.deepEqual(
      r.body.data.map((u) => [u.id, u.region, u.category, u.symbol_count]),
      [
        ['CN_Equity_A', 'CN', 'equity', 5],
        ['CN_ETF', 'CN', 'etf', 1],
        ['HK_Equity', 'HK', 'equity', 2],
        ['US_Equity', 'US', 'equity', 1],
      ],
    )
    const a = await get<{ data: { symbols: string[]; symbol_count: number } }>('/v1/universes/CN_Equity_A')
    assert.deepEqual(a.body.data.symbols, ['000001.SZ', '000858.SZ', '600000.SH', '600519.SH', '601318.SH'])
    assert.equal(a.body.data.symbol_count, 5)
    await refused('/v1/universes/NOPE', 404, /Unknown universe 'NOPE'/)
  })

  it('POST /v1/universes/batch: details by id, unknown ids left out; body rules', async () => {
    const r = await post<{ data: Record<string, { id: string; symbols: string[] }> }>(
      '/v1/universes/batch',
      '{"ids":["US_Equity","NOPE","HK_Equity"]}',
    )
    assert.deepEqual(Object.keys(r.body.data), ['US_Equity', 'HK_Equity'])
    assert.deepEqual(r.body.data.US_Equity.symbols, ['AAPL.US'])
    for (const [body, message] of [
      ['{"ids":[]}', /'ids' must have at least 1 items/],
      ['{}', /'ids' is required/],
      ['{"ids":', /not valid JSON/],
    ] as const) {
      await refused('/v1/universes/batch', 400, message, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json' },
      })
    }
  })

  it('mdq import universes: replaces the listed universes whole; a bad row aborts with file:line:column and changes nothing', async () => {
    const file = writeCsv(join(dir, 'u1.csv'), 'universe_id,symbol,name,region,category,description', [
      'BANKS,600000.SH,Banks,CN,equity,Two banks',
      'BANKS,000001.sz,,,,',
      'TECH,AAPL.US,Tech,US,equity,',
    ])
    assert.equal(runMdq(['--db', db, 'import', 'universes', file]).status, 0)
    const banks = await get<{
      data: { name: string; region: string; category: string; description: string; symbols: string[] }
    }>('/v1/universes/BANKS')
    assert.deepEqual(banks.body.data, {
      id: 'BANKS',
      name: 'Banks',
      region: 'CN',
      category: 'equity',
      description: 'Two banks',
      symbol_count: 2,
      symbols: ['600000.SH', '000001.SZ'],
    })
    // A second file lists BANKS again: its members are replaced as a whole; TECH is untouched.
    assert.equal(
      runMdq([
        '--db',
        db,
        'import',
        'universes',
        writeCsv(join(dir, 'u2.csv'), 'universe_id,symbol', ['BANKS,601318.SH']),
      ]).status,
      0,
    )
    assert.deepEqual(
      (await get<{ data: { symbols: string[]; name: string } }>('/v1/universes/BANKS')).body.data.symbols,
      ['601318.SH'],
    )
    assert.deepEqual((await get<{ data: { symbols: string[] } }>('/v1/universes/TECH')).body.data.symbols, ['AAPL.US'])
    const before = dumpStore(db)
    const cases: [string[], RegExp][] = [
      [['OK,600000.SH,,,', 'bad id!,600000.SH,,,'], /u3\.csv:3:1: universe_id 'bad id!'/],
      [['OK,600000.SH,,,', 'CN_ETF,510300.SH,,,'], /u3\.csv:3:1: universe_id 'CN_ETF' is built in/],
      [['OK,600000.SH,,,', 'OK,60000.SH,,,'], /u3\.csv:3:2: code '60000' is not valid/],
      [['OK,600000.SH,,,stocks'], /u3\.csv:2:5: category 'stocks' is not one of equity, etf, index/],
      [['OK,600000.SH,,EU,'], /u3\.csv:2:4: region 'EU' is not one of CN, HK, US/],
      [['OK,600000.SH,One,,', 'OK,600519.SH,Two,,'], /u3\.csv:3:3: name 'Two' differs from 'One'/],
      [
        ['OK,600000.SH,,,', 'OK,600519.SH', 'OK,601318.SH,,,'],
        /u3\.csv:3:1: this row has fewer fields than the header \(5/,
      ],
    ]
    for (const [rows, message] of cases) {
      const r = runMdq([
        '--db',
        db,
        'import',
        'universes',
        writeCsv(join(dir, 'u3.csv'), 'universe_id,symbol,name,region,category', rows),
      ])
      assert.notEqual(r.status, 0)
      assert.match(r.stderr, message)
    }
    const missing = runMdq([
      '--db',
      db,
      'import',
      'universes',
      writeCsv(join(dir, 'u4.csv'), 'id,symbol', ['X,600000.SH']),
    ])
    assert.match(missing.stderr, /u4\.csv:1:1: the header does not fit a universes file: .*'universe_id'/)
    assert.equal(dumpStore(db), before, 'failed imports change nothing')
  })
})

describe('/v1/quotes', () => {
  type Quote = {
    symbol: string
    region: string
    timestamp: number
    last_price: number
    open: number
    high: number
    low: number
    volume: number
    amount: number
    prev_close: number
    session: string
    ext: { type: string; name: string; change_amount: number; change_pct: number; amplitude: number }
  }
  const quotes = async (query: string) => (await get<{ data: Quote[] }>(`/v1/quotes?${query}`)).body.data
  /** a - b exactly, for prices of at most 4 decimals: in integers of 1/10,000. */
  const decimalDifference = (a: number, b: number) => {
    const [ia, ib] = [Math.round(a * 10_000), Math.round(b * 10_000)]
    assert.deepEqual([ia / 10_000, ib / 10_000], [a, b], 'prices of at most 4 decimals')
    return (ia - ib) / 10_000
  }

  it('derives each quote from the latest stored bars: the last 1m close, the daily bar of that day, change figures', async () => {
    const [q] = await quotes('symbols=600519.SH')
    const minute = (await get<{ data: KlinesData }>('/v1/klines?symbol=600519.SH&period=1m&adjust=none&count=1')).body
      .data
    const daily = (await get<{ data: KlinesData }>('/v1/klines?symbol=600519.SH&adjust=none&count=1')).body.data
    assert.equal(q.timestamp, minute.timestamp[0])
    assert.equal(q.last_price, minute.close[0])
    assert.deepEqual(
      [q.open, q.high, q.low, q.volume, q.amount, q.prev_close],
      [daily.open[0], daily.high[0], daily.low[0], daily.volume[0], daily.amount[0], daily.prev_close[0]],
    )
    assert.equal(q.ext.change_amount, decimalDifference(q.last_price, q.prev_close))
    assert.ok(Math.abs(q.ext.change_pct - (q.last_price - q.prev_close) / q.prev_close) <= 5e-7)
    assert.ok(Math.abs(q.ext.amplitude - (q.high - q.low) / q.prev_close) <= 5e-7)
    assert.deepEqual([q.region, q.ext.type, q.ext.name], ['CN', 'cn_equity', '贵州茅台'])
  })

  it('derived figures carry no float noise: change_amount is the exact decimal difference, ratios have 6 decimals', async () => {
    const symbols: string[] = []
    for (const exchange of ['SH', 'SZ', 'HK', 'US'])
      symbols.push(
        ...(await get<{ data: { symbol: string }[] }>(`/v1/exchanges/${exchange}/instruments`)).body.data.map(
          (i) => i.symbol,
        ),
      )
    assert.equal(symbols.length, 10) // the whole demo store
    const text = (
      await rawRequest(`${server.url}/v1/quotes?symbols=${symbols.join(',')}`, { 'X-API-Key': server.key })
    ).body.toString()
    const list = (JSON.parse(text) as { data: Quote[] }).data
    assert.equal(list.length, 10)
    for (const q of list) assert.equal(q.ext.change_amount, decimalDifference(q.last_price, q.prev_close), q.symbol)
    // On the wire: at most 4 decimals for the change, 6 for the ratios (the subtraction gave 0.07999999999999918).
    const decimals = (key: string) =>
      [...text.matchAll(new RegExp(`"${key}":-?\\d+\\.(\\d+)`, 'g'))].map((m) => m[1].length)
    assert.equal(decimals('change_amount').length, 10)
    assert.ok(Math.max(...decimals('change_amount')) <= 4, text)
    for (const key of ['change_pct', 'amplitude']) assert.ok(Math.max(...decimals(key)) <= 6, `${key}: ${text}`)
    const pf = list.find((q) => q.symbol === '600000.SH')!
    assert.deepEqual([pf.last_price, pf.prev_close, pf.ext.change_amount], [4.52, 4.44, 0.08])
    assert.match(text, /"change_amount":0\.08,"change_pct":0\.018018,/)
  })

  it("session describes the quote's own time: regular only for a bar of the session running now", async () => {
    const sessions = async () =>
      (await quotes('symbols=600519.SH,00700.HK,AAPL.US')).map((q) => [q.symbol, q.session, q.timestamp] as const)
    // Now is 10:00 in Shanghai and Hong Kong, both in session; every quote is from a bar of 2025: closed.
    const old = await sessions()
    assert.deepEqual(
      old.map(([symbol, session]) => [symbol, session]),
      [
        ['600519.SH', 'closed'],
        ['00700.HK', 'closed'],
        ['AAPL.US', 'closed'],
      ],
    )
    const lastBar = new Map(old.map(([symbol, , timestamp]) => [symbol, timestamp]))
    try {
      // Half a minute into 600519.SH's last 1m bar (14:59 in Shanghai): its quote is live; 00700.HK's
      // last bar (15:59 in Hong Kong) lies after now; New York is closed.
      now = lastBar.get('600519.SH')! + 30_000
      assert.deepEqual(
        (await sessions()).map(([symbol, session]) => [symbol, session]),
        [
          ['600519.SH', 'regular'],
          ['00700.HK', 'closed'],
          ['AAPL.US', 'closed'],
        ],
      )
      // 15:59:30 in New York: Shanghai and Hong Kong are closed. The demo's last day, December 31, is a
      // half day in Hong Kong (no afternoon session): its 15:59 bar (the demo's bars know no half days)
      // is of no session, whenever now is.
      now = lastBar.get('AAPL.US')! + 30_000
      assert.deepEqual(
        (await sessions()).map(([symbol, session]) => [symbol, session]),
        [
          ['600519.SH', 'closed'],
          ['00700.HK', 'closed'],
          ['AAPL.US', 'regular'],
        ],
      )
      now = lastBar.get('00700.HK')! + 30_000
      assert.equal((await sessions())[1][1], 'closed')
    } finally {
      now = NOW
    }
  })

  it('symbols and universes together, in order, duplicates once, unknown symbols left out; GET and POST agree', async () => {
    const list = await quotes('symbols=AAPL.US,999999.SH,00700.HK&universes=HK_Equity')
    assert.deepEqual(
      list.map((q) => q.symbol),
      ['AAPL.US', '00700.HK', '09988.HK'],
    )
    const posted = await post<{ data: Quote[] }>(
      '/v1/quotes',
      '{"symbols":["AAPL.US","999999.SH","00700.HK"],"universes":["HK_Equity"]}',
    )
    assert.deepEqual(posted.body.data, list)
  })

  it('refuses: nothing asked, a malformed symbol, an unknown universe, over 1000 symbols', async () => {
    await refused('/v1/quotes', 400, /'symbols' and 'universes' name no symbol/)
    await refused('/v1/quotes?symbols=XYZ', 400, /'symbols'.*'XYZ'/)
    await refused('/v1/quotes?universes=NOPE', 400, /unknown universe 'NOPE'/)
    const many = Array.from({ length: 1001 }, (_, i) => `${600000 + i}.SH`)
    await refused('/v1/quotes', 400, /'symbols' must have at most 1000 items/, {
      method: 'POST',
      body: JSON.stringify({ symbols: many }),
      headers: { 'Content-Type': 'application/json' },
    })
    await refused('/v1/quotes', 400, /at most 1000 in all/, {
      method: 'POST',
      body: JSON.stringify({ symbols: many.slice(0, 1000), universes: ['US_Equity'] }),
      headers: { 'Content-Type': 'application/json' },
    })
  })
})

describe('wire numbers and refusals of the live routes', () => {
  it('prices, amounts and ratios always carry a fraction part; timestamps, volumes and counts stay integers', async () => {
    const text = async (path: string) =>
      (await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key })).body.toString()
    const tokens = (json: string, key: string) =>
      [...json.matchAll(new RegExp(`"${key}":(\\[[^\\]]*\\]|-?[\\d.e+-]+)`, 'g'))].flatMap((m) =>
        m[1].replace(/[[\]]/g, '').split(',').filter(Boolean),
      )
    const floats = (json: string, keys: string[]) => {
      for (const key of keys) {
        const found = tokens(json, key)
        assert.ok(found.length > 0, `${key} present`)
        for (const t of found) assert.ok(t.includes('.'), `${key} ${t} has a fraction part`)
      }
    }
    const integers = (json: string, keys: string[]) => {
      for (const key of keys) for (const t of tokens(json, key)) assert.match(t, /^-?\d+$/, `${key} ${t} is an integer`)
    }
    for (const path of [
      '/v1/klines?symbol=600519.SH&adjust=none&count=500',
      '/v1/klines?symbol=AAPL.US&period=1w&count=500',
      '/v1/klines/batch?symbols=00700.HK,SPY.US&adjust=none&period=1m',
      '/v1/klines/intraday?symbol=600519.SH',
    ]) {
      const json = await text(path)
      floats(json, ['open', 'high', 'low', 'close', 'amount', 'prev_close'])
      integers(json, ['timestamp', 'volume'])
    }
    floats(await text('/v1/klines/ex-factors?symbols=AAPL.US,600519.SH'), ['ex_factor'])
    const instruments = await text('/v1/instruments?symbols=600519.SH,00700.HK')
    floats(instruments, ['tick_size'])
    integers(instruments, ['total_shares', 'float_shares'])
    const quotes = await text('/v1/quotes?symbols=600519.SH,AAPL.US,00700.HK')
    floats(quotes, [
      'last_price',
      'open',
      'high',
      'low',
      'amount',
      'prev_close',
      'change_amount',
      'change_pct',
      'amplitude',
    ])
    integers(quotes, ['timestamp', 'volume'])
    integers(await text('/v1/exchanges'), ['count'])
    integers(await text('/v1/universes'), ['symbol_count'])
  })

  it('/v1/depth of a symbol with nothing pushed answers 404 saying so, /v1/ws/* without an upgrade 426; other methods 405', async () => {
    await refused('/v1/depth?symbol=600519.SH', 404, /No depth was pushed for 600519\.SH/)
    await refused('/v1/depth?symbol=600519', 400, /symbol/)
    await refused('/v1/ws/stream', 426, /WebSocket endpoint: connect to ws:/)
    await refused('/v1/ws/quotes', 426, /tf\.realtime/)
    const r = await rawRequest(`${server.url}/v1/depth`, { 'X-API-Key': server.key }, 'POST')
    assert.equal(r.status, 405)
    await refused('/v1/depth', 401, /key/i, { headers: { 'X-API-Key': 'mdq_nope' } })
  })
})

describe('instrument ext: name_en (CN) and lot_size (HK)', () => {
  type Record = { symbol: string; ext: { [k: string]: unknown } }
  it('imported from optional columns, null when absent, only on their market; lot_size a whole number', async () => {
    const file = writeCsv(join(dir, 'ins.csv'), 'symbol,name,name_en,lot_size', [
      '600519.SH,贵州茅台,Kweichow Moutai,',
      '601318.SH,中国平安,,',
      '00700.HK,腾讯控股,,200',
      '09988.HK,阿里巴巴-W,,',
      'AAPL.US,Apple Inc.,Apple,7',
    ])
    assert.equal(runMdq(['--db', db, 'import', 'instruments', file]).status, 0)
    const r = await get<{ data: Record[] }>('/v1/instruments?symbols=600519.SH,00700.HK,AAPL.US,601318.SH,09988.HK')
    const ext = Object.fromEntries(r.body.data.map((i) => [i.symbol, i.ext]))
    assert.equal(ext['600519.SH'].name_en, 'Kweichow Moutai')
    assert.equal(ext['601318.SH'].name_en, null)
    assert.equal(ext['00700.HK'].lot_size, 200)
    assert.equal(ext['09988.HK'].lot_size, null)
    assert.ok(
      !('lot_size' in ext['600519.SH']) &&
        !('name_en' in ext['00700.HK']) &&
        !('name_en' in ext['AAPL.US']) &&
        !('lot_size' in ext['AAPL.US']),
    )
    const bad = runMdq([
      '--db',
      db,
      'import',
      'instruments',
      writeCsv(join(dir, 'ins2.csv'), 'symbol,lot_size', ['00700.HK,100.5']),
    ])
    assert.match(bad.stderr, /ins2\.csv:2:2: lot_size 100\.5 is not a whole number/)
  })
})

describe('rate limits of the new routes', () => {
  it('batch, intraday and quotes take one token each from the klines bucket; listings are unlimited', async () => {
    const limited = await startServer(db, {
      rateLimit: { limiter: new MemoryRateLimiter(), defaults: { ratePerMin: 1, burst: 4 }, failOpen: false },
      responseCacheBytes: 0,
    })
    try {
      const call = async (path: string) =>
        (await getJson(`${limited.url}${path}`, { headers: { 'X-API-Key': limited.key } })).status
      assert.deepEqual(
        [
          await call('/v1/klines/batch?symbols=600519.SH'),
          await call('/v1/klines/intraday?symbol=600519.SH'),
          await call('/v1/klines/intraday/batch?symbols=600519.SH'),
          await call('/v1/quotes?symbols=600519.SH'),
        ],
        [200, 200, 200, 200],
      )
      assert.equal(await call('/v1/klines?symbol=600519.SH'), 429, 'the four took the whole klines bucket')
      assert.equal(await call('/v1/quotes?symbols=600519.SH'), 429)
      for (const path of [
        '/v1/exchanges',
        '/v1/exchanges/SH/instruments',
        '/v1/universes',
        '/v1/universes/CN_ETF',
        '/v1/klines/ex-factors?symbols=600519.SH',
      ])
        assert.equal(await call(path), 200, path)
    } finally {
      await limited.close()
    }
  })
})
