// Without a response cache, the worker pool writes /v1/klines and /v1/klines/intraday answers into the memory of answers
// already sent (query-pool.ts, routes.ts `uncachedAnswer`), given back by the response cache
// (`passing`) once the response has finished; with a response cache, once an answer has left the
// cache and no response is writing it. Answers computed in reused memory, many at once and of many
// sizes, must be byte-equal to the main thread's, plain and gzipped, also after a 304. (When the
// memory comes back is the response's 'close' after its 'finish': everything handed to the OS. Loopback's socket buffers take a whole
// 0.7 MB answer at once, so a stalled client cannot hold one here: batch-recycle.test.ts stalls a 22 MB
// batch answer for that.)
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import { bareInstrument } from '../../src/domain/instrument.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { poolBesideMainThread, type PoolBesideMainThread } from '../helpers/pool-beside-main-thread.js'
import { rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { until } from '../helpers/wait.js'

const SYMBOL = '600000.SH'
/** 40 days of 1m bars (9,600) and 10,000 daily bars. */
const DAYS = tradingDays('SH', 0, 10_000)
const MINUTES = sessionMinutes('SH', DAYS.slice(-40))
/** Windows of 50 to 2,000 1m bars ending at spread-out minutes, forward-adjusted and raw: answers of many sizes, so spares of each size are reused. */
const WINDOWS = Array.from({ length: 24 }, (_, i) => {
  const count = [50, 400, 1000, 2000][i % 4]
  const end = MINUTES[Math.min(MINUTES.length - 1, 2000 + ((i * 397) % (MINUTES.length - 2000)))]
  return `/v1/klines?symbol=${SYMBOL}&period=1m&count=${count}&end_time=${end}&adjust=${i % 3 === 0 ? 'none' : 'forward'}`
})
/** Daily answers of 0.5 to 0.7 MB beside them: memory of every size comes back and is reused. */
const DAILY = [10_000, 9000, 8000].flatMap((count) =>
  ['none', 'backward'].map((adjust) => `/v1/klines?symbol=${SYMBOL}&period=1d&count=${count}&adjust=${adjust}`),
)
/** The intraday route hands its answers back too. */
const INTRADAY = ['1m', '5m', '30m'].map((period) => `/v1/klines/intraday?symbol=${SYMBOL}&period=${period}`)
const CONCURRENT = [...WINDOWS, ...DAILY, ...INTRADAY]

const { dir, cleanup } = tempDir()
let inThread: TestServer
let pooled: TestServer
const reference = new Map<string, Buffer>()
let servers: PoolBesideMainThread

before(async () => {
  const db = join(dir, 'answers.db')
  const store = SqliteMarketStore.open(db)
  await store.write({
    instruments: [bareInstrument(SYMBOL, { type: 'stock' })],
    bars: [
      { symbol: SYMBOL, period: '1d', bars: walkBars(DAYS, [0.3, 0.6, 0.2]) },
      { symbol: SYMBOL, period: '1m', bars: walkBars(MINUTES, [0.5, 0.1, 0.9, 0.4]) },
    ],
    exFactors: [
      {
        symbol: SYMBOL,
        events: [
          { timestamp: DAYS[DAYS.length - 20], exFactor: 1.1 },
          { timestamp: DAYS[5000], exFactor: 2 },
        ],
      },
    ],
  })
  await store.close()
  servers = await poolBesideMainThread(db)
  inThread = servers.inThread
  pooled = servers.pooled
  for (const path of CONCURRENT) {
    const answer = await rawRequest(inThread.url + path, { 'X-API-Key': inThread.key, 'Accept-Encoding': 'identity' })
    assert.equal(answer.status, 200, `${path}: ${answer.body.toString()}`)
    reference.set(path, answer.body)
  }
})
after(async () => {
  await servers.close()
  cleanup()
})

/** The body as sent: small answers go out plain whatever the client accepts. */
const decoded = (body: Buffer, encoding: unknown) => (encoding === 'gzip' ? gunzipSync(body) : body)

describe('klines and intraday answers from the worker pool, their memory reused once written (and out of the response cache)', () => {
  for (const encoding of ['identity', 'gzip']) {
    it(`Accept-Encoding: ${encoding}: 4 rounds of 24 windows, 6 daily histories and 3 intraday answers at once, each equal to the main thread's bytes`, async () => {
      const reportedBefore = servers.written()
      const headers = { 'X-API-Key': pooled.key, 'Accept-Encoding': encoding }
      for (let round = 0; round < 4; round++) {
        const answers = await Promise.all(
          CONCURRENT.map((path) => rawRequest(pooled.url + path, headers).then((a) => ({ path, ...a }))),
        )
        for (const a of answers) {
          assert.equal(a.status, 200)
          if (encoding === 'gzip' && DAILY.includes(a.path))
            assert.equal(a.headers['content-encoding'], 'gzip', `${a.path} was not gzipped`)
          assert.ok(
            decoded(a.body, a.headers['content-encoding']).equals(reference.get(a.path)!),
            `${a.path} differs from the main thread's answer`,
          )
        }
      }
      // The server hears of its last writes a moment after the client has read them.
      await until(
        () => servers.written() - reportedBefore >= 4 * CONCURRENT.length,
        `the pool told of the ${4 * CONCURRENT.length} written answers (so far ${servers.written() - reportedBefore})`,
      )
    })
  }

  it('an answer produced for a 304 gives its memory back, and the next answers are still right', async () => {
    const path = WINDOWS[2]
    const first = await rawRequest(pooled.url + path, { 'X-API-Key': pooled.key, 'Accept-Encoding': 'identity' })
    assert.equal(first.status, 200)
    const tag = first.headers.etag as string
    const reportedBefore = servers.written()
    const notModified = await rawRequest(pooled.url + path, { 'X-API-Key': pooled.key, 'If-None-Match': tag })
    assert.equal(notModified.status, 304)
    assert.equal(notModified.body.length, 0)
    await until(() => servers.written() - reportedBefore === 1, "the 304's computed answer handed back")
    for (const p of WINDOWS) {
      const again = await rawRequest(pooled.url + p, { 'X-API-Key': pooled.key, 'Accept-Encoding': 'identity' })
      assert.ok(again.body.equals(reference.get(p)!), `${p} after the 304 differs from the main thread's answer`)
    }
  })

  it('with a response cache that holds them all, nothing is handed back (the cache keeps them)', async () => {
    const cached = await startServer(join(dir, 'answers.db'), {
      runner: { ...servers.pool, written: () => assert.fail('a cached answer was handed back') },
    })
    try {
      for (const path of WINDOWS.slice(0, 4)) {
        const a = await rawRequest(cached.url + path, { 'X-API-Key': cached.key, 'Accept-Encoding': 'identity' })
        assert.ok(a.body.equals(reference.get(path)!), `${path} differs from the main thread's answer`)
      }
    } finally {
      await cached.close()
    }
  })

  it('with a small response cache, answers that leave it are handed back once written, and the answers computed in that memory are right', async () => {
    let handedBack = 0
    // 256 KB: a few windows at a time (an answer of more than 64 KB is never kept), so most answers leave it soon.
    const cached = await startServer(join(dir, 'answers.db'), {
      responseCacheBytes: 256 << 10,
      runner: {
        ...servers.pool,
        written(piece: Buffer) {
          handedBack++
          servers.pool.written!(piece)
        },
      },
    })
    try {
      for (let round = 0; round < 4; round++) {
        for (const encoding of ['identity', 'gzip']) {
          // The same requests twice at once: the second may be answered by the fast path from the cache.
          const headers = { 'X-API-Key': cached.key, 'Accept-Encoding': encoding }
          const answers = await Promise.all(
            [...CONCURRENT, ...CONCURRENT].map((path) =>
              rawRequest(cached.url + path, headers).then((a) => ({ path, ...a })),
            ),
          )
          for (const a of answers) {
            assert.equal(a.status, 200, `${a.path}: ${a.body.toString()}`)
            assert.ok(
              decoded(a.body, a.headers['content-encoding']).equals(reference.get(a.path)!),
              `round ${round}, ${encoding}: ${a.path} differs from the main thread's answer`,
            )
          }
        }
      }
      assert.ok(handedBack >= 20, `only ${handedBack} answers' memory came back from the cache`)
      assert.ok(cached.app.fastAnswers!.answered > 0, 'the fast path answered none of the repeats')
    } finally {
      await cached.close()
    }
  })
})
