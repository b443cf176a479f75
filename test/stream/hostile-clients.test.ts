// Slow and hostile stream clients against a real server: one that stops reading falls behind, its
// queue keeps the latest snapshot per symbol, and it is closed with a reason, while a client that
// keeps up loses nothing; one that answers no ping, a revoked key, a message over the size limit,
// the subscription cap; shutdown tells every client. Limits are small so the test is quick.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setImmediate as turn } from 'node:timers/promises'
import { hashKey } from '../../src/auth/api-keys.js'
import { StreamHub } from '../../src/live/stream-hub.js'
import { demoDb, newKey, startServer, type TestServer } from '../helpers/server.js'
import { depthSnapshot, quoteSnapshot } from '../helpers/snapshots.js'
import { tempDir } from '../helpers/store-files.js'
import { StreamClient, streamUrl } from '../helpers/stream-client.js'
import { until } from '../helpers/wait.js'

const T0 = Date.UTC(2026, 10, 18, 2)
const symbols = (n: number, from = 600000) => Array.from({ length: n }, (_, i) => `${from + i}.SH`)

/** A metric's value from /metrics (0 when absent). */
async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const found = text.split('\n').find((l) => l.startsWith(`${name} `))
  return found === undefined ? 0 : Number(found.split(' ').pop())
}

/** Per symbol, whether the timestamps received only go forward. */
function inOrder(items: readonly Record<string, unknown>[]): boolean {
  const last = new Map<unknown, number>()
  for (const q of items) {
    const t = q.timestamp as number
    if ((last.get(q.symbol) ?? -Infinity) >= t) return false
    last.set(q.symbol, t)
  }
  return true
}

describe('slow and hostile stream clients', () => {
  const { dir, cleanup } = tempDir()
  const hub = new StreamHub()
  let server: TestServer
  before(async () => {
    server = await startServer(await demoDb(dir), {
      live: {
        hub,
        caps: { subscriptionsPerKey: 450 },
        limits: {
          highWaterBytes: 256 << 10,
          lowWaterBytes: 64 << 10,
          maxBehindMs: 500,
          pingIntervalMs: 2000, // above maxBehindMs: the paused client below is closed as slow, not as mute
          maxMessageBytes: 64 << 10,
          closeGraceMs: 60_000, // the paused client reads its close frame when it resumes
        },
      },
    })
  })
  after(async () => {
    await server.close()
    cleanup()
  })
  const open = (key = server.key) => StreamClient.open(streamUrl(server.url, key))

  it('a client that stops reading is closed with a reason, its queue conflated; one that keeps up gets every snapshot in order', async () => {
    const watched = symbols(200)
    const fast = await open()
    const slow = await open()
    for (const c of [fast, slow]) await c.request({ op: 'subscribe', channel: 'quotes', symbols: watched })
    slow.ws.pause() // stops reading: the kernel's buffers fill, then the server's
    const BATCHES = 400
    for (let b = 1; b <= BATCHES; b++) {
      hub.publish(watched.map((s) => quoteSnapshot(s, T0 + b * 1000, 10 + b / 100)))
      await turn() // the fast client reads between batches, as a live feed leaves it time to
    }
    await until(() => fast.items('quotes').length === watched.length * BATCHES, 'every snapshot at the fast client')
    assert.ok(inOrder(fast.items('quotes')))
    await until(async () => (await metric(server, 'mdq_stream_dropped_clients_total{reason="slow"}')) === 1, 'the drop')
    assert.ok((await metric(server, 'mdq_stream_conflated_total')) > 0, 'snapshots were conflated while it was behind')
    slow.ws.resume()
    const closed = await slow.closed
    assert.deepEqual(closed, { code: 1008, reason: 'too slow: behind for over 0.5 s' })
    const got = slow.items('quotes')
    assert.ok(got.length < watched.length * BATCHES && got.length > 0, `${got.length} snapshots before the close`)
    assert.ok(inOrder(got), 'conflation skips snapshots but never reorders them')
    assert.equal(fast.ws.readyState, fast.ws.OPEN)
    await fast.close()
  })

  it('a client that answers no ping is closed', async () => {
    const mute = await StreamClient.open(streamUrl(server.url, server.key), { autoPong: false })
    assert.deepEqual(await mute.closed, { code: 1008, reason: 'no answer to ping' })
    assert.equal(await metric(server, 'mdq_stream_dropped_clients_total{reason="unresponsive"}'), 1)
  })

  it('a stream whose key is revoked is closed saying so', async () => {
    const key = await newKey(server.keys, 'to revoke')
    const client = await open(key)
    await client.request({ op: 'subscribe', channel: 'quotes', symbols: ['600000.SH'] })
    const record = await server.keys.findKey(hashKey(key))
    await server.keys.revokeKey(record!.id)
    assert.deepEqual(await client.closed, { code: 1008, reason: 'This API key has been revoked.' })
  })

  it('a message over the size limit closes the stream (1009)', async () => {
    const client = await open()
    client.send({ op: 'subscribe', channel: 'quotes', symbols: symbols(6000) }) // about 80 KB
    assert.equal((await client.closed).code, 1009)
    await until(
      async () => (await metric(server, 'mdq_stream_dropped_clients_total{reason="protocol"}')) === 1,
      'the protocol drop',
    )
  })

  it("a subscribe past the key's subscriptions (over its connections) changes nothing and is an error op (429)", async () => {
    const key = await newKey(server.keys, 'capped')
    const [a, b] = [await open(key), await open(key)]
    assert.equal((await a.request({ op: 'subscribe', channel: 'quotes', symbols: symbols(440, 610000) })).total, 440)
    assert.equal((await b.request({ op: 'subscribe', channel: 'depth', symbols: symbols(10, 610000) })).total, 10)
    const refused = await b.request({ op: 'subscribe', channel: 'depth', symbols: ['620000.SH', '610000.SH'] })
    assert.equal(refused.op, 'error')
    assert.equal(refused.code, 429)
    assert.match(String(refused.message), /pass this API key's 450 subscriptions.*nothing was subscribed/)
    hub.publish([depthSnapshot('620000.SH', T0, 5)])
    await b.request({ op: 'ping' }) // replies follow what was sent before them: had it been subscribed, the depth came first
    assert.deepEqual(b.items('depth'), [])
    // Already subscribed symbols count once; unsubscribing gives room back.
    assert.equal((await b.request({ op: 'subscribe', channel: 'depth', symbols: ['610000.SH'] })).total, 10)
    await a.request({ op: 'unsubscribe', channel: 'quotes', symbols: symbols(5, 610000) })
    assert.equal((await b.request({ op: 'subscribe', channel: 'depth', symbols: ['620000.SH'] })).total, 11)
    await b.next((m) => m.op === 'depth', 'the depth now subscribed')
    await a.close()
    // A closed connection's subscriptions go back to the key.
    await until(
      async () =>
        (await b.request({ op: 'subscribe', channel: 'quotes', symbols: symbols(400, 630000) })).op === 'subscribed',
      "room from the closed connection's subscriptions",
    )
    await b.close()
  })

  it('shutdown tells every open stream the server is going away (1001), so the SDK reconnects elsewhere', async () => {
    const { dir: other, cleanup: done } = tempDir()
    const temporary = await startServer(await demoDb(other))
    const clients = [
      await StreamClient.open(streamUrl(temporary.url, temporary.key)),
      await StreamClient.open(streamUrl(temporary.url, temporary.key, 'quotes')),
    ]
    await temporary.close()
    for (const c of clients) assert.deepEqual(await c.closed, { code: 1001, reason: 'server shutting down' })
    done()
  })
})
