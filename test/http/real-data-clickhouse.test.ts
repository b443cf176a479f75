// Real data on two mdq instances serving a two-shard ClickHouse cluster, sharing Redis: every kline
// (each symbol, period and adjust mode, whole and paged), ex-factor and instrument answer byte for
// byte as the SQLite deployment's, then the real-data suite (requests alternating between the
// instances). The cluster starts once for the file.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { PERIODS } from '../../src/domain/period.js'
import { assertSameAnswers, CLICKHOUSE_CLUSTER, SQLITE, useDeployment } from '../helpers/deployments.js'
import { loadRealData, REAL_DATA_SKIP, REAL_DATA_SYMBOLS, realDataSuite } from './real-data-suite.js'

const server = useDeployment(CLICKHOUSE_CLUSTER, loadRealData, { skip: REAL_DATA_SKIP })
const reference = useDeployment(SQLITE, loadRealData, { skip: REAL_DATA_SKIP })

describe(`real data, ${CLICKHOUSE_CLUSTER.name}: the same answers as SQLite`, () => {
  server.it('answers every kline, ex-factor and instrument request exactly as SQLite does', async () => {
    const requests: [string][] = []
    for (const symbol of REAL_DATA_SYMBOLS) {
      for (const period of PERIODS)
        for (const adjust of ADJUSTS)
          requests.push([`/v1/klines?symbol=${symbol}&period=${period}&adjust=${adjust}&count=10000`])
      for (const adjust of ADJUSTS)
        requests.push([
          `/v1/klines?symbol=${symbol}&period=1d&adjust=${adjust}&start_time=1262304000000&end_time=1420070400000&count=250`,
        ])
    }
    const symbols = REAL_DATA_SYMBOLS.join(',')
    requests.push(
      [`/v1/klines/ex-factors?symbols=${symbols}`],
      [`/v1/klines/ex-factors?symbols=${symbols}&start_time=1262304000000&end_time=1577836800000`],
      [`/v1/instruments?symbols=${symbols}`],
    )
    assert.equal(
      await assertSameAnswers(reference, server, requests),
      REAL_DATA_SYMBOLS.length * (PERIODS.length + 1) * ADJUSTS.length + 3,
    )
  })
})

describe(`real data, ${CLICKHOUSE_CLUSTER.name}`, () => realDataSuite(server))
