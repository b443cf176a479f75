// Two instances sharing a real Redis: a snapshot published on either reaches the subscribers of both,
// once and in time order; an instance that starts later begins from the latest snapshots; with
// Redis gone, local subscribers still get local snapshots and /readyz says what is missing, and
// once Redis is back the other instance catches up and new snapshots flow again.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { RedisFanout } from '../../src/live/redis-fanout.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { RedisServer } from '../helpers/redis.js'
import { redisServer, requires } from '../helpers/requirements.js'
import { demoDb, getJson, startServer, type TestServer } from '../helpers/server.js'
import { startIngest } from '../helpers/ingest-server.js'
import { depthSnapshot, quoteSnapshot } from '../helpers/snapshots.js'
import { tempDir } from '../helpers/store-files.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'
import { until } from '../helpers/wait.js'

const need = requires(redisServer())
const T0 = Date.UTC(2026, 10, 18, 2)

interface Instance {
  readonly hub: StreamHub
  readonly fanout: RedisFanout
  readonly server: TestServer
  close(): Promise<void>
}

describe('streams across instances over Redis', () => {
  const { dir, cleanup } = tempDir()
  let redis: RedisServer
  let db: string
  const instances: Instance[] = []
  async function instance(): Promise<Instance> {
    const hub = new StreamHub()
    const fanout = new RedisFanout(redis.url, hub)
    const server = await startServer(db, { live: { hub, fanout } })
    const started = {
      hub,
      fanout,
      server,
      close: async () => {
        await server.close()
        await fanout.close()
      },
    }
    instances.push(started)
    await until(() => fanout.reachable(), 'the fan-out to subscribe')
    return started
  }
  const ready = (i: Instance) => getJson<{ checks: Record<string, string> }>(`${i.server.url}/readyz`)
  before(async () => {
    if (!need.met) return
    redis = await RedisServer.start()
    db = await demoDb(dir)
  })
  after(async () => {
    for (const i of instances) await i.close()
    await redis?.stop()
    cleanup()
  })

  need.it(
    'a snapshot published on one instance reaches the subscribers of both, each once, in time order',
    async () => {
      const [a, b] = [await instance(), await instance()]
      const [onA, onB] = await Promise.all([a, b].map((i) => StreamClient.open(streamUrl(i.server.url, i.server.key))))
      for (const c of [onA, onB]) await c.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH'] })
      // Both instances publish the symbol, interleaved, with an older one among them.
      a.hub.publish([quoteSnapshot('600000.SH', T0 + 1000, 10.01)])
      b.hub.publish([quoteSnapshot('600000.SH', T0 + 2000, 10.02)])
      a.hub.publish([quoteSnapshot('600000.SH', T0 + 1500, 10.015)]) // at B, older than B's own: B's subscribers never see it
      a.hub.publish([quoteSnapshot('600000.SH', T0 + 3000, 10.03)])
      for (const c of [onA, onB])
        await until(() => c.items('quotes').some((q) => q.timestamp === T0 + 3000), 'the last')
      const times = (c: StreamClient) => c.items('quotes').map((q) => (q.timestamp as number) - T0)
      // A's own go out at once; B's 2000 reaches A after A's 3000: older, dropped. At B, A's 1000 and 1500 arrive after its own 2000.
      assert.deepEqual(times(onA), [1000, 1500, 3000])
      assert.deepEqual(times(onB), [2000, 3000])
      await Promise.all([onA.close(), onB.close()])
    },
  )

  need.it(
    "a quote and a depth pushed to one instance's ingest listener reach the other's subscribers; its /v1/depth answers the depth (the store they share)",
    async () => {
      const [a, b] = instances
      const ingest = await startIngest(a.server, {}, a.hub)
      try {
        const onB = await StreamClient.open(streamUrl(b.server.url, b.server.key))
        await onB.request({ op: 'subscribe', channel: 'quotes', symbols: ['600036.SH'] })
        await onB.request({ op: 'subscribe', channel: 'depth', symbols: ['600036.SH'] })
        const at = T0 + 10_000
        const pushed = {
          quotes: { symbol: '600036.SH', timestamp: at, last_price: 35.12, open: 35.0, high: 35.2, low: 34.9 },
          depth: { symbol: '600036.SH', timestamp: at, bid_prices: [35.11], bid_volumes: [40], ask_prices: [35.13] },
        }
        for (const [kind, row] of [
          ['quotes', { ...pushed.quotes, prev_close: 34.8, volume: 1200, amount: 4_214_400.0 }],
          ['depth', { ...pushed.depth, ask_volumes: [25] }],
        ] as const) {
          const res = await fetch(`${ingest.url}/v1/ingest/${kind}`, {
            method: 'POST',
            headers: { 'X-API-Key': ingest.key, 'Content-Type': 'application/json' },
            body: JSON.stringify([row]),
          })
          assert.equal(res.status, 200, await res.text())
        }
        await until(() => onB.items('depth').length > 0, 'the depth on the other instance')
        const [q] = onB.items('quotes')
        assert.deepEqual([q.symbol, q.timestamp, q.last_price, q.volume], ['600036.SH', at, 35.12, 1200])
        assert.deepEqual(onB.items('depth'), [{ ...pushed.depth, ask_volumes: [25], bid_volumes: [40], region: 'CN' }])
        const headers = { 'X-API-Key': b.server.key }
        const depth = await getJson<{ data: unknown }>(`${b.server.url}/v1/depth?symbol=600036.SH`, { headers })
        assert.deepEqual(depth.body.data, onB.items('depth')[0])
        await onB.close()
      } finally {
        await ingest.close()
      }
    },
  )

  need.it('an instance started later begins from the latest snapshots at subscribe', async () => {
    const [a] = instances
    a.hub.publish([depthSnapshot('600519.SH', T0 + 5000, 1500.5), quoteSnapshot('600519.SH', T0 + 5000, 1500.5)])
    a.hub.publish([depthSnapshot('600519.SH', T0 + 6000, 1500.75)])
    const late = await instance()
    const client = await StreamClient.open(streamUrl(late.server.url, late.server.key))
    await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600519.SH'] })
    const first = await client.next((m) => m.op === 'quotes', 'the latest quote at subscribe')
    assert.equal(first.data?.[0].timestamp, T0 + 5000)
    await client.close()
  })

  need.it(
    'without Redis, local subscribers still get local snapshots and /readyz says so; back, it heals',
    async () => {
      const [a, b] = instances
      const [onA, onB] = await Promise.all([a, b].map((i) => StreamClient.open(streamUrl(i.server.url, i.server.key))))
      for (const c of [onA, onB]) await c.request({ op: 'subscribe', channel: 'depth', symbols: ['000001.SZ'] })
      a.hub.publish([depthSnapshot('000001.SZ', T0 + 1000, 9.01)])
      for (const c of [onA, onB]) await until(() => c.items('depth').length === 1, 'the first depth')
      await redis.stop()
      await until(async () => (await ready(a)).status === 503, "A's /readyz to see Redis gone")
      const checks = (await ready(a)).body.checks
      assert.match(checks.stream_fanout, /unreachable: snapshots pushed here reach only this instance's subscribers/)
      a.hub.publish([depthSnapshot('000001.SZ', T0 + 2000, 9.02)])
      a.hub.publish([depthSnapshot('000001.SZ', T0 + 3000, 9.03)])
      await until(() => onA.items('depth').length === 3, 'the local depth at A while Redis is away')
      assert.equal(onB.items('depth').length, 1)
      await redis.start()
      await until(async () => (await ready(a)).status === 200 && (await ready(b)).status === 200, 'both ready again')
      // B catches up with the latest of what it missed (not every snapshot: the latest per symbol and channel) ...
      await until(() => onB.items('depth').at(-1)?.timestamp === T0 + 3000, 'B to catch up')
      assert.deepEqual(
        onB.items('depth').map((d) => d.timestamp),
        [T0 + 1000, T0 + 3000],
      )
      // ... and what is published now reaches it again, from either side.
      a.hub.publish([depthSnapshot('000001.SZ', T0 + 4000, 9.04)])
      b.hub.publish([depthSnapshot('000001.SZ', T0 + 5000, 9.05)])
      for (const c of [onA, onB])
        await until(() => c.items('depth').at(-1)?.timestamp === T0 + 5000, 'the depth published after the outage')
      assert.deepEqual(
        onA.items('depth').map((d) => d.timestamp),
        [1000, 2000, 3000, 4000, 5000].map((t) => T0 + t),
      )
      await Promise.all([onA.close(), onB.close()])
    },
  )
})
