// The worker pool writes batch groups into the memory of groups already sent (query-pool.ts), told
// by the stream when the socket has written them (written-stream.ts). Memory reused a moment too soon
// corrupts answers that are still on their way: a client that stalls mid-answer while other batches run
// beside it must still get every byte right, plain and gzipped.
import assert from 'node:assert/strict'
import { request, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { bareInstrument } from '../../src/domain/instrument.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { tradingDays, walkBars } from '../helpers/arbitraries.js'
import { poolBesideMainThread, type PoolBesideMainThread } from '../helpers/pool-beside-main-thread.js'
import { rawRequest, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

/** 32 symbols x 10,000 daily bars: a 22 MB answer, far more than loopback's socket buffers hold. */
const SYMBOLS = Array.from({ length: 32 }, (_, i) => `${600000 + i}.SH`)
const BARS = 10_000
const PATH = `/v1/klines/batch?symbols=${SYMBOLS.join(',')}&count=${BARS}&adjust=forward`

const { dir, cleanup } = tempDir()
let inThread: TestServer
let pooled: TestServer
let reference: Buffer
let servers: PoolBesideMainThread

before(async () => {
  const db = join(dir, 'recycle.db')
  const store = SqliteMarketStore.open(db)
  const days = tradingDays('SH', 0, BARS)
  await store.write({
    instruments: SYMBOLS.map((s) => bareInstrument(s, { type: 'stock' })),
    bars: SYMBOLS.map((symbol, i) => ({
      symbol,
      period: '1d' as const,
      bars: walkBars(days, [i / 40, ((i * 7) % 11) / 11, 0.7, 0.2]),
    })),
  })
  await store.close()
  servers = await poolBesideMainThread(db)
  inThread = servers.inThread
  pooled = servers.pooled
  const answer = await rawRequest(inThread.url + PATH, { 'X-API-Key': inThread.key, 'Accept-Encoding': 'identity' })
  assert.equal(answer.status, 200)
  reference = answer.body
})
after(async () => {
  await servers.close()
  cleanup()
})

const decoded = (body: Buffer, encoding: string) => (encoding === 'gzip' ? gunzipSync(body) : body)

describe('batch answers from the worker pool, their memory reused once written', () => {
  for (const encoding of ['identity', 'gzip']) {
    it(`Accept-Encoding: ${encoding}: a client stalled mid-answer while 12 batches run beside it gets the main thread's bytes`, async () => {
      const reportedBefore = servers.written()
      const headers = { 'X-API-Key': pooled.key, 'Accept-Encoding': encoding }
      // The stalled client: reads the first bytes, then nothing until the others are done.
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request(pooled.url + PATH, { headers }, resolve)
          .on('error', reject)
          .end(),
      )
      assert.equal(res.statusCode, 200)
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      await new Promise((resolve) => res.once('data', resolve))
      res.pause()
      const ended = new Promise((resolve, reject) => res.on('end', resolve).on('error', reject))
      // Others, four at a time, whose groups reuse every buffer the pool gets back.
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(Array.from({ length: 4 }, () => rawRequest(pooled.url + PATH, headers)))
        for (const a of answers) {
          assert.equal(a.status, 200)
          assert.ok(
            decoded(a.body, encoding).equals(reference),
            "a batch beside the stalled one differs from the main thread's",
          )
        }
      }
      assert.ok(
        servers.written() - reportedBefore >= 12 * SYMBOLS.length,
        `the pool was told of ${servers.written() - reportedBefore} written pieces: memory was reused`,
      )
      res.resume()
      await ended
      const body = decoded(Buffer.concat(chunks), encoding)
      assert.equal(body.length, reference.length, "the stalled answer has the length of the main thread's")
      assert.ok(body.equals(reference), "the stalled answer has the bytes of the main thread's")
    })
  }
})
