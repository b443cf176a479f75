// Two mdq instances serving the demo data from a two-shard ClickHouse cluster, sharing Redis: the
// same answers byte for byte as the SQLite deployment over the whole API surface, then the whole
// HTTP contract suite (requests alternating between the instances), one shared rate-limit budget,
// and an import through one instance seen by both. The cluster starts once for the file.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildDemo } from '../../src/cli/demo-command.js'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { PERIODS } from '../../src/domain/period.js'
import { DEMO_SPECS } from '../../src/demo/demo-data.js'
import { walkBars } from '../helpers/arbitraries.js'
import { assertSameAnswers, CLICKHOUSE_CLUSTER, SQLITE, useDeployment } from '../helpers/deployments.js'
import { newKey } from '../helpers/server.js'
import { httpContractSuite } from './contract-suite.js'

const server = useDeployment(CLICKHOUSE_CLUSTER, buildDemo)
const reference = useDeployment(SQLITE, buildDemo)
const SYMBOLS = DEMO_SPECS.map((s) => s.symbol)

// First, while both hold the same data (the suite below imports into the cluster).
describe(`${CLICKHOUSE_CLUSTER.name}: the same answers as SQLite`, () => {
  server.it(
    'answers every kline (each symbol, period and adjust mode), ex-factor, instrument and error request exactly as SQLite does',
    async () => {
      const requests: [string, RequestInit?][] = []
      for (const symbol of SYMBOLS) {
        for (const period of PERIODS)
          for (const adjust of ADJUSTS)
            requests.push([`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=300`])
        requests.push([
          `/v1/klines?symbol=${symbol}&period=1d&start_time=1500000000000&end_time=1600000000000&count=10000`,
        ])
        requests.push([`/v1/klines?symbol=${symbol}&period=30m&start_time=1700000000000&count=20`])
      }
      requests.push(
        [`/v1/klines/ex-factors?symbols=${SYMBOLS.join(',')}`],
        [`/v1/klines/ex-factors?symbols=600000.SH,AAPL.US&start_time=1500000000000&end_time=1700000000000`],
        [`/v1/instruments?symbols=${SYMBOLS.join(',')},999999.SH`],
        ['/v1/instruments', { method: 'POST', body: JSON.stringify({ symbols: ['AAPL.US', '00700.HK', 'NOPE.US'] }) }],
        ['/v1/instruments/search?q=bank'],
        ['/v1/klines?symbol=999999.SH'],
        ['/v1/klines?symbol=600000.SH&period=7m'],
        ['/v1/klines?symbol=600000.SH&count=0'],
      )
      assert.equal(
        await assertSameAnswers(reference, server, requests),
        SYMBOLS.length * (PERIODS.length * ADJUSTS.length + 2) + 8,
      )
    },
  )
})

describe(`${CLICKHOUSE_CLUSTER.name}: the HTTP contract`, () => httpContractSuite(server))

describe(`${CLICKHOUSE_CLUSTER.name}: shared state`, () => {
  server.it('200 parallel requests across both instances against a burst of 50: exactly 50 get through', async () => {
    const key = await newKey(server.keys, 'shared-burst', { ratePerMin: 1, burst: 50 })
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const r = await fetch(`${server.url}/v1/klines?symbol=600519.SH&count=5`, { headers: { 'X-API-Key': key } })
        await r.arrayBuffer()
        return r.status
      }),
    )
    const count = (s: number) => statuses.filter((x) => x === s).length
    assert.deepEqual([count(200), count(429)], [50, 150])
  })

  server.it('an import through one instance is seen by both', async () => {
    const day = Date.UTC(2026, 0, 5) - 8 * 3_600_000 // midnight in Shanghai
    await server.instances[0].store.write({
      bars: [{ symbol: '600000.SH', period: '1d', bars: walkBars([day], [0.37]) }],
    })
    for (const s of server.instances) {
      const t0 = Date.now()
      for (;;) {
        const r = (await (
          await fetch(`${s.url}/v1/klines?symbol=600000.SH&period=1d&adjust=none&count=1`, {
            headers: { 'X-API-Key': s.key },
          })
        ).json()) as { data: { timestamp: number[] } }
        if (r.data.timestamp[0] === day) break
        assert.ok(Date.now() - t0 < 15_000, 'the import never showed')
        await sleep(50)
      }
    }
  })
})
