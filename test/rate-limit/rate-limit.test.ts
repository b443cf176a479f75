// Rate limiting over real HTTP: exact under concurrency (memory, Redis, two processes on one Redis),
// true retry_after_ms, refill rate, per-key quotas, ordering after auth, Redis failure modes.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../../src/auth/rate-limiter.js'
import type { Quota } from '../../src/auth/token-bucket.js'
import { PATIENT_REDIS_MS } from '../helpers/redis.js'
import { redisServer, requires } from '../helpers/requirements.js'
import { demoAndRedis } from '../helpers/demo-and-redis.js'
import { until } from '../helpers/wait.js'
import { newKey, startServer, type TestServer } from '../helpers/server.js'
import { MDQ_BIN, runMdq } from '../helpers/store-files.js'

const needRedis = requires(redisServer())
const env = demoAndRedis(needRedis)

const KLINES = '/v1/klines?symbol=600519.SH&count=5'
const get = (base: string, key: string, path = KLINES) => fetch(base + path, { headers: { 'X-API-Key': key } })

async function limitedServer(limiter: RateLimiter, defaults: Quota, failOpen = true): Promise<TestServer> {
  return startServer(env.db, { rateLimit: { limiter, defaults, failOpen }, responseCacheBytes: 0 })
}

/**
 * The refill rate of a key with 1200/min (20/s) and burst 200 (10 s of tokens: the cap never binds
 * here): drain the bucket, let it refill for about a second, then take tokens until refused. The
 * tokens taken must be 20/s times the time between the refusal that drained it and the one that
 * ends, each bracketed by clock readings before and after its request: a loaded machine only
 * widens the brackets, it cannot fail a correct limiter.
 */
async function assertRefillRate(base: string, key: string): Promise<void> {
  const refusal = async () => {
    for (let taken = 0; taken < 10_000; taken++) {
      const before = performance.now()
      const status = (await get(base, key)).status
      if (status !== 200) return { before, after: performance.now(), taken }
    }
    throw new Error('10,000 requests and no refusal: the key is not limited')
  }
  const drained = await refusal()
  await sleep(1000)
  const end = await refusal()
  const min = (20 * (end.before - drained.after)) / 1000 - 2
  const max = (20 * (end.after - drained.before)) / 1000 + 1
  assert.ok(
    end.taken >= min && end.taken <= max,
    `${end.taken} tokens refilled, expected ${min.toFixed(1)}..${max.toFixed(1)}`,
  )
}

/** 200 requests at once; the count of each status. */
async function burst(urls: readonly string[], key: string, n = 200): Promise<Record<number, number>> {
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      get(urls[i % urls.length], key).then(async (r) => (await r.arrayBuffer(), r.status)),
    ),
  )
  return answers.reduce<Record<number, number>>((acc, s) => ((acc[s] = (acc[s] ?? 0) + 1), acc), {})
}

describe('rate limiting, in memory', () => {
  let server: TestServer
  before(async () => (server = await limitedServer(new MemoryRateLimiter(), { ratePerMin: 1, burst: 50 })))
  after(() => server.close())

  it('200 parallel requests against burst 50: exactly 50 succeed', async () => {
    assert.deepEqual(await burst([server.url], await newKey(server.keys, 'mem-burst')), { 200: 50, 429: 150 })
  })

  it('a 429 has the rate-limit body and headers; every limited answer has RateLimit-* headers', async () => {
    const key = await newKey(server.keys, 'headers', { ratePerMin: 60, burst: 1 })
    const ok = await get(server.url, key)
    assert.equal(ok.status, 200)
    assert.equal(ok.headers.get('ratelimit-limit'), '1')
    assert.equal(ok.headers.get('ratelimit-remaining'), '0')
    assert.ok(Number(ok.headers.get('ratelimit-reset')) >= 1)
    const refused = await get(server.url, key)
    assert.equal(refused.status, 429)
    const body = (await refused.json()) as { code: number; message: string; retry_after_ms: number }
    assert.equal(body.code, 429)
    assert.ok(body.retry_after_ms > 900 && body.retry_after_ms <= 1000, String(body.retry_after_ms))
    assert.equal(refused.headers.get('retry-after'), '1')
    assert.match(body.message, /60\/min, burst 1/)
  })

  it('retry_after_ms is the true wait: a retry clearly before it fails, one after it succeeds', async () => {
    const key = await newKey(server.keys, 'retry', { ratePerMin: 12, burst: 1 }) // a token every 5 s
    const t0 = performance.now()
    assert.equal((await get(server.url, key)).status, 200)
    const refused = (await (await get(server.url, key)).json()) as { retry_after_ms: number }
    // The token was taken between t0 and now: the wait is 5 s less at most the time that has passed.
    const passed = performance.now() - t0
    assert.ok(
      refused.retry_after_ms <= 5000 && refused.retry_after_ms >= 5000 - passed - 1,
      `${refused.retry_after_ms} ms after ${passed.toFixed(0)} ms`,
    )
    // At once, seconds before the promised time: still refused, with a shorter wait.
    const early = await get(server.url, key)
    assert.equal(early.status, 429)
    const { retry_after_ms: wait } = (await early.json()) as { retry_after_ms: number }
    assert.ok(wait <= refused.retry_after_ms)
    await sleep(wait)
    assert.equal((await get(server.url, key)).status, 200)
  })

  it('per-key quotas are independent; 401 precedes 429; instruments is never limited', async () => {
    const a = await newKey(server.keys, 'a', { ratePerMin: 1, burst: 2 })
    const b = await newKey(server.keys, 'b', { ratePerMin: 1, burst: 3 })
    const statuses = async (key: string, n: number) => {
      const out: number[] = []
      for (let i = 0; i < n; i++) out.push((await get(server.url, key)).status)
      return out
    }
    assert.deepEqual(await statuses(a, 3), [200, 200, 429])
    assert.deepEqual(await statuses(b, 4), [200, 200, 200, 429])
    assert.equal((await get(server.url, 'mdq_not_a_key')).status, 401)
    // ex-factors has its own bucket; instruments has none.
    assert.equal((await get(server.url, a, '/v1/klines/ex-factors?symbols=600000.SH')).status, 200)
    for (let i = 0; i < 5; i++) {
      const r = await get(server.url, a, '/v1/instruments?symbols=600000.SH')
      assert.equal(r.status, 200)
      assert.equal(r.headers.get('ratelimit-limit'), null)
    }
  })

  it('`mdq keys create --rate --burst` and `keys set-rate` from another process apply to a running server', async () => {
    const key = runMdq([
      '--db',
      env.db,
      'keys',
      'create',
      '--name',
      'cli-quota',
      '--rate',
      '1/min',
      '--burst',
      '2',
    ]).stdout.trim()
    assert.deepEqual(
      [(await get(server.url, key)).status, (await get(server.url, key)).status, (await get(server.url, key)).status],
      [200, 200, 429],
    )
    const id = (await server.keys.listKeys()).find((k) => k.name === 'cli-quota')!.id
    assert.equal(runMdq(['--db', env.db, 'keys', 'set-rate', String(id), '--rate', '1/min', '--burst', '5']).status, 0)
    await sleep(600) // the key cache holds a key for 500 ms; a timer never fires early
    const r = await get(server.url, key)
    assert.equal(r.headers.get('ratelimit-limit'), '5')
  })

  it('refills at the configured rate, as measured between two refusals', async () => {
    await assertRefillRate(server.url, await newKey(server.keys, 'refill', { ratePerMin: 1200, burst: 200 }))
  })
})

describe('rate limiting through Redis', () => {
  needRedis.it(
    'checks asked in one event-loop turn go to Redis as one script call, each answered for its own bucket in the order asked',
    async () => {
      const limiter = new RedisRateLimiter(env.redis!.url, 'turn:', PATIENT_REDIS_MS)
      const info = new Redis(env.redis!.url)
      try {
        await limiter.take(9, 'klines', { ratePerMin: 1, burst: 1 }) // connects and loads the script
        const scriptCalls = async () =>
          [...(await info.info('commandstats')).matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce(
            (n, m) => n + Number(m[1]),
            0,
          )
        const before = await scriptCalls()
        const a = { ratePerMin: 1, burst: 3 }
        const b = { ratePerMin: 1, burst: 1 }
        const asked: [number, Quota][] = [
          [1, a],
          [2, b],
          [1, a],
          [1, a],
          [2, b],
          [1, a],
        ]
        const decisions = await Promise.all(asked.map(([keyId, quota]) => limiter.take(keyId, 'klines', quota)))
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.remaining, d.limit]),
          [
            [true, 2, 3],
            [true, 0, 1],
            [true, 1, 3],
            [true, 0, 3],
            [false, 0, 1],
            [false, 0, 3],
          ],
        )
        for (const d of decisions)
          assert.equal(d.retryAfterMs > 0, !d.allowed, 'a refusal, and only a refusal, has a wait')
        assert.equal((await scriptCalls()) - before, 1, 'one script call for the turn')
      } finally {
        info.disconnect()
        await limiter.close()
      }
    },
  )

  needRedis.it('200 parallel requests against burst 50 on one server: exactly 50 succeed', async () => {
    const server = await limitedServer(new RedisRateLimiter(env.redis!.url, 'test1:', PATIENT_REDIS_MS), {
      ratePerMin: 1,
      burst: 50,
    })
    try {
      assert.deepEqual(await burst([server.url], await newKey(server.keys, 'redis-burst')), { 200: 50, 429: 150 })
    } finally {
      await server.close()
    }
  })

  needRedis.it('two `mdq serve` processes sharing one Redis share one budget: exactly 50 of 200', async () => {
    const key = runMdq(['--db', env.db, 'keys', 'create', '--name', 'shared']).stdout.trim()
    const children: ChildProcess[] = []
    const urls: string[] = []
    try {
      for (let i = 0; i < 2; i++) {
        // A patient timeout: on a loaded machine a check slower than the default 250 ms would fail open and let a 51st through.
        const child = spawn(
          process.execPath,
          [
            MDQ_BIN(),
            '--db',
            env.db,
            'serve',
            '--port',
            '0',
            '--redis-url',
            env.redis!.url,
            '--redis-timeout',
            String(PATIENT_REDIS_MS),
            '--rate-limit',
            '1/min',
            '--burst',
            '50',
            '--cache-mb',
            '0',
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        )
        children.push(child)
        let out = ''
        child.stdout!.on('data', (d) => (out += d))
        urls.push(`http://127.0.0.1:${(await until(() => /127\.0\.0\.1:(\d+)/.exec(out), 'mdq serve to listen'))[1]}`)
      }
      assert.deepEqual(await burst(urls, key), { 200: 50, 429: 150 })
    } finally {
      for (const c of children) {
        c.kill('SIGTERM')
        await once(c, 'exit')
      }
    }
  })

  needRedis.it('refills at the configured rate, as measured between two refusals (Redis clock)', async () => {
    const server = await limitedServer(new RedisRateLimiter(env.redis!.url, 'test3:', PATIENT_REDIS_MS), {
      ratePerMin: 1200,
      burst: 200,
    })
    try {
      await assertRefillRate(server.url, await newKey(server.keys, 'redis-refill'))
    } finally {
      await server.close()
    }
  })

  needRedis.it(
    'Redis stopped: fail-open keeps serving, fail-closed answers 503; limiting resumes when Redis returns',
    async () => {
      const open = await limitedServer(
        new RedisRateLimiter(env.redis!.url, 'test4:', PATIENT_REDIS_MS),
        { ratePerMin: 1, burst: 3 },
        true,
      )
      const closed = await limitedServer(
        new RedisRateLimiter(env.redis!.url, 'test5:', PATIENT_REDIS_MS),
        { ratePerMin: 1, burst: 3 },
        false,
      )
      try {
        const k1 = await newKey(open.keys, 'open')
        assert.equal((await get(open.url, k1)).status, 200)
        await env.redis!.stop()
        for (let i = 0; i < 6; i++)
          assert.equal((await get(open.url, k1)).status, 200, 'fail-open serves beyond the burst')
        const k2 = await newKey(closed.keys, 'closed')
        const refused = await get(closed.url, k2)
        assert.equal(refused.status, 503)
        assert.deepEqual(await refused.json(), {
          code: 503,
          message: 'Rate limiting is unavailable right now; retry shortly.',
        })
        await env.redis!.start()
        // ioredis reconnects by itself (no restart): wait until limiting answers again, then exhaust.
        await until(async () => (await get(closed.url, k2)).status !== 503, 'limiting to answer again', {
          everyMs: 100,
        })
        const statuses: number[] = []
        for (let i = 0; i < 4; i++) statuses.push((await get(closed.url, k2)).status)
        assert.ok(statuses.includes(429), `limiting resumed: ${statuses}`)
        const k3 = await newKey(open.keys, 'open-after')
        const after: number[] = []
        for (let i = 0; i < 4; i++) after.push((await get(open.url, k3)).status)
        assert.deepEqual(after, [200, 200, 200, 429])
      } finally {
        await open.close()
        await closed.close()
      }
    },
  )
})
