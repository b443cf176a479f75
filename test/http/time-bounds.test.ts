// start_time and end_time are epoch milliseconds on every route that takes them: epoch seconds and
// dates (YYYYMMDD, YYYY-MM-DD) were read as milliseconds of 1970 and answered 200 with the latest bars;
// now they are a 400 that says epoch milliseconds and gives the value meant.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let server: TestServer
/** Every documented GET route with its required parameters and whether it takes the time bounds, from /openapi.json. */
let timed: { path: string; required: string[] }[]
before(async () => {
  server = await startServer(await demoDb(dir))
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string; required?: boolean }[] }>>
  }
  timed = Object.entries(doc.paths).flatMap(([path, ops]) => {
    const names = (ops.get?.parameters ?? []).filter((p) => p.in === 'query')
    return names.some((p) => p.name === 'start_time') && names.some((p) => p.name === 'end_time')
      ? [{ path, required: names.filter((p) => p.required).map((p) => p.name) }]
      : []
  })
})
after(async () => {
  await server.close()
  cleanup()
})

type ErrorBody = { code: number; message: string }
const get = <T>(path: string) => getJson<T>(`${server.url}${path}`, { headers: { 'X-API-Key': server.key } })
async function refused(path: string, ...messages: RegExp[]): Promise<string> {
  const r = await get<ErrorBody>(path)
  assert.equal(r.status, 400, `${path}: ${JSON.stringify(r.body)}`)
  assert.equal(r.body.code, 400)
  for (const m of messages) assert.match(r.body.message, m, path)
  return r.body.message
}

// 2024-01-01 00:00 in Shanghai (UTC+8) and New York (EST, UTC-5), and 2025-01-01T00:00:00Z in seconds.
const SH_2024 = Date.UTC(2023, 11, 31, 16)
const NY_2024 = Date.UTC(2024, 0, 1, 5)
const SECONDS_2025 = Date.UTC(2025, 0, 1) / 1000

describe('time bounds are epoch milliseconds', () => {
  it('the routes with start_time and end_time are klines, klines/batch and ex-factors (the list below is not empty)', () => {
    assert.deepEqual(timed.map((r) => r.path).sort(), ['/v1/klines', '/v1/klines/batch', '/v1/klines/ex-factors'])
  })

  it('on each of them, epoch seconds and dates in either bound are a 400 saying epoch milliseconds, with the value meant', async () => {
    for (const { path, required } of timed) {
      const symbol = required.includes('symbol') ? 'symbol=600000.SH' : 'symbols=600000.SH'
      for (const param of ['start_time', 'end_time']) {
        const url = (value: string) => `${path}?${symbol}&${param}=${value}`
        const rule = new RegExp(`Parameter '${param}' must be an integer of epoch milliseconds`)
        await refused(
          url(String(SECONDS_2025)),
          rule,
          /looks like epoch seconds \(2025-01-01T00:00:00Z\)/,
          /1735689600000\./,
        )
        await refused(url('1735689600.0'), rule, /in milliseconds that is 1735689600000\./)
        await refused(url('662688000'), rule, /epoch seconds \(1991-01-01T00:00:00Z\)/) // nine digits: seconds of 1973-2001
        const meant = param === 'start_time' ? SH_2024 : SH_2024 + 86_400_000 - 1
        for (const date of ['20240101', '2024-01-01'])
          await refused(
            url(date),
            rule,
            new RegExp(`the date 2024-01-01; its (first|last) millisecond is ${meant} in Asia/Shanghai\\.`),
          )
        await refused(
          url('1735689600000000'),
          rule,
          /looks like epoch microseconds .* in milliseconds that is 1735689600000\./,
        )
        await refused(url('1000'), rule) // too small to be any bar's time: no guess offered
        await refused(url('-1'), rule)
      }
    }
  })

  it('a date is read in the zone of each exchange asked for', async () => {
    await refused(
      '/v1/klines/batch?symbols=600000.SH,AAPL.US,00700.HK&start_time=2024-01-01',
      new RegExp(`${SH_2024} in Asia/Shanghai, ${NY_2024} in America/New_York, ${SH_2024} in Asia/Hong_Kong\\.`),
    )
  })

  it('the value suggested for a date selects the bars of that date on', async () => {
    const message = await refused('/v1/klines?symbol=600000.SH&start_time=20240101', /first millisecond/)
    const meant = /is (\d+) in/.exec(message)![1]
    const bars = (await get<{ data: KlinesData }>(`/v1/klines?symbol=600000.SH&start_time=${meant}&count=10000`)).body
      .data
    // 2024-01-02, the first trading day of 2024, stamped with its local midnight.
    assert.equal(bars.timestamp[0], Date.UTC(2024, 0, 1, 16))
  })

  it('0, every stored bar time and the largest safe integer still answer 200', async () => {
    for (const symbol of ['600000.SH', 'AAPL.US', '00700.HK']) {
      for (const period of ['1d', '1m']) {
        const all = (await get<{ data: KlinesData }>(`/v1/klines?symbol=${symbol}&period=${period}&count=10000`)).body
          .data.timestamp
        assert.ok(all.length > 0)
        for (const t of [all[0], all.at(-1)!]) {
          const r = await get<{ data: KlinesData }>(
            `/v1/klines?symbol=${symbol}&period=${period}&start_time=${t}&end_time=${t}`,
          )
          assert.equal(r.status, 200, JSON.stringify(r.body))
          assert.deepEqual(r.body.data.timestamp, [t])
        }
      }
    }
    for (const q of ['start_time=0', 'end_time=9007199254740991', 'start_time=10000000000&end_time=10000000000']) {
      const r = await get<{ data: KlinesData }>(`/v1/klines?symbol=600000.SH&count=1&${q}`)
      assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body)}`)
    }
  })
})
