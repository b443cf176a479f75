// Two instances over a two-shard ClickHouse cluster sharing a real Redis, each wired as `mdq serve
// --ingest-port --redis-url` wires it: quotes and a depth pushed to A's ingest listener reach B's
// subscribers in order with exactly the pushed figures, and B's /v1/quotes and /v1/depth answer them
// (read from the cluster they share); with Redis killed, A's own subscribers still get A's pushes and
// A's /readyz says the fan-out is lost; with Redis back, B catches up and new pushes reach it again.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe } from 'node:test'
import { MARKETS } from '../../src/domain/market.js'
import { RedisFanout } from '../../src/live/redis-fanout.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { ClickHouseCluster } from '../helpers/clickhouse.js'
import { startIngest, type TestIngest } from '../helpers/ingest-server.js'
import { RedisServer } from '../helpers/redis.js'
import { clickhouseServer, redisServer, requires } from '../helpers/requirements.js'
import { getJson, startServer, type TestServer } from '../helpers/server.js'
import { runMdq, tempDir, writeCsv } from '../helpers/store-files.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'
import { until } from '../helpers/wait.js'

const need = requires(clickhouseServer(), redisServer())
// Wednesday 2026-11-18 10:00 in Shanghai, both servers' clock: the pushes are of the minute before, today.
const NOW = MARKETS.SH.zone.utcOf(2026, 11, 18, 10 * 60)
const SYMBOL = '600036.SH'
const PUSHED = ['symbol', 'timestamp', 'last_price', 'open', 'high', 'low', 'prev_close', 'volume', 'amount'] as const

/** The i-th TickFlow Quote of the minute before NOW, the day's figures cumulative. */
const quote = (i: number) => {
  const last = Math.round((35 + i * 0.07) * 100) / 100
  const volume = 1200 * (i + 1)
  return {
    symbol: SYMBOL,
    timestamp: NOW - 60_000 + i * 1000,
    last_price: last,
    open: 35.0,
    high: Math.max(35.0, last),
    low: 34.9,
    prev_close: 34.8,
    volume,
    amount: Math.round(volume * 100 * last * 100) / 100,
  }
}
const depth = (i: number) => ({
  symbol: SYMBOL,
  timestamp: NOW - 60_000 + i * 1000,
  bid_prices: [35.11 + i / 100, 35.1 + i / 100],
  bid_volumes: [40, 70 + i],
  ask_prices: [35.13 + i / 100, 35.14 + i / 100],
  ask_volumes: [25, 30],
})
const pick = (q: Record<string, unknown>) => Object.fromEntries(PUSHED.map((f) => [f, q[f]]))

interface Instance {
  readonly server: TestServer
  readonly ingest: TestIngest
  readonly fanout: RedisFanout
}

describe('two instances over a two-shard ClickHouse cluster, streams fanned out through Redis', () => {
  const { dir, cleanup } = tempDir()
  let cluster: ClickHouseCluster
  let redis: RedisServer
  const instances: Instance[] = []
  let a: Instance
  let b: Instance

  async function instance(store: string): Promise<Instance> {
    const hub = new StreamHub()
    const fanout = new RedisFanout(redis.url, hub)
    const server = await startServer(store, { live: { hub, fanout }, now: () => NOW })
    const started = { server, fanout, ingest: await startIngest(server, {}, hub) }
    instances.push(started)
    await until(() => fanout.reachable(), 'the fan-out to subscribe')
    return started
  }
  const push = async (i: Instance, kind: 'quotes' | 'depth', rows: readonly object[]) => {
    const res = await fetch(`${i.ingest.url}/v1/ingest/${kind}`, {
      method: 'POST',
      headers: { 'X-API-Key': i.ingest.key, 'Content-Type': 'application/json' },
      body: JSON.stringify(rows),
    })
    assert.equal(res.status, 200, await res.text())
  }
  const read = <T>(i: Instance, path: string) =>
    getJson<{ data: T }>(`${i.server.url}${path}`, { headers: { 'X-API-Key': i.server.key } })
  const liveQuote = async (i: Instance) =>
    (await read<Record<string, unknown>[]>(i, `/v1/quotes?symbols=${SYMBOL}`)).body.data[0]
  const ready = (i: Instance) => getJson<{ checks: Record<string, string> }>(`${i.server.url}/readyz`)
  const subscribed = async (i: Instance) => {
    const client = await StreamClient.open(streamUrl(i.server.url, i.server.key))
    for (const channel of ['quotes', 'depth'])
      assert.equal((await client.request({ op: 'subscribe', channel, symbols: [SYMBOL] })).op, 'subscribed')
    return client
  }

  before(async () => {
    if (!need.met) return
    ;[cluster, redis] = await Promise.all([ClickHouseCluster.start(), RedisServer.start()])
    const store = cluster.storeUrl('fanout')
    const mdq = (...args: string[]) => assert.equal(runMdq(['--store', store, ...args]).status, 0)
    mdq('migrate')
    mdq(
      'import',
      'instruments',
      writeCsv(join(dir, 'instruments.csv'), 'symbol,name,type', [`${SYMBOL},招商银行,stock`]),
    )
    a = await instance(store)
    b = await instance(store)
  })
  after(async () => {
    for (const i of instances) {
      await i.ingest.close()
      await i.server.close()
      await i.fanout.close()
    }
    await Promise.all([cluster?.destroy(), redis?.stop()])
    cleanup()
  })

  need.it(
    "quotes and a depth pushed to A's ingest reach B's subscriber in order, exactly as pushed; B's /v1/quotes and /v1/depth answer them",
    async () => {
      const onB = await subscribed(b)
      const quotes = [quote(0), quote(1), quote(2)]
      for (const q of quotes) await push(a, 'quotes', [q])
      await push(a, 'depth', [depth(2)])
      await until(() => onB.items('depth').length > 0, 'the depth on B')
      await until(() => onB.items('quotes').length >= quotes.length, 'the quotes on B')
      assert.deepEqual(onB.items('quotes').map(pick), quotes)
      assert.deepEqual(onB.items('depth'), [{ ...depth(2), region: 'CN' }])
      // B reads them from the cluster once its poll of the store has seen A's commits.
      const latest = await until(async () => {
        const q = await liveQuote(b)
        return q?.timestamp === quotes[2].timestamp ? q : undefined
      }, "A's last quote in B's /v1/quotes")
      assert.deepEqual(pick(latest), quotes[2])
      assert.equal(latest.session, 'regular')
      const book = await until(async () => {
        const r = await read<unknown>(b, `/v1/depth?symbol=${SYMBOL}`)
        return r.status === 200 && r.body.data
      }, "A's depth in B's /v1/depth")
      assert.deepEqual(book, { ...depth(2), region: 'CN' })
      await onB.close()
    },
  )

  need.it(
    "with Redis killed, A's own subscriber still gets A's pushes and A's /readyz reports the lost fan-out; back, B catches up and new pushes reach it",
    async () => {
      const [onA, onB] = [await subscribed(a), await subscribed(b)]
      // Each begins from the latest at subscribe: quote 2 and depth 2.
      for (const c of [onA, onB]) await until(() => c.items('quotes').length === 1, 'the latest quote at subscribe')
      await redis.stop()
      await until(async () => (await ready(a)).status === 503, "A's /readyz to see Redis gone")
      assert.match(
        (await ready(a)).body.checks.stream_fanout,
        /unreachable: snapshots pushed here reach only this instance's subscribers/,
      )
      await push(a, 'quotes', [quote(3)])
      await push(a, 'quotes', [quote(4)])
      await until(() => onA.items('quotes').length === 3, "A's pushes at A's own subscriber")
      assert.deepEqual(onA.items('quotes').map(pick), [quote(2), quote(3), quote(4)])
      assert.deepEqual(onB.items('quotes').map(pick), [quote(2)])
      // The store is shared without Redis: B's /v1/quotes reads the latest push from the cluster.
      await until(async () => (await liveQuote(b))?.timestamp === quote(4).timestamp, "B's /v1/quotes to read quote 4")
      await redis.start()
      await until(
        async () => (await ready(a)).status === 200 && (await ready(b)).status === 200,
        'both instances ready again',
      )
      // B gets the latest of what it missed (not every snapshot: the latest per symbol and channel) ...
      await until(() => onB.items('quotes').at(-1)?.timestamp === quote(4).timestamp, 'B to catch up')
      assert.deepEqual(onB.items('quotes').map(pick), [quote(2), quote(4)])
      // ... and a push after the outage reaches it.
      await push(a, 'quotes', [quote(5)])
      await push(a, 'depth', [depth(5)])
      for (const c of [onA, onB])
        await until(() => c.items('depth').at(-1)?.timestamp === depth(5).timestamp, 'depth 5')
      await until(() => onB.items('quotes').at(-1)?.timestamp === quote(5).timestamp, 'quote 5 at B')
      assert.deepEqual(onB.items('quotes').map(pick), [quote(2), quote(4), quote(5)])
      assert.deepEqual(onA.items('quotes').map(pick), [quote(2), quote(3), quote(4), quote(5)])
      assert.deepEqual(onB.items('depth'), [
        { ...depth(2), region: 'CN' },
        { ...depth(5), region: 'CN' },
      ])
      await Promise.all([onA.close(), onB.close()])
    },
  )
})
