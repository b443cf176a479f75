// The ClickHouse backend through the real CLI and a running `mdq serve` on a two-shard cluster:
// mdq migrate creates the tables on both shards, import and keys go through the factory, two
// instances answer alike, and an outage is a 503 {code, message} and /readyz not ready, then recovers,
// also on an instance whose klines queries run in a worker thread (--workers 1: the worker's own store recovers).
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { MIN_GRACE_MS } from '../../src/store/clickhouse/import-states.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'
import { ClickHouseCluster } from '../helpers/clickhouse.js'
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js'
import { runMdq, tempDir, writeCsv } from '../helpers/store-files.js'

const need = requires(clickhouseServer())
const { dir, cleanup } = tempDir()
const DAYS = ['2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05', '2024-01-08']

async function untilStatus(url: string, status: number, init: RequestInit = {}): Promise<Response> {
  const t0 = Date.now()
  for (;;) {
    const r = await fetch(url, init)
    if (r.status === status) return r
    await r.arrayBuffer()
    if (Date.now() - t0 > 30_000) throw new Error(`${url} stayed ${r.status}, not ${status}`)
    await sleep(100)
  }
}

describe('mdq on a two-shard ClickHouse cluster', () => {
  let cluster: ClickHouseCluster
  let store: string
  const servers: ServeProcess[] = []
  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    store = cluster.storeUrl('served')
  })
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await cluster?.destroy()
    cleanup()
  })

  need.it(
    'migrate, import, keys, two serving instances alike; an outage answers 503 and /readyz not ready, then recovers',
    async () => {
      const mdq = (...args: string[]) => {
        const r = runMdq(['--store', store, ...args])
        assert.equal(r.status, 0, r.stderr)
        return r.stdout
      }
      mdq('migrate')
      for (const s of cluster.servers) {
        const tables = await (
          await fetch(
            `${s.httpUrl}/?query=${encodeURIComponent("SELECT name FROM system.tables WHERE database = 'served' AND name LIKE 'bars%' ORDER BY name FORMAT TSV")}`,
          )
        ).text()
        assert.deepEqual(tables.trim().split('\n'), ['bars', 'bars_local'])
      }
      const csv = writeCsv(join(dir, 'bars.csv'), 'symbol,time,open,high,low,close,volume,amount', [
        ...DAYS.map((d, i) => `600000.SH,${d},${10 + i},${11 + i},${9 + i},${10.5 + i},1000,10500`),
        ...DAYS.map((d, i) => `000001.SZ,${d},${20 + i},${21 + i},${19 + i},${20.25 + i},2000,40500`),
      ])
      mdq('import', 'bars', csv)
      const key = mdq('keys', 'create', '--name', 'ch').trim()
      servers.push(
        await spawnServe(['--store', store]),
        await spawnServe(['--store', store]),
        await spawnServe(['--store', store], ['--workers', '1']),
      )
      const pooled = servers[2]
      const headers = { 'X-API-Key': key }
      const answers = await Promise.all(
        servers.map(async (s) =>
          (await untilStatus(`${s.base}/v1/klines?symbol=600000.SH&period=1d&count=3`, 200, { headers })).text(),
        ),
      )
      assert.equal(answers[0], answers[1])
      assert.equal(answers[2], answers[0])
      assert.deepEqual((JSON.parse(answers[0]) as { data: { close: number[] } }).data.close, [12.5, 13.5, 14.5])

      // The metadata server (shard 1) freezes: requests fail fast with 503, readiness drops, and all returns by itself.
      await cluster.servers[0].pause(true)
      try {
        const r = await untilStatus(`${servers[0].base}/v1/klines?symbol=000001.SZ&period=1d&count=3`, 503, { headers })
        const body = (await r.json()) as { code: number; message: string }
        assert.equal(body.code, 503)
        assert.match(body.message, /ClickHouse/)
        await (await untilStatus(`${servers[1].base}/readyz`, 503)).arrayBuffer()
        await (
          await untilStatus(`${pooled.base}/v1/klines?symbol=000001.SZ&period=1d&count=3`, 503, { headers })
        ).arrayBuffer()
      } finally {
        await cluster.servers[0].pause(false)
      }
      await (await untilStatus(`${servers[1].base}/readyz`, 200)).arrayBuffer()
      const back = await untilStatus(`${servers[0].base}/v1/klines?symbol=000001.SZ&period=1d&count=3`, 200, {
        headers,
      })
      assert.deepEqual(((await back.json()) as { data: { close: number[] } }).data.close, [22.25, 23.25, 24.25])
      const pooledBack = await untilStatus(`${pooled.base}/v1/klines?symbol=000001.SZ&period=1d&count=3`, 200, {
        headers,
      })
      assert.deepEqual(((await pooledBack.json()) as { data: { close: number[] } }).data.close, [22.25, 23.25, 24.25])
      assert.match(mdq('vacuum'), /removed the rows of 0 unfinished import/)
      // Re-importing the same file supersedes its 10 rows; once every instance serves the new version,
      // vacuum removes the old ones and the answers stay the same.
      const path = '/v1/klines?symbol=000001.SZ&period=1d&count=3'
      const etags = await Promise.all(
        servers.map(async (s) => (await fetch(`${s.base}${path}`, { headers })).headers.get('etag')),
      )
      mdq('import', 'bars', csv)
      const reimported = Date.now()
      for (const [i, s] of servers.entries()) {
        for (let t0 = Date.now(); ; await sleep(50)) {
          const r = await fetch(`${s.base}${path}`, { headers })
          await r.arrayBuffer()
          if (r.headers.get('etag') !== etags[i]) break
          assert.ok(Date.now() - t0 < 30_000, `instance ${i + 1} never saw the re-import`)
        }
      }
      // The shortest grace vacuum takes (two heartbeats of a running import) has passed since the re-import.
      await sleep(reimported + MIN_GRACE_MS + 100 - Date.now())
      assert.match(
        mdq('vacuum', '--grace', String(MIN_GRACE_MS / 1000)),
        /removed 10 superseded and 0 deleted row\(s\), 0 tombstone\(s\)\n$/,
      )
      for (const s of servers)
        assert.deepEqual(
          ((await (await fetch(`${s.base}${path}`, { headers })).json()) as { data: { close: number[] } }).data.close,
          [22.25, 23.25, 24.25],
        )
    },
  )
})
