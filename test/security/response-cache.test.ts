// Response-cache accounting under concurrent misses: the hand-written cache counted a body once per
// concurrent miss of the same tag (until it reported full while holding one copy). Now concurrent
// misses share one computation (single-flight) and the byte count is what is held. Concurrent misses
// need a store that yields while reading (a network backend does; SQLite reads synchronously), so
// the store here yields to the event loop before each bar read: real SQLite file, delayed answer.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../../src/http/app.js'
import { openStores } from '../../src/store/backends.js'
import type { MarketStore } from '../../src/store/market-store.js'
import { demoDb, newKey, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { metricSum } from './harness.js'

const { dir, cleanup } = tempDir()
let server: TestServer
before(async () => {
  const db = await demoDb(dir)
  const { market: store, keys } = await openStores({ store: db, create: false })
  const yielding = new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver)
      if (prop === 'readBars')
        return async (...args: Parameters<MarketStore['readBars']>) => (await sleep(5), target.readBars(...args))
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const app = await buildApp({ store: yielding, keys, responseCacheBytes: 16 << 20 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const key = await newKey(keys)
  server = {
    url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`,
    app,
    store,
    keys,
    key,
    close: async () => (await app.close(), await Promise.all([store.close(), keys.close()]), undefined),
  }
})
after(async () => {
  await server.close()
  cleanup()
})

const metrics = async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  return {
    hits: metricSum(text, 'mdq_response_cache_hits_total'),
    misses: metricSum(text, 'mdq_response_cache_misses_total'),
    bytes: metricSum(text, 'mdq_response_cache_bytes'),
  }
}

describe('response cache', () => {
  it('40 concurrent misses of one request: computed once, held once, counted once', async () => {
    const path = '/v1/klines?symbol=AAPL.US&period=1m&count=5000&adjust=backward'
    const bodies = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const r = await fetch(server.url + path, {
          headers: { 'X-API-Key': server.key, 'Accept-Encoding': 'identity' },
        })
        assert.equal(r.status, 200)
        return Buffer.from(await r.arrayBuffer())
      }),
    )
    assert.ok(bodies.every((b) => b.equals(bodies[0])))
    assert.ok(bodies[0].length > 100_000, `${bodies[0].length} bytes: a body worth caching`)
    const m = await metrics()
    assert.equal(m.misses, 1, 'one computation')
    assert.equal(m.hits, 39)
    assert.equal(m.bytes, bodies[0].length, 'the bytes held are one copy of the answer')
  })

  it('distinct requests add their sizes', async () => {
    const before = await metrics()
    const sizes: number[] = []
    for (const count of [100, 200, 300]) {
      const r = await fetch(`${server.url}/v1/klines?symbol=600519.SH&count=${count}&adjust=none`, {
        headers: { 'X-API-Key': server.key, 'Accept-Encoding': 'identity' },
      })
      sizes.push((await r.arrayBuffer()).byteLength)
    }
    const after = await metrics()
    assert.equal(after.bytes - before.bytes, sizes[0] + sizes[1] + sizes[2])
    assert.equal(after.misses - before.misses, 3)
  })

  it('a small cache stays within its byte bound as answers are evicted', async () => {
    const small = await startServer(join(dir, 'demo.db'), { responseCacheBytes: 64 << 10 })
    try {
      for (let count = 100; count <= 1500; count += 100) {
        const r = await fetch(`${small.url}/v1/klines?symbol=600519.SH&count=${count}&adjust=none`, {
          headers: { 'X-API-Key': small.key },
        })
        assert.equal(r.status, 200)
        await r.arrayBuffer()
        const held = metricSum(await (await fetch(`${small.url}/metrics`)).text(), 'mdq_response_cache_bytes')
        assert.ok(held > 0 && held <= 64 << 10, `${held} bytes held`)
      }
    } finally {
      await small.close()
    }
  })
})
