// The ingest listener over real HTTP: scopes, quotes into minute bars visible before they close, bars
// and depth, the import's row rules and messages, stale and repeated snapshots, size limits, slow bodies.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { barCount, sliceBars, type Bars } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import type { QuoteSnapshot } from '../../src/domain/minute-bars.js'
import { snapshotsOfDay } from '../../src/domain/quote-snapshots.js'
import { daysFromCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { MAX_PUSH_ROWS } from '../../src/ingest/pushed-rows.js'
import { INGEST_BODY_BYTES } from '../../src/http/ingest-app.js'
import { sessionMinutes, walkBars } from '../helpers/arbitraries.js'
import { pushedQuote, startIngest, type TestIngest } from '../helpers/ingest-server.js'
import { spawnServe } from '../helpers/serve-process.js'
import { threadNices } from '../helpers/thread-nice.js'
import { demoDb, getJson, newKey, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { dumpStore, runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let server: TestServer
let ingest: TestIngest
let db: string
/** Monday 2026-01-05, after the demo's last day: a live day. */
const DAY = daysFromCivil(2026, 1, 5)
const sh = MARKETS.SH

before(async () => {
  db = await demoDb(dir)
  server = await startServer(db)
  ingest = await startIngest(server)
})
after(async () => {
  await ingest.close()
  await server.close()
  cleanup()
})

type ErrorBody = { code: number; message: string }
type PushAnswer = { data: { rows: number; accepted: number; stale: number; duplicate: number } }
const wire = (q: QuoteSnapshot) => ({ ...pushedQuote(q), region: 'CN' })
const push = <T = PushAnswer>(
  path: string,
  body: unknown,
  key = ingest.key,
  type = 'application/json',
): Promise<{ status: number; body: T }> =>
  getJson<T>(`${ingest.url}/v1/ingest/${path}`, {
    method: 'POST',
    headers: { 'X-API-Key': key, 'Content-Type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const read = async <T = { data: KlinesData }>(path: string) => {
  const r = await getJson<T>(`${server.url}${path}`, { headers: { 'X-API-Key': server.key } })
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`)
  return r.body
}
/** The 1m bars of a day for 600519.SH's live day: a few hours of a random walk. */
function dayBars(symbol: string, minutes: number, seed: number[]): Bars {
  const ts = sessionMinutes(symbol.endsWith('.US') ? 'US' : 'SH', [MARKETS.SH.zone.midnightUtc(DAY)]).slice(0, minutes)
  const bars = walkBars(ts, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 10 + i * 3
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
    bars.prevClose[i] = NaN
  }
  return bars
}
const columns = (b: Bars) => ({
  timestamp: [...b.timestamp],
  open: [...b.open],
  high: [...b.high],
  low: [...b.low],
  close: [...b.close],
  volume: [...b.volume],
  amount: [...b.amount],
})

describe('ingest listener', () => {
  it('refuses to answer pushes once logged on a store without an ingest log (SQLite), in one line', () => {
    const r = runMdq(['--db', db, 'serve', '--port', '0', '--ingest-port', '0', '--ingest-answer', 'logged'])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^mdq: --ingest-answer logged needs a store that keeps an ingest log \(ClickHouse\)/)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  })

  it('refuses a write-behind cadence for pushes answered once written, in one line', () => {
    const r = runMdq(['--db', db, 'serve', '--port', '0', '--ingest-port', '0', '--ingest-write-every', '500'])
    assert.equal(r.status, 1)
    assert.match(
      r.stderr,
      /^mdq: --ingest-write-every applies to pushes answered once logged \(--ingest-answer logged\)/,
    )
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
    const bad = runMdq(['--db', db, 'serve', '--ingest-answer', 'logged', '--ingest-write-every', '2.5'])
    assert.equal(bad.status, 1)
    assert.match(bad.stderr, /--ingest-write-every.*must be a whole number of milliseconds 0\.\.60000/)
  })

  it('refuses an ingest log in files for pushes answered once written, and a directory it cannot use, in one line', () => {
    const r = runMdq(['--db', db, 'serve', '--port', '0', '--ingest-port', '0', '--ingest-log', dirname(db)])
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^mdq: --ingest-log keeps the log of pushes answered once logged \(--ingest-answer logged\)/)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
    const inFile = join(db, 'log') // under a file: no directory can be made there
    const bad = runMdq(['--db', db, 'serve', '--port', '0', '--ingest-answer', 'logged', '--ingest-log', inFile])
    assert.equal(bad.status, 1)
    assert.match(bad.stderr, new RegExp(`^mdq: --ingest-log ${inFile}: cannot be used \\(.*ENOTDIR`))
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr)
  })

  it(
    '--ingest-nice lowers the ingest thread alone, which still takes pushes; a value outside 0..19 is refused',
    { skip: process.platform !== 'linux' && 'threads have no priority of their own here' },
    async () => {
      const s = await spawnServe(['--db', db], ['--ingest-port', '0', '--ingest-nice', '10'])
      try {
        const r = await getJson<PushAnswer>(`${s.ingest}/v1/ingest/quotes`, {
          method: 'POST',
          headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
          // A symbol no other test reads.
          body: JSON.stringify([wire({ ...base(), symbol: '601988.SH', timestamp: at(9, 31) })]),
        })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        assert.equal(r.body.data.accepted, 1)
        // Every thread's nice value, once the push has gone through the ingest thread.
        const nices = threadNices(s.child.pid!)
        assert.deepEqual(
          nices.filter((n) => n !== 0),
          [10],
          `one thread (the ingest's) at nice 10: ${nices.join(' ')}`,
        )
      } finally {
        await s.stop()
      }
      const bad = runMdq(['--db', db, 'serve', '--port', '0', '--ingest-port', '0', '--ingest-nice', '20'])
      assert.equal(bad.status, 1)
      assert.match(bad.stderr, /--ingest-nice.*must be a whole number 0\.\.19/)
    },
  )

  it('takes keys of scope ingest or admin; a read key is a 403 naming the scope, no key a 401', async () => {
    const reader = await newKey(server.keys, 'reader')
    const admin = await newKey(server.keys, 'admin', {}, 'admin')
    const refused = await push<ErrorBody>('quotes', [], reader)
    assert.equal(refused.status, 403)
    assert.deepEqual(refused.body, {
      code: 403,
      message:
        "This API key has scope 'read'; POST /v1/ingest/quotes needs scope 'ingest' or 'admin' (mdq keys create --scope ingest).",
    })
    const none = await getJson<ErrorBody>(`${ingest.url}/v1/ingest/quotes`, { method: 'POST', body: '[]' })
    assert.equal(none.status, 401)
    assert.equal((await push('quotes', [], admin)).status, 200)
    assert.equal((await push('depth', [])).status, 200)
    // The public API stays read-only: no ingest route there.
    const onPublic = await getJson<ErrorBody>(`${server.url}/v1/ingest/quotes`, {
      method: 'POST',
      headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
      body: '[]',
    })
    assert.equal(onPublic.status, 404)
    const doc = await getJson<{ paths: Record<string, unknown> }>(`${ingest.url}/openapi.json`)
    assert.deepEqual(Object.keys(doc.body.paths).sort(), ['/v1/ingest/bars', '/v1/ingest/depth', '/v1/ingest/quotes'])
    const wrongMethod = await getJson<ErrorBody>(`${ingest.url}/v1/ingest/quotes`, {
      headers: { 'X-API-Key': ingest.key },
    })
    assert.equal(wrongMethod.status, 405)
  })

  it('builds the forming minute from quotes, readable before it closes (intraday, 1m, 5m, the day, quotes), then stored bars', async () => {
    const bars = dayBars('600519.SH', 30, [0.3, 0.8, 0.5])
    const snapshots = snapshotsOfDay('600519.SH', bars, sh, 261.68, 3)
    // Up to and including the second snapshot of minute 20: that bar is forming, the ones before closed.
    const cut = snapshots.findIndex((q) => q.timestamp > bars.timestamp[20]) + 2
    for (let i = 0; i < cut; i += 7)
      assert.equal((await push('quotes', snapshots.slice(i, Math.min(cut, i + 7)).map(wire))).status, 200)
    const last = snapshots[cut - 1]
    const intraday = await read('/v1/klines/intraday?symbol=600519.SH')
    assert.deepEqual(intraday.data.timestamp, [...bars.timestamp.subarray(0, 21)])
    // The closed minutes are the source bars; the forming one is what its two snapshots showed.
    const forming = toBars(intraday.data)
    assert.deepEqual(columns(sliceBars(forming, 0, 20)), columns(sliceBars(bars, 0, 20)))
    assert.equal(forming.close[20], last.lastPrice)
    assert.equal(forming.volume[20], last.volume - snapshots[cut - 3].volume)
    // The same minute through /v1/klines (1m, and a 5m bucket holding it) and the day's bar.
    const oneMinute = await read('/v1/klines?symbol=600519.SH&period=1m&adjust=none&count=1')
    assert.deepEqual(oneMinute.data.timestamp, [bars.timestamp[20]])
    const fiveMinutes = await read('/v1/klines?symbol=600519.SH&period=5m&adjust=none&count=1')
    assert.equal(fiveMinutes.data.timestamp[0], bars.timestamp[20])
    assert.equal(fiveMinutes.data.close[0], last.lastPrice)
    const day = await read(`/v1/klines?symbol=600519.SH&period=1d&adjust=none&count=1`)
    assert.deepEqual(day.data, {
      timestamp: [sh.zone.midnightUtc(DAY)],
      open: [last.open],
      high: [last.high],
      low: [last.low],
      close: [last.lastPrice],
      volume: [last.volume],
      amount: [last.amount],
      prev_close: [261.68],
    })
    const quote = await read<{ data: { last_price: number; volume: number; timestamp: number }[] }>(
      '/v1/quotes?symbols=600519.SH',
    )
    assert.deepEqual(
      [quote.data[0].last_price, quote.data[0].volume, quote.data[0].timestamp],
      [last.lastPrice, last.volume, bars.timestamp[20]],
    )
    // The rest of the day: every minute as the source.
    const rest = snapshots.slice(cut)
    for (let i = 0; i < rest.length; i += 50)
      assert.equal((await push('quotes', rest.slice(i, i + 50).map(wire))).status, 200)
    const whole = await read('/v1/klines/intraday?symbol=600519.SH')
    assert.deepEqual(columns(toBars(whole.data)), columns(bars))
  })

  it('a symbol first seen in a push is an instrument at once (a bare one), and pushes leave the others as they were', async () => {
    type Listed = { data: { symbol: string; name: string | null }[] }
    const listed = async () =>
      (await read<Listed>('/v1/instruments?symbols=600000.SH,688981.SH')).data.map((i) => [i.symbol, i.name])
    assert.equal((await listed()).length, 1) // read once: every thread that answers has the list in hand
    const q = (symbol: string, minute: number) => {
      const bars = dayBars(symbol, 6, [0.2, 0.4, 0.6])
      return snapshotsOfDay(symbol, bars, sh, 10, 1)[minute]
    }
    const accepted = async (symbol: string, minute: number) =>
      assert.equal((await push('quotes', [wire(q(symbol, minute))])).body.data.accepted, 1)
    // Quotes of a listed symbol, each a commit of live data only (no instrument written).
    for (let minute = 0; minute < 4; minute++) {
      await accepted('600000.SH', minute)
      await listed()
    }
    const before = await listed()
    await accepted('688981.SH', 0)
    assert.deepEqual(await listed(), [...before, ['688981.SH', null]])
    await accepted('600000.SH', 4)
    assert.deepEqual(await listed(), [...before, ['688981.SH', null]])
  })

  it("refuses a batch with a bad row with 400, the row's index and the import's message, and stores nothing", async () => {
    const dumped = dumpStore(db)
    const good = wire({ ...base(), timestamp: at(10, 0) })
    const cases: [string, unknown[], RegExp][] = [
      ['quotes', [good, good, { ...good, high: 1, low: 2 }], /^Row 2 \('high'\): high 1 is below low 2\.$/],
      [
        'quotes',
        [{ ...good, volume: 1.5 }],
        /^Row 0 \('volume'\): volume 1\.5 is not a whole number up to 10000000000000 /,
      ],
      [
        'quotes',
        [{ ...good, timestamp: Math.floor(good.timestamp / 1000) }],
        /^Row 0 \('timestamp'\): time '\d+' is too small for epoch milliseconds .*as epoch seconds: 2026-01-05/,
      ],
      [
        'quotes',
        [{ ...good, symbol: '60051.SH' }],
        /^Row 0 \('symbol'\): code '60051' is not valid for exchange SH; expected 6 digits\.$/,
      ],
      [
        'quotes',
        [{ ...good, timestamp: Date.UTC(2026, 0, 3, 2) }],
        /^Row 0 \('timestamp'\): \d+ falls on a weekend \(2026-01-03, Asia\/Shanghai\)\.$/,
      ],
      ['quotes', [{ ...good, last_price: 0 }], /^Row 0 \('last_price'\): last_price 0 is not a positive price\.$/],
      [
        'quotes',
        [{ ...good, last_price: 300 }],
        /^Row 0 \('last_price'\): last_price 300 is outside \[low 250, high 270\]\.$/,
      ],
      ['quotes', [{ ...good, amount: '12' }], /^Row 0 \('amount'\): amount '12' is not a number\.$/],
      ['quotes', [7], /^Row 0: must be a JSON object\.$/],
      ['quotes', { rows: [] } as unknown as unknown[], /must be a JSON array/],
      [
        'bars',
        [
          {
            symbol: '600519.SH',
            period: '1m',
            time: '2026-01-05 11:30',
            open: 1,
            high: 1,
            low: 1,
            close: 1,
            volume: 1,
          },
        ],
        /^Row 0 \('time'\): bar at 2026-01-05 11:30 is outside the regular sessions of SH\.$/,
      ],
      [
        'bars',
        [{ symbol: '600519.SH', period: '1h', time: at(10, 0), open: 1, high: 1, low: 1, close: 1, volume: 1 }],
        /^Row 0 \('period'\): period must be '1m' or '1d'\.$/,
      ],
      [
        'bars',
        [{ symbol: '600519.SH', period: '1m', time: at(10, 0) + 1, open: 1, high: 1, low: 1, close: 1, volume: 1 }],
        /is not on a whole minute/,
      ],
      [
        'depth',
        [
          {
            symbol: '600519.SH',
            timestamp: at(10, 0),
            bid_prices: [1, 2],
            bid_volumes: [1],
            ask_prices: [],
            ask_volumes: [],
          },
        ],
        /^Row 0 \('bid_volumes'\): bid_volumes holds 1 levels and bid_prices 2\.$/,
      ],
    ]
    // A snapshot dated after the server's today: later ones of today would all be ignored as older.
    const future = laterWeekday(sh.zone.localDay(Date.now()))
    const futureAt = sh.zone.midnightUtc(future) + 10 * 3_600_000
    const laterDay =
      /^Row 0 \('timestamp'\): \d+ is \d{4}-\d\d-\d\d in Asia\/Shanghai, a later day than this server's today \(\d{4}-\d\d-\d\d\); check the feed's clock\.$/
    cases.push(
      ['quotes', [{ ...good, timestamp: futureAt }], laterDay],
      [
        'depth',
        [
          {
            symbol: '600519.SH',
            timestamp: futureAt,
            bid_prices: [1],
            bid_volumes: [1],
            ask_prices: [],
            ask_volumes: [],
          },
        ],
        laterDay,
      ],
      // Before the day's first trade (volume 0) the prices are still among those mdq keeps.
      [
        'quotes',
        [{ ...good, open: 0, high: 0, low: 0, volume: 0, amount: 0, last_price: 1e300 }],
        /^Row 0 \('last_price'\): last_price 1e\+300 is outside 0\.0001 \.\. 100000000, the prices mdq keeps\.$/,
      ],
      [
        'quotes',
        [{ ...good, open: 0, high: 0, low: 0, volume: 0, amount: 0, prev_close: 5e-324 }],
        /^Row 0 \('prev_close'\): prev_close 5e-324 is outside 0\.0001 \.\. 100000000/,
      ],
    )
    for (const [path, rows, message] of cases) {
      const r = await push<ErrorBody>(path, rows)
      assert.equal(r.status, 400, `${path} ${JSON.stringify(rows)}`)
      assert.equal(r.body.code, 400)
      assert.match(r.body.message, message)
    }
    // A number too large for a double reads as Infinity, and is named so.
    const overflow = await push<ErrorBody>(
      'quotes',
      `[${JSON.stringify(good).replace(/"last_price":[^,]+/, '"last_price":1e400')}]`,
    )
    assert.equal(overflow.body.message, "Row 0 ('last_price'): last_price Infinity is not a number.")
    assert.equal(dumpStore(db), dumped)
    // The import names the same rule in the same words (file, line and column for row and field).
    const csv = writeCsv(join(dir, 'bad.csv'), 'symbol,time,open,high,low,close,volume', [
      '600519.SH,2026-01-05,10,1,2,1.5,100',
    ])
    assert.match(runMdq(['--db', db, 'import', 'bars', csv]).stderr, /bad\.csv:2:4: high 1 is below low 2\n$/)
    const pushed = await push<ErrorBody>('bars', [
      { symbol: '600519.SH', period: '1d', time: '2026-01-05', open: 10, high: 1, low: 2, close: 1.5, volume: 100 },
    ])
    assert.equal(pushed.body.message, "Row 0 ('high'): high 1 is below low 2.")
  })

  it('counts snapshots older than the latest or repeating it (answer and metric) and changes nothing for them', async () => {
    const first = { ...base(), symbol: '600000.SH', timestamp: at(10, 5), volume: 500, amount: 5000.5 }
    const later = { ...first, timestamp: at(10, 6), volume: 600, amount: 6001.5, lastPrice: 261 }
    assert.deepEqual((await push('quotes', [wire(first), wire(later)])).body.data, {
      rows: 2,
      accepted: 2,
      stale: 0,
      duplicate: 0,
    })
    const dumped = dumpStore(db)
    const ignored = async () => {
      const { values } = await ingest.metrics.ingestIgnored.get()
      const of = (reason: string) => values.find((v) => v.labels.reason === reason)?.value ?? 0
      return { stale: of('stale'), duplicate: of('duplicate') }
    }
    const before = await ignored()
    const answer = await push('quotes', [wire(later), wire(first), { ...wire(later), last_price: 262 }])
    assert.deepEqual(answer.body.data, { rows: 3, accepted: 0, stale: 2, duplicate: 1 })
    assert.equal(dumpStore(db), dumped)
    // Counted where an operator sees it: mdq_ingest_ignored_total by reason.
    assert.deepEqual(await ignored(), { stale: before.stale + 2, duplicate: before.duplicate + 1 })
  })

  it('takes NDJSON; refuses more than the documented rows or bytes with 413, a bad NDJSON line with 400; stores nothing', async () => {
    const dumped = dumpStore(db)
    const q = wire({ ...base(), symbol: '601318.SH', timestamp: at(10, 7) })
    const tooMany = await push<ErrorBody>(
      'quotes',
      Array.from({ length: MAX_PUSH_ROWS + 1 }, () => q),
    )
    assert.equal(tooMany.status, 413)
    assert.match(tooMany.body.message, /at most 10000 rows \(got 10001\)/)
    const huge = await push<ErrorBody>('quotes', `[${JSON.stringify({ ...q, ext: { pad: 'x'.repeat(17 << 20) } })}]`)
    assert.deepEqual(huge.body, {
      code: 413,
      message: `The request body is larger than ${INGEST_BODY_BYTES} bytes, the limit of this route.`,
    })
    // Bodies go as they are: a compressed one, or one sent as text, is a 415 rather than a misread.
    const gzipped = await getJson<ErrorBody>(`${ingest.url}/v1/ingest/quotes`, {
      method: 'POST',
      headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: gzipSync(JSON.stringify([q])),
    })
    assert.deepEqual(gzipped.body, {
      code: 415,
      message: "Content-Encoding 'gzip' is not accepted here; send the body uncompressed.",
    })
    const text = await push<ErrorBody>('quotes', JSON.stringify([q]), ingest.key, 'text/plain')
    assert.equal(text.status, 415)
    assert.equal(text.body.code, 415)
    const badLine = await push<ErrorBody>('quotes', `${JSON.stringify(q)}\n{nope\n`, ingest.key, 'application/x-ndjson')
    assert.deepEqual(badLine.body, { code: 400, message: 'Line 2 of the NDJSON body is not valid JSON.' })
    assert.equal(dumpStore(db), dumped)
    const ndjson = await push(
      'quotes',
      `${JSON.stringify(q)}\n\n${JSON.stringify({ ...q, timestamp: at(10, 8), volume: 120 })}\n`,
      ingest.key,
      'application/x-ndjson',
    )
    assert.deepEqual(ndjson.body.data, { rows: 2, accepted: 2, stale: 0, duplicate: 0 })
  })

  it('answers a body that stalls with 408 once the request timeout passes, and stores nothing', async () => {
    const slow = await startIngest(server, { requestTimeoutMs: 1500, headersTimeoutMs: 1000 })
    try {
      const dumped = dumpStore(db)
      const body = JSON.stringify([wire({ ...base(), symbol: '000001.SZ', timestamp: at(10, 9) })])
      const answer = await new Promise<string>((resolve, reject) => {
        const url = new URL(slow.url)
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.write(
            `POST /v1/ingest/quotes HTTP/1.1\r\nHost: x\r\nX-API-Key: ${slow.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
          )
        })
        let text = ''
        socket.on('data', (d) => (text += d))
        socket.on('close', () => resolve(text))
        socket.on('error', reject)
      })
      assert.match(answer, /^HTTP\/1\.1 408 /)
      assert.match(answer, /"code":408/)
      assert.equal(dumpStore(db), dumped)
    } finally {
      await slow.close()
    }
  })

  it('stores pushed bars as an import does (1m and 1d, a later row winning), readable through klines', async () => {
    const t = (m: number) => at(10, m)
    const rows = [
      {
        symbol: 'AAPL.US',
        period: '1d',
        time: '2026-01-05',
        open: 250,
        high: 255,
        low: 249,
        close: 254,
        volume: 1000,
        amount: 254000.5,
      },
      {
        symbol: '000002.SZ',
        period: '1m',
        time: t(1),
        open: 10,
        high: 10.2,
        low: 9.9,
        close: 10.1,
        volume: 100,
        amount: 1010,
      },
      {
        symbol: '000002.SZ',
        period: '1m',
        time: t(0),
        open: 10,
        high: 10.1,
        low: 9.9,
        close: 10,
        volume: 50,
        amount: 500,
      },
      {
        symbol: '000002.SZ',
        period: '1m',
        time: t(1),
        open: 10,
        high: 10.3,
        low: 9.9,
        close: 10.2,
        volume: 110,
        amount: 1122,
      },
    ]
    assert.deepEqual((await push('bars', rows)).body.data, { rows: 4, accepted: 4, stale: 0, duplicate: 0 })
    const minutes = await read('/v1/klines?symbol=000002.SZ&period=1m&adjust=none&count=2')
    assert.deepEqual(
      [minutes.data.timestamp, minutes.data.close, minutes.data.volume],
      [
        [t(0), t(1)],
        [10, 10.2],
        [50, 110],
      ],
    )
    const day = await read('/v1/klines?symbol=AAPL.US&period=1d&adjust=none&count=1')
    assert.deepEqual(
      [day.data.timestamp, day.data.close, day.data.amount],
      [[MARKETS.US.zone.midnightUtc(DAY)], [254], [254000.5]],
    )
  })

  it('keeps the latest depth per symbol and publishes every accepted quote and depth after it is durable', async () => {
    const published = ingest.published.length
    const depth = (ts: number, bid: number) => ({
      symbol: '600036.SH',
      timestamp: ts,
      bid_prices: [bid, bid - 0.01],
      bid_volumes: [3, 4],
      ask_prices: [bid + 0.01],
      ask_volumes: [9],
    })
    assert.deepEqual((await push('depth', [depth(at(10, 1), 35.1), depth(at(10, 0), 35)])).body.data, {
      rows: 2,
      accepted: 1,
      stale: 1,
      duplicate: 0,
    })
    assert.deepEqual((await server.store.readDepths(['600036.SH'])).get('600036.SH')?.bidPrices, [35.1, 35.09])
    // A listener started afresh on the store (a restarted server) knows the kept depth: the older one is still stale.
    const restarted = await startIngest(server)
    try {
      assert.deepEqual((await push('depth', [depth(at(10, 0), 35)], restarted.key)).body.data, {
        rows: 1,
        accepted: 0,
        stale: 1,
        duplicate: 0,
      })
    } finally {
      await restarted.close()
    }
    assert.deepEqual((await server.store.readDepths(['600036.SH'])).get('600036.SH')?.bidPrices, [35.1, 35.09])
    assert.equal(ingest.feed.latestDepth('600036.SH')?.timestamp, at(10, 1))
    const q = { ...base(), symbol: '600036.SH', timestamp: at(10, 2) }
    await push('quotes', [wire(q)])
    const events = ingest.published.slice(published).flat()
    assert.deepEqual(
      events.map((e) => e.kind),
      ['depth', 'quote'],
    )
    assert.equal(ingest.feed.latestQuote('600036.SH')?.snapshot.lastPrice, q.lastPrice)
  })
})

/** A quote of 600519.SH on the live day: traded, day figures consistent. */
function base(): QuoteSnapshot {
  return {
    symbol: '600519.SH',
    timestamp: at(10, 0),
    lastPrice: 261,
    open: 260,
    high: 270,
    low: 250,
    prevClose: 261.68,
    volume: 100,
    amount: 26100.5,
  }
}
/** The first weekday after `day` (days since the epoch). */
function laterWeekday(day: number): number {
  let d = day + 1
  while (isoWeekday(d) >= 5) d++
  return d
}
function at(h: number, m: number): number {
  return sh.zone.midnightUtc(DAY) + (h * 60 + m) * 60_000
}
function toBars(d: KlinesData): Bars {
  const b = walkBars(d.timestamp, [0.5])
  for (let i = 0; i < d.timestamp.length; i++) {
    b.open[i] = d.open[i]
    b.high[i] = d.high[i]
    b.low[i] = d.low[i]
    b.close[i] = d.close[i]
    b.volume[i] = d.volume[i]
    b.amount[i] = d.amount[i]
  }
  return b
}
