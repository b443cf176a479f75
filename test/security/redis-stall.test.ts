// A stalled Redis (SIGSTOP: the process is frozen, its TCP connections stay up) hung every limited
// request and /readyz, and an outage logged a stack per request. Now each command times out (250 ms
// by default; 1 s here, so a loaded machine's slow check before the stall is not an outage) into the
// fail-open / fail-closed policy, /readyz answers 503, the outage is logged once
// when it starts and once when it ends, and each failed request is counted in a metric.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import { RedisRateLimiter } from '../../src/auth/rate-limiter.js'
import { RedisServer } from '../helpers/redis.js'
import { redisServer, requires } from '../helpers/requirements.js'
import { demoDb, startServer, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'
import { assertErrorBody, captureLogs, metricSum, waitFor } from './harness.js'

const needRedis = requires(redisServer())
const { dir, cleanup } = tempDir()

/** Generous liveness bound for one request: a hang fails, a slow machine does not. */
const LIVENESS = () => AbortSignal.timeout(15_000)
/** The limiter's command timeout here: well above a loaded machine's slowest Redis answer, far below a hang. */
const STALL_TIMEOUT_MS = 1000

describe('stalled Redis (SIGSTOP)', () => {
  let redis: RedisServer | undefined
  const servers: { server: TestServer; lines: string[] }[] = []
  before(async () => {
    if (!needRedis.met) return
    const db = await demoDb(dir)
    redis = await RedisServer.start()
    for (const failOpen of [true, false]) {
      const { lines, logger } = captureLogs('info')
      const server = await startServer(db, {
        logger,
        responseCacheBytes: 0,
        rateLimit: {
          limiter: new RedisRateLimiter(redis.url, `stall-${failOpen}:`, STALL_TIMEOUT_MS),
          defaults: { ratePerMin: 6000, burst: 100 },
          failOpen,
        },
      })
      servers.push({ server, lines })
    }
  })
  after(async () => {
    redis?.signal('SIGCONT')
    for (const { server } of servers) await server.close()
    await redis?.stop()
    cleanup()
  })

  needRedis.it(
    'requests answer per policy (open: 200, closed: 503) and /readyz answers 503 while Redis is frozen; one log line per outage and per recovery; every failure counted',
    async () => {
      const [open, closed] = servers.map((s) => s.server)
      const get = (s: TestServer, path = '/v1/klines?symbol=600519.SH&count=2') =>
        fetch(s.url + path, { headers: { 'X-API-Key': s.key }, signal: LIVENESS() })
      const metrics = async (s: TestServer) =>
        metricSum(
          await (await fetch(`${s.url}/metrics`, { signal: LIVENESS() })).text(),
          'mdq_rate_limiter_errors_total',
        )
      // Limited requests pass while Redis runs (a check slower than the timeout is counted, and retried here).
      for (const s of [open, closed])
        await waitFor(async () => (await get(s)).status === 200, 'a limited request to pass while Redis runs')
      const errorsBefore = [await metrics(open), await metrics(closed)]

      redis!.signal('SIGSTOP')
      try {
        const N = 6
        for (let i = 0; i < N; i++) {
          const a = await get(open)
          assert.equal(a.status, 200, 'fail-open serves')
          await a.arrayBuffer()
          const b = await get(closed)
          assert.equal(b.status, 503, 'fail-closed refuses')
          assertErrorBody(b.status, b.headers, await b.text(), 'fail-closed')
        }
        // Concurrent requests too (one auto-pipelined batch that never returns).
        const batch = await Promise.all(Array.from({ length: 10 }, () => get(open).then((r) => r.status)))
        assert.deepEqual(batch, Array(10).fill(200))
        for (const s of [open, closed]) {
          const ready = await fetch(`${s.url}/readyz`, { signal: LIVENESS() })
          assert.equal(ready.status, 503)
          assert.equal(((await ready.json()) as { checks: { redis: string } }).checks.redis, 'unreachable')
        }
        // Every request of the stall counted once, whatever was counted before it.
        assert.equal((await metrics(open)) - errorsBefore[0], N + 10)
        assert.equal((await metrics(closed)) - errorsBefore[1], N)
      } finally {
        redis!.signal('SIGCONT')
      }

      // Recovery by itself: the closed server limits (200) again.
      await waitFor(async () => (await get(closed)).status === 200, 'limiting to answer again after SIGCONT')
      assert.equal((await get(open)).status, 200)
      for (const { lines } of servers) {
        const down = lines.filter((l) => l.includes('rate limiter unreachable'))
        const up = lines.filter((l) => l.includes('rate limiter reachable again'))
        assert.equal(down.length, 1, down.join(''))
        assert.equal(up.length, 1, lines.filter((l) => !l.includes('"msg":"request"')).join(''))
        assert.ok(!down[0].includes('"stack"'), 'no stack trace for an outage')
      }
    },
  )
})
