// Two mdq instances serving the demo data from a two-shard ClickHouse cluster, sharing Redis,
// against the SQLite deployment of the same data: the same answers byte for byte over the whole
// API surface, one shared rate-limit budget, and an import through one instance seen by both.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { RedisRateLimiter } from '../../src/auth/rate-limiter.js'
import { buildDemo } from '../../src/cli/demo-command.js'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { PERIODS } from '../../src/domain/period.js'
import { DEMO_SPECS } from '../../src/demo/demo-data.js'
import { walkBars } from '../helpers/arbitraries.js'
import { ClickHouseCluster, skipWithoutClickHouse } from '../helpers/clickhouse.js'
import { RedisServer } from '../helpers/redis.js'
import { redisServer } from '../helpers/requirements.js'
import { demoDb, newKey, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const skip = skipWithoutClickHouse() || redisServer()
const { dir, cleanup } = tempDir()
const SYMBOLS = DEMO_SPECS.map((s) => s.symbol)

describe('two mdq instances on a two-shard ClickHouse cluster, sharing Redis', () => {
  let cluster: ClickHouseCluster
  let redis: RedisServer
  let sqlite: TestServer
  let a: TestServer
  let b: TestServer
  before(async () => {
    if (skip) return
    ;[cluster, redis] = await Promise.all([ClickHouseCluster.start(), RedisServer.start()])
    const url = cluster.storeUrl('demo')
    await Promise.all([buildDemo(url), demoDb(dir).then(async (db) => (sqlite = await startServer(db)))])
    const rateLimit = () => ({ limiter: new RedisRateLimiter(redis.url, 'ch:'), defaults: { ratePerMin: 1e9, burst: 1e9 }, failOpen: false })
    a = await startServer(url, { rateLimit: rateLimit() })
    b = await startServer(url, { rateLimit: rateLimit() })
  })
  after(async () => {
    await Promise.all([sqlite?.close(), a?.close(), b?.close()])
    await Promise.all([cluster?.destroy(), redis?.stop()])
    cleanup()
  })

  /** Status and body bytes of one request (ETags differ by design: each store has its own data version). */
  const answer = async (s: TestServer, path: string, init: RequestInit = {}) => {
    const r = await fetch(`${s.url}${path}`, { ...init, headers: { 'X-API-Key': s.key, 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) } })
    return `${r.status} ${r.headers.get('content-type')}\n${await r.text()}`
  }

  it('answers every kline (each symbol, period and adjust mode), ex-factor, instrument and error request exactly as SQLite does', { skip }, async () => {
    const paths: [string, RequestInit?][] = []
    for (const symbol of SYMBOLS) {
      for (const period of PERIODS) for (const adjust of ADJUSTS) paths.push([`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=300`])
      paths.push([`/v1/klines?symbol=${symbol}&period=1d&start_time=1500000000000&end_time=1600000000000&count=10000`])
      paths.push([`/v1/klines?symbol=${symbol}&period=30m&start_time=1700000000000&count=20`])
    }
    paths.push(
      [`/v1/klines/ex-factors?symbols=${SYMBOLS.join(',')}`],
      [`/v1/klines/ex-factors?symbols=600000.SH,AAPL.US&start_time=1500000000000&end_time=1700000000000`],
      [`/v1/instruments?symbols=${SYMBOLS.join(',')},999999.SH`],
      ['/v1/instruments', { method: 'POST', body: JSON.stringify({ symbols: ['AAPL.US', '00700.HK', 'NOPE.US'] }) }],
      ['/v1/instruments/search?q=bank'],
      ['/v1/klines?symbol=999999.SH'],
      ['/v1/klines?symbol=600000.SH&period=7m'],
      ['/v1/klines?symbol=600000.SH&count=0'],
    )
    let compared = 0
    for (const [path, init] of paths) {
      const want = await answer(sqlite, path, init)
      assert.equal(await answer(a, path, init), want, `instance A: ${path}`)
      assert.equal(await answer(b, path, init), want, `instance B: ${path}`)
      compared++
    }
    assert.equal(compared, SYMBOLS.length * (PERIODS.length * ADJUSTS.length + 2) + 8)
  })

  it('200 parallel requests across both instances against a burst of 50: exactly 50 get through', { skip }, async () => {
    const key = await newKey(a.keys, 'shared-burst', { ratePerMin: 1, burst: 50 })
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const r = await fetch(`${(i % 2 ? b : a).url}/v1/klines?symbol=600519.SH&count=5`, { headers: { 'X-API-Key': key } })
        await r.arrayBuffer()
        return r.status
      }),
    )
    const count = (s: number) => statuses.filter((x) => x === s).length
    assert.deepEqual([count(200), count(429)], [50, 150])
  })

  it('an import through one instance is seen by both', { skip }, async () => {
    const day = Date.UTC(2026, 0, 5) - 8 * 3_600_000 // midnight in Shanghai
    await a.store.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: walkBars([day], [0.37]) }] })
    for (const s of [a, b]) {
      const t0 = Date.now()
      for (;;) {
        const r = (await (await fetch(`${s.url}/v1/klines?symbol=600000.SH&period=1d&adjust=none&count=1`, { headers: { 'X-API-Key': s.key } })).json()) as { data: { timestamp: number[] } }
        if (r.data.timestamp[0] === day) break
        assert.ok(Date.now() - t0 < 15_000, 'the import never showed')
        await sleep(50)
      }
    }
  })
})
