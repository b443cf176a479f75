/** @module What operators watch: /healthz, /readyz and Prometheus /metrics (no key, no data, no keys revealed). */
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { RateLimiter } from '../auth/rate-limiter.js'
import type { KeyStore } from '../store/key-store.js'
import type { MarketStore } from '../store/market-store.js'
import type { QueryRunner } from '../runner/query-runner.js'
import { loggedUrl } from './request-log.js'
import type { ResponseCache } from '../runner/response-cache.js'
import { withTimedReads } from '../runner/timed-reads.js'
import { docTag } from './doc-tags.js'
import { answeredWithin } from '../lib/deadline.js'

/** Counts one finished request of a route (Metrics.requestOf). */
export type RequestCounter = (status: number, seconds: number) => void

/** The fields of a request's log line, in their order: the Fastify hook and the fast path write the same line. */
export interface RequestLine {
  readonly method: string
  /** The URL as logged (request-log.ts: rebuilt, keys redacted). */
  readonly url: string
  readonly route: string
  readonly status: number
  readonly ms: number
  readonly keyId: number | undefined
}

/** Writes a request's log line (`reqId` first when the logger does not bind it itself). */
export function logRequest(log: FastifyBaseLogger, line: RequestLine, reqId?: string): void {
  const fields = { ...line, ms: Math.round(line.ms * 100) / 100 }
  log.info(reqId === undefined ? fields : { reqId, ...fields }, 'request')
}

/** The metrics of one app (a registry of its own, so tests can build many apps). */
export class Metrics {
  readonly registry = new Registry()
  readonly requests = new Counter({
    name: 'mdq_http_requests_total',
    help: 'HTTP requests by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  })
  readonly latency = new Histogram({
    name: 'mdq_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['route', 'method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  })
  readonly rateLimited = new Counter({
    name: 'mdq_rate_limited_total',
    help: 'Requests refused with 429, by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  })
  readonly ingestRows = new Counter({
    name: 'mdq_ingest_rows_total',
    help: 'Pushed rows in batches made durable, by kind (quotes, bars, depth)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  })
  readonly ingestIgnored = new Counter({
    name: 'mdq_ingest_ignored_total',
    help: "Pushed quotes and depth that changed nothing: older than the symbol's latest (stale) or it again (duplicate)",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  })
  readonly ingestWriteFailures = new Counter({
    name: 'mdq_ingest_write_behind_failures_total',
    help: 'Writes of logged pushes (--ingest-answer logged) that failed; each is tried again',
    registers: [this.registry],
  })
  readonly limiterErrors = new Counter({
    name: 'mdq_rate_limiter_errors_total',
    help: 'Rate-limiter backend failures (Redis unreachable), by operation',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  })
  readonly storeReads = new Histogram({
    name: 'mdq_store_read_duration_seconds',
    help: 'Time spent in store reads, by operation',
    labelNames: ['operation'] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [this.registry],
  })

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mdq_' })
  }

  /**
   * Counts a finished request and its latency, by route: `requestOf(route, method)(status, seconds)`.
   * The label children are bound once, so a caller that answers one route many times (the fast path)
   * holds the returned function.
   */
  requestOf(route: string, method: string): RequestCounter {
    const latency = this.latency.labels(route, method)
    const byStatus = new Map<number, { inc(): void }>()
    return (status, seconds) => {
      let count = byStatus.get(status)
      if (count === undefined) byStatus.set(status, (count = this.requests.labels(route, method, String(status))))
      count.inc()
      latency.observe(seconds)
    }
  }

  /** A gauge read when scraped: the symbols whose logged pushes are not written yet (`unwritten`). */
  watchWriteBehind(unwritten: () => number): void {
    new Gauge({
      name: 'mdq_ingest_unwritten_symbols',
      help: 'Symbols whose logged pushes (--ingest-answer logged) wait to be written, readable once they are',
      registers: [this.registry],
      collect() {
        this.set(unwritten())
      },
    })
  }

  /** Gauges read when scraped: cache counters and the store's import generation. */
  watch(cache: ResponseCache, store: MarketStore, runner: QueryRunner): void {
    const registers = [this.registry]
    new Gauge({
      name: 'mdq_query_queue_size',
      help: 'Klines queries waiting for a free worker thread (always 0 with --workers 0)',
      registers,
      collect() {
        this.set(runner.queueSize())
      },
    })
    new Gauge({
      name: 'mdq_response_cache_hits_total',
      help: 'Answers served from the response cache',
      registers,
      collect() {
        this.set(cache.hits)
      },
    })
    new Gauge({
      name: 'mdq_response_cache_misses_total',
      help: 'Cacheable answers computed',
      registers,
      collect() {
        this.set(cache.misses)
      },
    })
    new Gauge({
      name: 'mdq_response_cache_stale_total',
      help: 'Cached answers sent while the answer of their newer data was computed (--stale-while-revalidate)',
      registers,
      collect() {
        this.set(cache.stale)
      },
    })
    new Gauge({
      name: 'mdq_response_cache_bytes',
      help: 'Memory held by cached answers',
      registers,
      collect() {
        this.set(cache.bytes)
      },
    })
    new Gauge({
      name: 'mdq_store_imports_total',
      help: 'Imports committed to the store so far (any process)',
      registers,
      async collect() {
        this.set(await store.importCount().catch(() => NaN))
      },
    })
  }
}

/** A MarketStore whose reads are timed into `mdq_store_read_duration_seconds` (a decorator: backends stay unaware). */
export function timedStore(store: MarketStore, metrics: Metrics): MarketStore {
  return withTimedReads(store, (operation, seconds) => metrics.storeReads.observe({ operation }, seconds))
}

/**
 * How long /readyz waits for each check. A store that accepts connections but whose queries hang (a
 * server whose query slots are all taken) is not ready, however long its own read timeout is.
 */
export const READY_CHECK_MS = 3000

/**
 * `ok`, `failed` when the check throws, or `timeout` when it has not answered within READY_CHECK_MS
 * (the check itself runs on to its own timeout; its answer is no longer waited for).
 */
async function verdict(check: () => Promise<unknown>, failed: string): Promise<string> {
  let settled = false
  const run = (async () => check())().finally(() => (settled = true))
  try {
    await answeredWithin(run, READY_CHECK_MS, 'a readiness check')
    return 'ok'
  } catch {
    return settled ? failed : 'timeout'
  }
}

export interface ObservabilityOptions {
  readonly store: MarketStore
  readonly keys: KeyStore
  readonly metrics: Metrics
  readonly limiter?: RateLimiter
  /** The streams' fan-out to other instances, when there is one. */
  readonly fanout?: { reachable(): boolean }
}

/** Every listener's request log line and request metrics: one onResponse hook (request.routeOptions builds an object per read). */
const requestLog: FastifyPluginAsync<{ readonly metrics: Metrics }> = async (app: FastifyInstance, { metrics }) => {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched'
    const ms = reply.elapsedTime
    const line = {
      method: req.method,
      url: loggedUrl(req.url),
      route,
      status: reply.statusCode,
      ms,
      keyId: req.apiKey?.id,
    }
    logRequest(req.log, line)
    metrics.requestOf(route, req.method)(reply.statusCode, ms / 1000)
  })
}
export const requestLogPlugin = fp(requestLog, { name: 'mdq-request-log' })

const observability: FastifyPluginAsync<ObservabilityOptions> = async (
  app: FastifyInstance,
  { store, keys, metrics, limiter, fanout },
) => {
  await app.register(requestLogPlugin, { metrics })
  // Documented on /docs, without a key.
  const system = { ...docTag('system'), security: [] }
  app.get('/healthz', { schema: { ...system, summary: 'Alive: {"status": "ok"}' } }, async () => ({ status: 'ok' }))
  app.get(
    '/readyz',
    {
      schema: {
        ...system,
        summary:
          "Ready: the store reads and its checksums verify, the keys read, and Redis answers (the rate limiter and the streams' fan-out) when configured, each within 3 s; else 503",
      },
    },
    async (_req, reply) => {
      // At once, each with its own deadline: one hanging check neither hides nor delays the others.
      const [storeCheck, keysCheck, redisCheck] = await Promise.all([
        verdict(() => store.check(), 'unreadable'),
        verdict(() => keys.check(), 'unreadable'),
        limiter?.name === 'redis'
          ? verdict(async () => {
              if (!(await limiter.ready())) throw new Error('unreachable')
            }, 'unreachable')
          : undefined,
      ])
      const checks: Record<string, string> = {
        store: storeCheck,
        keys: keysCheck,
        ...(redisCheck !== undefined && { redis: redisCheck }),
        ...(fanout && {
          stream_fanout: fanout.reachable()
            ? 'ok'
            : "unreachable: snapshots pushed here reach only this instance's subscribers",
        }),
      }
      const ready = Object.values(checks).every((c) => c === 'ok')
      return reply
        .code(ready ? 200 : 503)
        .send(ready ? { status: 'ready', checks } : { code: 503, message: 'Not ready.', checks })
    },
  )
  app.get('/metrics', { schema: { ...system, summary: 'Prometheus metrics (text format)' } }, async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  )
}

export const observabilityPlugin = fp(observability, { name: 'mdq-observability' })
