// The fast path for cached answers (src/http/fast-answers.ts) over real HTTP: the same answers as the
// full path (an app with the fast path off, same store, same requests), the same auth and revocation,
// exact rate limits (memory and Redis), a new data version never answered from the old entry, and
// the same log line without the key.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../../src/auth/rate-limiter.js'
import type { AppOptions } from '../../src/http/app.js'
import { PATIENT_REDIS_MS } from '../helpers/redis.js'
import { redisServer, Requirements } from '../helpers/requirements.js'
import { newKey, rawRequest, startServer, type TestServer } from '../helpers/server.js'
import { minuteCsv, runMdq } from '../helpers/store-files.js'
import { metricSum } from '../security/harness.js'
import { demoAndRedis } from '../helpers/demo-and-redis.js'
import { until } from '../helpers/wait.js'

const needRedis = new Requirements(redisServer())
const env = demoAndRedis(needRedis)

type Raw = Awaited<ReturnType<typeof rawRequest>>
const answered = (s: TestServer) => s.app.fastAnswers?.answered ?? 0
/** A slow refill (1 a minute) and a deep bucket: two servers taking the same tokens report the same remaining. */
const generous = (limiter: RateLimiter): AppOptions['rateLimit'] => ({
  limiter,
  defaults: { ratePerMin: 1, burst: 100_000 },
  failOpen: false,
})

// Answers above the 1 KB compression threshold and below it, limited routes and unlimited ones.
const PATHS = [
  '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward',
  '/v1/klines?symbol=600519.SH&count=3',
  '/v1/klines/ex-factors?symbols=600519.SH,AAPL.US',
  '/v1/instruments?symbols=600519.SH,AAPL.US',
  '/v1/exchanges',
]
// As clients send them, and the odd ones where the cached path's choice must agree with @fastify/compress's.
const ENCODINGS = [
  undefined,
  'gzip',
  'br',
  'gzip, deflate, br',
  'deflate',
  'identity',
  '*',
  'gzip;q=0, br;q=0.5',
  'x-gzip',
]

/** Each path and encoding: once to fill the cache, then as measured: plain, and with three If-None-Match. */
async function sequence(s: TestServer, key: string): Promise<Raw[]> {
  const out: Raw[] = []
  for (const path of PATHS) {
    for (const encoding of ENCODINGS) {
      const headers: Record<string, string> = { 'X-API-Key': key, ...(encoding && { 'Accept-Encoding': encoding }) }
      assert.equal((await rawRequest(s.url + path, headers)).status, 200)
      const plain = await rawRequest(s.url + path, headers)
      out.push(plain)
      for (const inm of [String(plain.headers.etag), 'W/"another"', '*'])
        out.push(await rawRequest(s.url + path, { ...headers, 'If-None-Match': inm }))
    }
  }
  return out
}

describe('fast path for cached answers', () => {
  it('answers exactly as the full path: status, headers and body bytes, identity, gzip and br, with and without If-None-Match', async () => {
    const fast = await startServer(env.db, { rateLimit: generous(new MemoryRateLimiter()) })
    const full = await startServer(env.db, { rateLimit: generous(new MemoryRateLimiter()), fastPath: false })
    try {
      const a = await sequence(fast, fast.key)
      const b = await sequence(full, full.key)
      assert.equal(
        answered(fast),
        PATHS.length * ENCODINGS.length * 4,
        'every measured request was answered by the fast path',
      )
      assert.equal(full.app.fastAnswers, undefined)
      assert.ok(
        a.some((r) => r.headers['content-encoding'] === 'br') &&
          a.some((r) => r.headers['content-encoding'] === 'gzip') &&
          a.some((r) => r.status === 304),
      )
      for (const [i, x] of a.entries()) {
        const y = b[i]
        const what = `request ${i} (${PATHS[Math.floor(i / (ENCODINGS.length * 4))]})`
        assert.equal(x.status, y.status, what)
        assert.ok(x.body.equals(y.body), `${what}: the same bytes`)
        const names = (r: Raw) =>
          Object.keys(r.headers)
            .filter((h) => h !== 'date')
            .sort()
        assert.deepEqual(names(x), names(y), what)
        for (const h of names(x)) {
          if (h === 'ratelimit-reset')
            assert.ok(Math.abs(Number(x.headers[h]) - Number(y.headers[h])) <= 30, `${what}: ${h}`)
          else assert.equal(x.headers[h], y.headers[h], `${what}: ${h}`)
        }
      }
      // The same metrics: requests by route and status, and cache hits.
      const scrape = async (s: TestServer) => (await fetch(`${s.url}/metrics`)).text()
      const [ma, mb] = [await scrape(fast), await scrape(full)]
      for (const line of mb.split('\n').filter((l) => l.startsWith('mdq_http_requests_total{route="/v1/')))
        assert.ok(ma.includes(line), `fast path metrics lack: ${line}`)
      assert.equal(metricSum(ma, 'mdq_response_cache_hits_total'), metricSum(mb, 'mdq_response_cache_hits_total'))
      assert.equal(
        metricSum(ma, 'mdq_http_request_duration_seconds_count'),
        metricSum(mb, 'mdq_http_request_duration_seconds_count'),
      )
    } finally {
      await Promise.all([fast.close(), full.close()])
    }
  })

  it('a key revoked in another process is refused on a held URL within the contract test bound (600 ms)', async () => {
    const server = await startServer(env.db)
    try {
      const key = await newKey(server.keys, 'fast-revoke')
      const path = '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward'
      for (let i = 0; i < 2; i++) assert.equal((await rawRequest(server.url + path, { 'X-API-Key': key })).status, 200)
      assert.equal(answered(server), 1, 'the URL is held: the second request was answered by the fast path')
      const id = (await server.keys.listKeys()).find((k) => k.name === 'fast-revoke')!.id
      assert.equal(runMdq(['--db', env.db, 'keys', 'revoke', String(id)]).status, 0)
      await sleep(600)
      const refused = await rawRequest(server.url + path, { 'X-API-Key': key })
      assert.equal(refused.status, 401)
      assert.match(refused.body.toString(), /revoked/)
      assert.equal(answered(server), 1)
      // Another key on the same held URL still gets it from the fast path.
      assert.equal((await rawRequest(server.url + path, { 'X-API-Key': server.key })).status, 200)
      assert.equal(answered(server), 2)
    } finally {
      await server.close()
    }
  })

  const exactLimit = async (limiter: RateLimiter) => {
    const server = await startServer(env.db, {
      rateLimit: { limiter, defaults: { ratePerMin: 1, burst: 40 }, failOpen: false },
    })
    try {
      const path = '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward'
      const get = () => rawRequest(server.url + path, { 'X-API-Key': server.key })
      assert.equal((await get()).status, 200) // computed and held: 39 tokens left
      const all = await Promise.all(Array.from({ length: 100 }, get))
      const ok = all.filter((r) => r.status === 200)
      const refused = all.filter((r) => r.status === 429)
      assert.equal(ok.length, 39, 'exactly the tokens left were served')
      assert.equal(refused.length, 61)
      assert.equal(answered(server), 39, 'the allowed ones by the fast path')
      assert.deepEqual(
        ok.map((r) => Number(r.headers['ratelimit-remaining'])).sort((x, y) => x - y),
        Array.from({ length: 39 }, (_, i) => i),
      )
      for (const r of refused) {
        assert.equal(r.headers['ratelimit-remaining'], '0')
        assert.ok(Number(r.headers['retry-after']) >= 1)
        assert.equal((JSON.parse(r.body.toString()) as { code: number }).code, 429)
      }
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      assert.equal(metricSum(metrics, 'mdq_rate_limited_total'), 61)
    } finally {
      await server.close()
    }
  }
  it('rate limits stay exact through the fast path (memory): N served, then 429 with Retry-After, one token per request', () =>
    exactLimit(new MemoryRateLimiter()))
  needRedis.it(
    'rate limits stay exact through the fast path (Redis): N served, then 429 with Retry-After, one token per request',
    () => exactLimit(new RedisRateLimiter(env.redis!.url, 'fast:', PATIENT_REDIS_MS)),
  )

  needRedis.it(
    'a limiter outage on a held URL goes through Fastify (fail-open serves and counts it); once back, limits are exact again',
    async () => {
      const server = await startServer(env.db, {
        rateLimit: {
          limiter: new RedisRateLimiter(env.redis!.url, 'fast-outage:', PATIENT_REDIS_MS),
          defaults: { ratePerMin: 1, burst: 5 },
          failOpen: true,
        },
      })
      try {
        const path = '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward'
        const get = (key: string) => rawRequest(server.url + path, { 'X-API-Key': key })
        for (let i = 0; i < 2; i++) assert.equal((await get(server.key)).status, 200)
        assert.equal(answered(server), 1)
        await env.redis!.stop()
        for (let i = 0; i < 4; i++) {
          const r = await get(server.key)
          assert.equal(r.status, 200, 'fail-open serves')
          assert.equal(
            r.headers['ratelimit-remaining'],
            undefined,
            'unlimited, as the full path answers during an outage',
          )
        }
        assert.equal(answered(server), 1, 'the outage went to Fastify')
        assert.equal(metricSum(await (await fetch(`${server.url}/metrics`)).text(), 'mdq_rate_limiter_errors_total'), 4)
        await env.redis!.start()
        const probe = await newKey(server.keys, 'outage-probe')
        await until(
          async () => (await get(probe)).headers['ratelimit-remaining'] !== undefined,
          'limiting to answer again',
          { everyMs: 100 },
        )
        const fresh = await newKey(server.keys, 'outage-after')
        const statuses: number[] = []
        for (let i = 0; i < 6; i++) statuses.push((await get(fresh)).status)
        assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429])
        assert.ok(answered(server) >= 5, 'the fast path serves again')
      } finally {
        await server.close()
      }
    },
  )

  it('an import (a new data version) is never answered from the old entry', async () => {
    const live = join(env.dir, 'live.db')
    minuteCsv(join(env.dir, 'v1.csv'), '600000.SH', 3, 1)
    minuteCsv(join(env.dir, 'v2.csv'), '600000.SH', 3, 2)
    assert.equal(runMdq(['--db', live, 'import', 'bars', join(env.dir, 'v1.csv'), '--period', '1m']).status, 0)
    const server = await startServer(live)
    try {
      const path = '/v1/klines?symbol=600000.SH&period=1m&count=5'
      const volumes = async () => {
        const r = await rawRequest(server.url + path, { 'X-API-Key': server.key })
        assert.equal(r.status, 200)
        return {
          etag: r.headers.etag,
          volume: (JSON.parse(r.body.toString()) as { data: { volume: number[] } }).data.volume,
        }
      }
      for (let i = 0; i < 3; i++) assert.deepEqual((await volumes()).volume, [1, 1, 1, 1, 1])
      assert.equal(answered(server), 2, 'held after the first')
      const before = await volumes()
      const imported = runMdq(['--db', live, 'import', 'bars', join(env.dir, 'v2.csv'), '--period', '1m'])
      assert.equal(imported.status, 0, imported.stderr)
      const fresh = await volumes()
      assert.deepEqual(fresh.volume, [2, 2, 2, 2, 2], 'the first request after the import sees the new data')
      assert.notEqual(fresh.etag, before.etag)
      assert.equal(answered(server), 3, 'the first request after the import went to the full path')
      for (let i = 0; i < 2; i++) assert.deepEqual((await volumes()).volume, [2, 2, 2, 2, 2])
      assert.equal(answered(server), 5, 'the new answer is held in turn')
    } finally {
      await server.close()
    }
  })

  it('logs one line per request, the same fields as the full path, never the key', async () => {
    const lines: string[] = []
    const stream = new Writable({
      write: (chunk: Buffer, _enc, done) => (lines.push(...chunk.toString().split('\n').filter(Boolean)), done()),
    })
    const server = await startServer(env.db, { logger: { level: 'info', stream } })
    try {
      const path = '/v1/klines?symbol=600519.SH&period=1d&count=100&adjust=forward'
      for (let i = 0; i < 4; i++)
        assert.equal((await rawRequest(server.url + path, { 'X-API-Key': server.key })).status, 200)
      assert.equal((await rawRequest(`${server.url}${path}&api_key=${server.key}`)).status, 200) // a key in the URL: the full path
      assert.equal((await rawRequest(server.url + path, { 'X-API-Key': server.key, 'If-None-Match': '*' })).status, 304)
      assert.equal(answered(server), 4, 'all but the first and the one with the key in its URL')
      const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request')
      assert.equal(requests.length, 6, 'one line per request')
      const [computed, fast1, fast2, fast3, inUrl, notModified] = requests
      for (const l of [fast1, fast2, fast3, inUrl, notModified])
        assert.deepEqual(Object.keys(l), Object.keys(computed), 'the same fields, in the same order')
      for (const l of [fast1, fast2, fast3])
        for (const f of ['level', 'pid', 'hostname', 'method', 'url', 'route', 'status', 'keyId', 'msg'])
          assert.equal(l[f], computed[f], f)
      assert.equal(notModified.status, 304)
      assert.equal(new Set(requests.map((l) => l.reqId)).size, 6, 'each request its own id')
      assert.ok(!lines.some((l) => l.includes(server.key) || l.includes(server.key.slice(4))), 'no key in the logs')
    } finally {
      await server.close()
    }
  })
})
