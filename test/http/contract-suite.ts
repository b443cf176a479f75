/**
 * @module The API contract row by row over real HTTP on loopback against the demo data, as one suite
 * that every deployment runs (test/http/contract*.test.ts): consecutive requests alternate between
 * a deployment's instances.
 */
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { PERIODS } from '../../src/domain/period.js'
import type { DeploymentHandle } from '../helpers/deployments.js'
import { tempDir, writeCsv } from '../helpers/store-files.js'
import { getJson, newKey, rawRequest, startServer, type KlinesData } from '../helpers/server.js'

// The body keeps the indentation it had as contract.test.ts, so that branches editing that file merge cleanly.
export function httpContractSuite(server: DeploymentHandle): void {
  const { it } = server
  const FIELDS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prev_close'] as const
  const klines = (query: string, init: RequestInit = {}) =>
    getJson<{ data: KlinesData }>(`${server.url}/v1/klines?${query}`, {
      ...init,
      headers: { 'X-API-Key': server.key, ...(init.headers as Record<string, string>) },
    })
  const error = async (path: string, init: RequestInit = {}) => {
    const r = await getJson<{ code: number; message: string }>(`${server.url}${path}`, {
      ...init,
      headers: { 'X-API-Key': server.key, ...(init.headers as Record<string, string>) },
    })
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal(r.body.code, r.status, 'code equals the HTTP status')
    return r
  }

  describe('GET /v1/klines', () => {
    it('defaults: period 1d, count 100, adjust forward; eight equal-length arrays, ascending, integers where promised', async () => {
      const r = await klines('symbol=600519.SH')
      assert.equal(r.status, 200)
      assert.deepEqual(Object.keys(r.body.data).sort(), [...FIELDS].sort())
      for (const f of FIELDS) assert.equal(r.body.data[f].length, 100, f)
      const ts = r.body.data.timestamp
      assert.ok(ts.every((t, i) => i === 0 || t > ts[i - 1]))
      assert.ok(ts.every(Number.isInteger) && r.body.data.volume.every(Number.isInteger))
      const explicit = await klines('symbol=600519.SH&period=1d&count=100&adjust=forward')
      assert.deepEqual(explicit.body, r.body)
      // 1d bars are stamped at local midnight: 16:00 UTC the day before for Shanghai.
      assert.ok(ts.every((t) => new Date(t).getUTCHours() === 16))
    })

    it('adjusted prices carry at most 4 decimals; unadjusted are as stored', async () => {
      const r = await klines('symbol=AAPL.US&count=2000&adjust=backward')
      for (const f of ['open', 'high', 'low', 'close', 'prev_close'] as const)
        assert.ok(
          r.body.data[f].every((x) => Math.abs(x * 1e4 - Math.round(x * 1e4)) < 1e-6),
          f,
        )
      const raw = await klines('symbol=AAPL.US&count=5&adjust=none')
      assert.ok(raw.body.data.close.every((x) => Math.abs(x * 100 - Math.round(x * 100)) < 1e-9))
    })

    it('selects the latest count inside [start_time, end_time] (inclusive) and pages backwards exactly', async () => {
      const all = (await klines('symbol=000001.SZ&count=300&adjust=none')).body.data
      const [from, to] = [all.timestamp[100], all.timestamp[199]]
      const page = (await klines(`symbol=000001.SZ&count=1000&adjust=none&start_time=${from}&end_time=${to}`)).body.data
      assert.deepEqual(page.timestamp, all.timestamp.slice(100, 200))
      const latest = (await klines(`symbol=000001.SZ&count=10&adjust=none&start_time=${from}&end_time=${to}`)).body.data
      assert.deepEqual(latest.timestamp, all.timestamp.slice(190, 200))
      // Paging: next end_time = first timestamp - 1; forward-adjusted pages join up exactly.
      const joined: number[] = []
      let end: number | undefined
      for (let p = 0; p < 3; p++) {
        const d = (
          await klines(`symbol=000001.SZ&count=100&adjust=forward${end === undefined ? '' : `&end_time=${end}`}`)
        ).body.data
        joined.unshift(...d.close)
        end = d.timestamp[0] - 1
      }
      assert.deepEqual(joined, (await klines('symbol=000001.SZ&count=300&adjust=forward')).body.data.close)
      const empty = (await klines('symbol=000001.SZ&end_time=10000000000')).body.data
      for (const f of FIELDS) assert.deepEqual(empty[f], [])
    })

    it('every period and adjust mode answers consistent bars', async () => {
      for (const period of PERIODS) {
        for (const adjust of ADJUSTS) {
          const r = await klines(`symbol=00700.HK&period=${period}&adjust=${adjust}&count=50`)
          assert.equal(r.status, 200, `${period} ${adjust}`)
          const d = r.body.data
          assert.ok(d.timestamp.length > 0, `${period} ${adjust} has bars`)
          for (const f of FIELDS) assert.equal(d[f].length, d.timestamp.length)
          for (let i = 0; i < d.timestamp.length; i++)
            assert.ok(
              d.low[i] <= Math.min(d.open[i], d.close[i]) + 1e-9 && d.high[i] >= Math.max(d.open[i], d.close[i]) - 1e-9,
              `${period} ${adjust} bar ${i}`,
            )
        }
      }
    })

    it('prev_close[i] == close[i-1] across ex-dates in every mode but none (daily)', async () => {
      const events = (
        await getJson<{ data: Record<string, { timestamp: number }[]> }>(
          `${server.url}/v1/klines/ex-factors?symbols=601318.SH`,
          { headers: { 'X-API-Key': server.key } },
        )
      ).body.data['601318.SH']
      assert.ok(events.length >= 5)
      for (const adjust of ['forward', 'backward', 'forward_additive', 'backward_additive']) {
        const d = (await klines(`symbol=601318.SH&count=3000&adjust=${adjust}`)).body.data
        let checked = 0
        for (const e of events) {
          const i = d.timestamp.indexOf(e.timestamp)
          if (i > 0) {
            assert.ok(
              Math.abs(d.prev_close[i] - d.close[i - 1]) <= 1.5e-4,
              `${adjust} at ${new Date(e.timestamp).toISOString()}: ${d.prev_close[i]} vs ${d.close[i - 1]}`,
            )
            checked++
          }
        }
        assert.ok(checked >= 5)
      }
      const none = (await klines('symbol=601318.SH&count=3000&adjust=none')).body.data
      const i = none.timestamp.indexOf(events[events.length - 1].timestamp)
      assert.ok(none.prev_close[i] < none.close[i - 1], 'raw prev_close on an ex-date is the reference price')
    })

    it('weekly adjusted bars are aggregates of daily adjusted bars (an ex-date inside a week)', async () => {
      const weekly = (await klines('symbol=600000.SH&period=1w&count=600&adjust=forward')).body.data
      const daily = (await klines('symbol=600000.SH&period=1d&count=3000&adjust=forward')).body.data
      const w = weekly.timestamp.length - 30
      const inWeek = daily.timestamp
        .map((t, i) => i)
        .filter((i) => daily.timestamp[i] >= weekly.timestamp[w] && daily.timestamp[i] < weekly.timestamp[w + 1])
      assert.ok(inWeek.length >= 3)
      assert.equal(weekly.high[w], Math.max(...inWeek.map((i) => daily.high[i])))
      assert.equal(
        weekly.volume[w],
        inWeek.reduce((a, i) => a + daily.volume[i], 0),
      )
      assert.equal(weekly.close[w], daily.close[inWeek[inWeek.length - 1]])
    })

    it('60m bars of CN start at 09:30, 10:30, 13:00, 14:00 local', async () => {
      const d = (await klines('symbol=600519.SH&period=60m&count=8&adjust=none')).body.data
      const local = d.timestamp.map((t) => new Date(t + 8 * 3_600_000).toISOString().slice(11, 16))
      assert.deepEqual(local, ['09:30', '10:30', '13:00', '14:00', '09:30', '10:30', '13:00', '14:00'])
    })

    const bad: [string, RegExp][] = [
      ['symbol=600519.SH&count=0', /Parameter 'count' must be at least 1/],
      ['symbol=600519.SH&count=10001', /Parameter 'count' must be at most 10000/],
      ['symbol=600519.SH&count=abc', /Parameter 'count' must be an integer/],
      ['symbol=600519.SH&count=1.5', /Parameter 'count' must be an integer/],
      ['symbol=600519.SH&start_time=-1', /Parameter 'start_time' must be an integer of epoch milliseconds/],
      [
        'symbol=600519.SH&end_time=99999999999999999999',
        /Parameter 'end_time' must be an integer of epoch milliseconds: 0, or from 10000000000 .* to 9007199254740991/,
      ],
      [
        'symbol=600519.SH&start_time=20000000000&end_time=10000000000',
        /'start_time' \(20000000000\) must not be after 'end_time' \(10000000000\)/,
      ],
      [
        'symbol=600519.SH&period=2m',
        /Parameter 'period' must be one of 1m, 5m, 10m, 15m, 30m, 60m, 1d, 1w, 1M, 1Q, 1Y/,
      ],
      [
        'symbol=600519.SH&adjust=qfq',
        /Parameter 'adjust' must be one of none, forward, backward, forward_additive, backward_additive/,
      ],
      ['symbol=600519', /Parameter 'symbol': '600519' is not of the form/],
      ['symbol=6005.SH', /expected 6 digits/],
      ['symbol=600519.SH&count=5&count=6', /Parameter 'count' is given more than once/],
      ['symbol=600519.SH&count=', /Parameter 'count' is empty/],
      ['period=1d', /Parameter 'symbol' is required/],
    ]
    for (const [query, message] of bad) {
      it(`400 for ${query}`, async () => {
        const r = await error(`/v1/klines?${query}`)
        assert.equal(r.status, 400)
        assert.match(r.body.message, message)
      })
    }

    it('404 for a well-formed unknown symbol', async () => {
      const r = await error('/v1/klines?symbol=688999.SH')
      assert.equal(r.status, 404)
      assert.match(r.body.message, /Unknown symbol '688999.SH'/)
    })

    it('symbols are case-insensitive and answered canonically', async () => {
      assert.deepEqual((await klines('symbol=aapl.us&count=3')).body, (await klines('symbol=AAPL.US&count=3')).body)
    })
  })

  describe('batch endpoints', () => {
    const withKey = {
      get headers() {
        return { 'X-API-Key': server.key }
      },
    }

    it('GET and POST /v1/instruments: order kept, unknown left out, duplicates once, every field present', async () => {
      const get = await getJson<{ data: { symbol: string; ext: Record<string, unknown> }[] }>(
        `${server.url}/v1/instruments?symbols=AAPL.US,600000.sh,999999.SH,AAPL.US`,
        withKey,
      )
      assert.deepEqual(
        get.body.data.map((i) => i.symbol),
        ['AAPL.US', '600000.SH'],
      )
      assert.deepEqual(Object.keys(get.body.data[0].ext).sort(), [
        'float_shares',
        'limit_down',
        'limit_up',
        'listing_date',
        'tick_size',
        'total_shares',
        'type',
      ])
      const post = await getJson(`${server.url}/v1/instruments`, {
        method: 'POST',
        headers: { ...withKey.headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ symbols: ['AAPL.US', '600000.SH', '999999.SH'] }),
      })
      assert.deepEqual(post.body, get.body)
      const bodyErr = await error('/v1/instruments', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"symbols": [',
      })
      assert.equal(bodyErr.status, 400)
      assert.match(bodyErr.body.message, /not valid JSON/)
    })

    it('list bounds: empty, too long (1000 / 100), malformed member', async () => {
      assert.match((await error('/v1/instruments?symbols=,')).body.message, /at least one symbol/)
      const many = Array.from({ length: 1001 }, (_, i) => `${String(i).padStart(6, '0')}.SH`).join(',')
      assert.match((await error(`/v1/instruments?symbols=${many}`)).body.message, /at most 1000 symbols \(got 1001\)/)
      const hundredOne = Array.from({ length: 101 }, (_, i) => `${String(i).padStart(6, '0')}.SH`).join(',')
      assert.match((await error(`/v1/klines/ex-factors?symbols=${hundredOne}`)).body.message, /at most 100 symbols/)
      assert.equal((await error('/v1/instruments?symbols=AAPL.US,bad')).status, 400)
    })

    it('ex-factors: keyed by canonical symbol, ascending, [] for a known symbol without events, range inclusive', async () => {
      const r = await getJson<{ data: Record<string, { timestamp: number; ex_factor: number }[]> }>(
        `${server.url}/v1/klines/ex-factors?symbols=aapl.us,09988.HK,000300.SH`,
        withKey,
      )
      assert.deepEqual(Object.keys(r.body.data), ['AAPL.US', '09988.HK'])
      const aapl = r.body.data['AAPL.US']
      assert.ok(aapl.every((e, i) => i === 0 || e.timestamp > aapl[i - 1].timestamp))
      const split = aapl.find((e) => Math.abs(e.ex_factor - 4) < 0.01)!
      assert.equal(new Date(split.timestamp).toISOString(), '2020-08-31T04:00:00.000Z')
      const one = await getJson<{ data: Record<string, unknown[]> }>(
        `${server.url}/v1/klines/ex-factors?symbols=AAPL.US&start_time=${split.timestamp}&end_time=${split.timestamp}`,
        withKey,
      )
      assert.deepEqual(one.body.data['AAPL.US'], [split])
    })
  })

  describe('authentication', () => {
    it('401 for a missing, unknown, mismatched or revoked key; header (any case) or query both work', async () => {
      const url = `${server.url}/v1/klines?symbol=AAPL.US&count=1`
      assert.equal((await getJson(url)).status, 401)
      assert.match(
        (await getJson<{ message: string }>(url, { headers: { 'X-API-Key': 'mdq_nope' } })).body.message,
        /Unknown API key/,
      )
      assert.equal((await getJson(url, { headers: { 'x-api-key': server.key } })).status, 200)
      assert.equal((await rawRequest(url, { 'X-Api-KEY': server.key })).status, 200)
      assert.equal((await getJson(`${url}&api_key=${server.key}`)).status, 200)
      assert.equal(
        (await getJson(`${url}&api_key=${server.key}`, { headers: { 'X-API-Key': server.key } })).status,
        200,
      )
      assert.match(
        (await getJson<{ message: string }>(`${url}&api_key=other`, { headers: { 'X-API-Key': server.key } })).body
          .message,
        /hold different keys/,
      )
    })

    it('a key revoked by `mdq keys revoke` in another process stops working once the 0.5 s key cache has expired (plus a remote store key poll)', async () => {
      const key = await newKey(server.keys, 'to-revoke')
      const url = `${server.url}/v1/klines?symbol=AAPL.US&count=1`
      assert.equal((await getJson(url, { headers: { 'X-API-Key': key } })).status, 200)
      const id = (await server.keys.listKeys()).find((k) => k.name === 'to-revoke')!.id
      server.mdq(['keys', 'revoke', String(id)])
      // A timer never fires early: after 600 ms the cached entry is older than its 500 ms, however loaded the machine.
      const { keysPollMs } = server.deployment
      await new Promise((r) => setTimeout(r, 600 + keysPollMs))
      // A polling store also needs its poll's round trip, which a loaded machine can stretch: that one is waited for.
      const deadline = Date.now() + (keysPollMs ? 15_000 : 0)
      let status = (await getJson(`${server.url}/v1/klines?symbol=AAPL.US&count=1`, { headers: { 'X-API-Key': key } }))
        .status
      while (status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        status = (await getJson(`${server.url}/v1/klines?symbol=AAPL.US&count=1`, { headers: { 'X-API-Key': key } }))
          .status
      }
      assert.equal(status, 401)
    })

    it('openapi.json needs no key and documents the routes and both key schemes', async () => {
      const r = await getJson<{
        openapi: string
        paths: Record<string, unknown>
        components: { securitySchemes: Record<string, { in: string; name: string }> }
      }>(`${server.url}/openapi.json`)
      assert.equal(r.status, 200)
      assert.equal(r.body.openapi, '3.1.0')
      assert.deepEqual(Object.keys(r.body.paths).sort(), [
        '/healthz',
        '/metrics',
        '/readyz',
        '/v1/depth',
        '/v1/exchanges',
        '/v1/exchanges/{exchange}/instruments',
        '/v1/financials/balance-sheet',
        '/v1/financials/cash-flow',
        '/v1/financials/income',
        '/v1/financials/metrics',
        '/v1/financials/shares',
        '/v1/financials/{*}',
        '/v1/instruments',
        '/v1/instruments/search',
        '/v1/klines',
        '/v1/klines/batch',
        '/v1/klines/ex-factors',
        '/v1/klines/intraday',
        '/v1/klines/intraday/batch',
        '/v1/quotes',
        '/v1/universes',
        '/v1/universes/batch',
        '/v1/universes/{id}',
      ])
      assert.deepEqual(r.body.components.securitySchemes.ApiKeyQuery, { type: 'apiKey', in: 'query', name: 'api_key' })
    })

    it('openapi.json marks a parameter with a default optional (the server fills it in)', async () => {
      type Param = { name: string; in: string; required?: boolean; schema: { default?: unknown } }
      const doc = await getJson<{ paths: Record<string, { get?: { parameters: Param[] } }> }>(
        `${server.url}/openapi.json`,
      )
      const params = (path: string) =>
        Object.fromEntries(doc.body.paths[path].get!.parameters.map((p) => [p.name, p] as const))
      const klines = params('/v1/klines')
      assert.equal(klines.symbol.required, true)
      for (const [name, value] of [
        ['period', '1d'],
        ['count', 100],
        ['adjust', 'forward'],
      ] as const) {
        assert.equal(klines[name].schema.default, value, name)
        assert.notEqual(klines[name].required, true, name)
      }
      assert.notEqual(params('/v1/klines/intraday').period.required, true)
      // Every documented parameter is one or the other: required without a default, or a default and optional.
      for (const [path, ops] of Object.entries(doc.body.paths))
        for (const p of ops.get?.parameters ?? [])
          if (p.schema.default !== undefined) assert.notEqual(p.required, true, `${path} ${p.name}`)
    })
  })

  describe('HTTP details', () => {
    it('404 JSON for unknown paths, 405 with Allow for wrong methods', async () => {
      const nf = await error('/v2/nothing')
      assert.equal(nf.status, 404)
      const r = await rawRequest(`${server.url}/v1/klines`, {}, 'DELETE')
      assert.equal(r.status, 405)
      assert.equal(r.headers.allow, 'GET, HEAD')
      assert.deepEqual(JSON.parse(r.body.toString()), {
        code: 405,
        message: 'Method DELETE is not allowed on /v1/klines; allowed: GET, HEAD.',
      })
      for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/']) {
        const wrong = await rawRequest(`${server.url}${path}`, {}, 'POST')
        assert.equal(wrong.status, 405, path)
        assert.equal(wrong.headers.allow, 'GET, HEAD', path)
        assert.equal(JSON.parse(wrong.body.toString()).code, 405, path)
      }
    })

    it('GET with Content-Type: application/json and no body works (the Python SDK sends it)', async () => {
      const r = await klines('symbol=AAPL.US&count=2', { headers: { 'Content-Type': 'application/json' } })
      assert.equal(r.status, 200)
    })

    it('414 for an oversized URL, 431 for oversized headers, both JSON', async () => {
      const long = await rawRequest(`${server.url}/v1/klines?symbol=AAPL.US&x=${'a'.repeat(15_500)}`, {
        'X-API-Key': server.key,
      })
      assert.equal(long.status, 414)
      assert.equal(JSON.parse(long.body.toString()).code, 414)
      const huge = await rawRequest(`${server.url}/v1/klines?symbol=AAPL.US`, {
        'X-API-Key': server.key,
        'X-Big': 'b'.repeat(20_000),
      })
      assert.equal(huge.status, 431)
      assert.equal(JSON.parse(huge.body.toString()).code, 431)
    })

    it('ETag: a repeated request is a 304; the tag changes when the data changes', async () => {
      // Each request goes to the next instance: the tag is the same on every instance of the deployment.
      const path = '/v1/klines?symbol=600000.SH&count=10'
      const first = await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key })
      const tag = first.headers.etag as string
      assert.ok(tag)
      const again = await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key, 'If-None-Match': tag })
      assert.equal(again.status, 304)
      assert.equal(again.body.length, 0)
      // If-None-Match compares weakly: the same tag without W/ matches too (RFC 9110, 13.1.2).
      assert.match(tag, /^W\//)
      const strong = await rawRequest(`${server.url}${path}`, {
        'X-API-Key': server.key,
        'If-None-Match': tag.slice(2),
      })
      assert.equal(strong.status, 304)
      // HEAD is GET without the body: the same tag, and GET's tag makes it a 304.
      const head = await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key }, 'HEAD')
      assert.equal(head.status, 200)
      assert.equal(head.headers.etag, tag)
      const headAgain = await rawRequest(
        `${server.url}${path}`,
        { 'X-API-Key': server.key, 'If-None-Match': tag },
        'HEAD',
      )
      assert.equal(headAgain.status, 304)
      const { dir, cleanup } = tempDir()
      server.mdq([
        'import',
        'ex-factors',
        writeCsv(`${dir}/ef.csv`, 'symbol,ex_date,ex_factor', ['600000.SH,2016-03-01,1.01']),
      ])
      cleanup()
      // A remote store's data version is polled (<= 1 s stale): wait for the change, generously.
      const t0 = Date.now()
      let after = await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key, 'If-None-Match': tag })
      while (after.status === 304 && Date.now() - t0 < 15_000) {
        await new Promise((r) => setTimeout(r, 50))
        after = await rawRequest(`${server.url}${path}`, { 'X-API-Key': server.key, 'If-None-Match': tag })
      }
      assert.equal(after.status, 200)
      assert.notEqual(after.headers.etag, tag)
    })

    it('br and gzip responses decode to the same JSON as identity', async () => {
      const url = `${server.url}/v1/klines?symbol=SPY.US&period=1m&count=5000`
      const plain = await rawRequest(url, { 'X-API-Key': server.key })
      const gz = await rawRequest(url, { 'X-API-Key': server.key, 'Accept-Encoding': 'gzip' })
      const br = await rawRequest(url, { 'X-API-Key': server.key, 'Accept-Encoding': 'br' })
      assert.equal(gz.headers['content-encoding'], 'gzip')
      assert.equal(br.headers['content-encoding'], 'br')
      // The bytes depend on Accept-Encoding, also when a client took them plain: a shared cache must know.
      for (const r of [plain, gz, br]) assert.equal(r.headers.vary, 'accept-encoding')
      assert.ok(br.body.length < plain.body.length / 3)
      assert.deepEqual(JSON.parse(gunzipSync(gz.body).toString()), JSON.parse(plain.body.toString()))
      assert.deepEqual(JSON.parse(brotliDecompressSync(br.body).toString()), JSON.parse(plain.body.toString()))
    })
  })

  describe('operator endpoints', () => {
    it('/healthz and /readyz need no key; /readyz checks the store, the keys and any shared rate limiter', async () => {
      assert.deepEqual((await getJson(`${server.url}/healthz`)).body, { status: 'ok' })
      assert.deepEqual((await getJson(`${server.url}/readyz`)).body, {
        status: 'ready',
        checks: Object.fromEntries(server.deployment.readyChecks.map((c) => [c, 'ok'])),
      })
    })

    it('/metrics parses as Prometheus text and its counters move with requests', async () => {
      const base = server.instances[0].url // counters are per instance
      const scrape = async () => {
        const r = await fetch(`${base}/metrics`)
        assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
        const text = await r.text()
        const samples = new Map<string, number>()
        for (const line of text.split('\n')) {
          if (line === '' || line.startsWith('#')) continue
          const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.eE+-]+|nan|\+inf|-inf)$/i.exec(line) // Prometheus parses NaN/Inf in any case
          assert.ok(m, `not a Prometheus sample line: ${line}`)
          samples.set(m[1], Number(m[2]))
        }
        return { samples, text }
      }
      const route = 'mdq_http_requests_total{route="/v1/klines",method="GET",status="200"}'
      const before = (await scrape()).samples.get(route) ?? 0
      for (let i = 0; i < 3; i++)
        await (
          await fetch(`${base}/v1/klines?symbol=600000.SH&count=${i + 1}`, { headers: { 'X-API-Key': server.key } })
        ).text()
      const { samples, text } = await scrape()
      assert.equal(samples.get(route), before + 3)
      assert.ok((samples.get('mdq_store_read_duration_seconds_count{operation="bars"}') ?? 0) > 0)
      assert.ok(samples.has('mdq_response_cache_hits_total') && samples.has('mdq_store_imports_total'))
      assert.ok(!text.includes(server.key), 'never a key')
    })

    it(
      '/readyz turns 503 when the store file cannot be read',
      async () => {
        const { chmodSync, copyFileSync } = await import('node:fs')
        const { dir, cleanup } = tempDir()
        const broken = `${dir}/broken.db`
        copyFileSync(server.storeUrl, broken)
        const other = await startServer(broken)
        try {
          assert.equal((await getJson(`${other.url}/readyz`)).status, 200)
          // Replace the file's header with garbage: every read now fails.
          const { openSync, writeSync, closeSync } = await import('node:fs')
          const fd = openSync(broken, 'r+')
          writeSync(fd, Buffer.alloc(100, 0x42), 0, 100, 0)
          closeSync(fd)
          chmodSync(broken, 0o000)
          const r = await getJson<{ code: number; checks: Record<string, string> }>(`${other.url}/readyz`)
          assert.equal(r.status, 503)
          assert.deepEqual(r.body.checks, { store: 'unreadable', keys: 'ok' })
        } finally {
          chmodSync(broken, 0o644)
          await other.close().catch(() => undefined)
          cleanup()
        }
      },
      'storeFile',
    )
  })

  describe('derived periods and the selection window', () => {
    it('a start_time inside a week or an hour never yields a partial bar stamped before it', async () => {
      const daily = (await klines('symbol=600519.SH&period=1d&count=30&adjust=none')).body.data
      const wednesday = daily.timestamp.find((t) => new Date(t + 8 * 3_600_000).getUTCDay() === 3)!
      const weekly = (await klines(`symbol=600519.SH&period=1w&count=100&adjust=none&start_time=${wednesday}`)).body
        .data
      assert.ok(weekly.timestamp.length > 0)
      assert.ok(
        weekly.timestamp.every((t) => t >= wednesday),
        'every bar is stamped at or after start_time',
      )
      const hourly = (await klines('symbol=600519.SH&period=60m&count=8&adjust=none')).body.data
      const midHour = hourly.timestamp[4] + 15 * 60_000
      const after = (await klines(`symbol=600519.SH&period=60m&count=100&adjust=none&start_time=${midHour}`)).body.data
      assert.deepEqual(after.timestamp, hourly.timestamp.slice(5))
    })
  })
}
