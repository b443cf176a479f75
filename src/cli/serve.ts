/** @module `mdq serve`'s work: open the store, build the app, listen, shut down gracefully (loaded only when serving). */
import { MdqError } from '../domain/errors.js'
import { buildApp } from '../http/app.js'
import { Metrics } from '../http/observability.js'
import { InProcessLiveFeed } from '../live/live-feed.js'
import { ingestApp, keepFoldingAppends } from './ingest-listener.js'
import { MemoryRateLimiter, RedisRateLimiter } from '../auth/rate-limiter.js'
import { displayLocation, openStores, type StoreLocation } from '../store/backends.js'
import { poolRunner } from '../runner/query-pool.js'
import { PIECE_CODERS, type PieceCoder } from '../encode/gzip-member.js'
import { logDestination } from './log-destination.js'
import type { LogFormat } from './log-format.js'
import { StreamHub } from '../live/stream-hub.js'
import { RedisFanout } from '../live/redis-fanout.js'
import { FileIngestLog } from '../ingest/file-log.js'
import { storedSnapshots, streamFeed } from '../live/feed-snapshots.js'

export interface ServeConfig {
  /** The store; serve never creates one. */
  readonly store: StoreLocation
  readonly keys?: StoreLocation
  readonly port: number
  readonly host: string
  readonly logLevel: string
  /** JSON lines, or readable lines (`auto`: readable on a terminal). */
  readonly logFormat: LogFormat
  /** Response cache size in MB (0 disables). */
  readonly cacheMb: number
  /** How long a cached answer may stand in for its newer one being computed (ms; 0 = never). */
  readonly staleWhileRevalidate: number
  /** Default quota of keys without their own, requests per minute and burst. */
  readonly rateLimit: number
  readonly burst: number
  /** Share the budget between instances through Redis; absent = in memory. */
  readonly redisUrl?: string
  readonly redisFailure: 'open' | 'closed'
  /** How long one rate-limit check may wait for Redis before the failure policy answers, in ms. */
  readonly redisTimeout: number
  /** Worker threads for uncached klines queries; 0 = in the main thread. */
  readonly workers: number
  /** The ingest listener's port (absent: no ingest) and address. */
  readonly ingestPort?: number
  readonly ingestHost: string
  /** When a quote push is answered: once written (default), or once logged in the store (IngestLog) and written behind. */
  readonly ingestAnswer?: 'written' | 'logged'
  /** Logged pushes: the directory of an ingest log in files (FileIngestLog) instead of the store's. */
  readonly ingestLog?: string
  /** Logged pushes: a write behind at most this often (ms) while they keep coming; 0 or absent: as soon as the one before ends. */
  readonly ingestWriteEvery?: number
  /** The ingest thread's nice value (SQLite, Linux); 0 or absent: the process's. */
  readonly ingestNice?: number
  /** Stream connections one key may hold on this instance. */
  readonly streamConnectionsPerKey: number
  /** Stream subscriptions (channel and symbol) one key may hold on this instance. */
  readonly streamSubscriptionsPerKey: number
}

/**
 * The compression bench's variants (bench/compression.bench.ts), from MDQ_BENCH_COMPRESSION: the
 * workers' gzip coder (`js-huffman`, `zlib-1`, `zlib-huffman`) and, as `br-N`, brotli's quality.
 */
function benchCompression(env = process.env.MDQ_BENCH_COMPRESSION ?? ''): {
  coder?: PieceCoder
  brotliQuality?: number
} {
  const out: { coder?: PieceCoder; brotliQuality?: number } = {}
  for (const part of env.split(',').filter(Boolean)) {
    const br = /^br-(\d+)$/.exec(part)
    if (br) out.brotliQuality = Number(br[1])
    else if ((PIECE_CODERS as readonly string[]).includes(part)) out.coder = part as PieceCoder
    else throw new Error(`MDQ_BENCH_COMPRESSION: unknown variant ${part}`)
  }
  return out
}

/** How long in-flight requests may take to finish after SIGINT/SIGTERM. */
export const SHUTDOWN_GRACE_MS = 10_000

/**
 * Serves until SIGINT/SIGTERM, then finishes in-flight requests and closes the store; resolves once
 * listening, with the ingest listener's address when there is one.
 */
export async function serve(config: ServeConfig): Promise<{ readonly ingestUrl?: string }> {
  if (config.ingestWriteEvery && config.ingestAnswer !== 'logged')
    throw new MdqError(
      'BAD_PARAM',
      '--ingest-write-every applies to pushes answered once logged (--ingest-answer logged); pushes answered once written are written as they come',
    )
  if (config.ingestLog !== undefined && config.ingestAnswer !== 'logged')
    throw new MdqError(
      'BAD_PARAM',
      '--ingest-log keeps the log of pushes answered once logged (--ingest-answer logged); pushes answered once written need none',
    )
  if (config.ingestNice && process.platform !== 'linux')
    throw new MdqError(
      'BAD_PARAM',
      `--ingest-nice needs Linux, which keeps a priority per thread (this is ${process.platform})`,
    )
  const fileLog = config.ingestLog === undefined ? undefined : new FileIngestLog(config.ingestLog)
  await fileLog?.open().catch((err: unknown) => {
    throw new MdqError('BAD_PARAM', `--ingest-log ${config.ingestLog}: cannot be used (${(err as Error).message})`)
  })
  const { market: store, keys } = await openStores({ store: config.store, keys: config.keys, create: false })
  // Flags this store cannot take: refused in one line, with nothing left open.
  const refused =
    config.ingestAnswer === 'logged' && !store.ingestLog
      ? '--ingest-answer logged needs a store that keeps an ingest log (ClickHouse); this store answers pushes once written, in one local transaction, as fast'
      : config.ingestNice && !store.capabilities.blockingReads
        ? '--ingest-nice sets the priority of the ingest thread of a store whose writes hold a thread (SQLite); on this store pushes are taken on the main thread'
        : undefined
  if (refused) {
    await Promise.all([store.close(), keys.close(), fileLog?.close()])
    throw new MdqError('BAD_PARAM', refused)
  }
  const limiter = config.redisUrl
    ? new RedisRateLimiter(config.redisUrl, undefined, config.redisTimeout)
    : new MemoryRateLimiter()
  if (config.rateLimit === 0) await limiter.close()
  // Snapshots pushed to any instance reach every instance's subscribers through the same Redis.
  const hub = new StreamHub()
  // What the streams answered before a restart: each symbol's latest quote and depth, as stored.
  hub.receive({ snapshots: await storedSnapshots(store), publishedMs: Date.now() }, 'catch-up')
  const fanout = config.redisUrl ? new RedisFanout(config.redisUrl, hub) : undefined
  const logStream = logDestination(config.logFormat, process.stdout.isTTY === true)
  const bench = benchCompression()
  // Each worker opens the store itself through the same factory (a SQLite handle per thread).
  const runner =
    config.workers > 0
      ? poolRunner(
          config.workers,
          { store: config.store, keys: config.keys, ...(bench.coder && { coder: bench.coder }) },
          store.capabilities,
        )
      : undefined
  const logger = { level: config.logLevel, redact: ['req.headers["x-api-key"]'], stream: logStream.stream }
  // One registry for both listeners: /metrics shows the pushes too.
  const metrics = new Metrics()
  const app = await buildApp({
    runner,
    store,
    keys,
    metrics,
    logger,
    responseCacheBytes: config.cacheMb * 1024 * 1024,
    staleWhileRevalidateMs: config.staleWhileRevalidate,
    rateLimit:
      config.rateLimit === 0
        ? undefined
        : {
            limiter,
            defaults: { ratePerMin: config.rateLimit, burst: config.burst },
            failOpen: config.redisFailure === 'open',
          },
    now: Date.now, // the wall clock, read only for a quote's session
    live: {
      hub,
      fanout,
      caps: {
        connectionsPerKey: config.streamConnectionsPerKey,
        subscriptionsPerKey: config.streamSubscriptionsPerKey,
      },
    },
    ...(bench.brotliQuality !== undefined && { brotliQuality: bench.brotliQuality }),
  })
  const feed = new InProcessLiveFeed((err) => app.log.error({ err }, 'a live feed listener failed'))
  // What the ingest listener accepts goes out on the streams of every instance.
  streamFeed(feed, hub)
  const listener =
    config.ingestPort === undefined
      ? undefined
      : await ingestApp({
          store,
          at: { store: config.store, keys: config.keys },
          keys,
          feed,
          metrics,
          logger,
          logged: config.ingestAnswer === 'logged',
          writeEveryMs: config.ingestWriteEvery ?? 0,
          ...(fileLog && { ingestLog: fileLog }),
          ...(config.ingestNice && { nice: config.ingestNice }),
        })
  const ingest = listener?.app
  const stopFolding = keepFoldingAppends(store, app.log, listener?.foldAppends)
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    // Each connection closes once its answers are written (src/http/connections.ts); in-flight
    // requests get at most SHUTDOWN_GRACE_MS. Pushes in flight finish (answered once durable)
    // before the store closes.
    const listeners = ingest ? [app, ingest] : [app]
    const hard = setTimeout(() => listeners.forEach((l) => l.server.closeAllConnections()), SHUTDOWN_GRACE_MS)
    await Promise.all(listeners.map((l) => l.close())) // the app's close also closes the limiter and every stream
    clearTimeout(hard)
    await stopFolding()
    await Promise.all([store.close(), keys.close(), runner?.close(), fanout?.close(), fileLog?.close()])
    logStream.flushSync()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  let listening = { host: config.host, port: config.port }
  try {
    await app.listen(listening)
    if (ingest && config.ingestPort !== undefined) {
      listening = { host: config.ingestHost, port: config.ingestPort }
      await ingest.listen(listening)
    }
  } catch (err) {
    // Nothing may keep the process alive after this (the Redis client reconnects forever): close
    // everything, and exit even if something was missed.
    setTimeout(() => process.exit(1), 2000).unref()
    await stopFolding()
    await app.close().catch(() => {})
    await ingest?.close().catch(() => {})
    await limiter.close()
    await Promise.all([store.close(), keys.close(), runner?.close(), fanout?.close()])
    logStream.flushSync()
    const code = (err as { code?: string }).code
    const reason =
      code === 'EADDRINUSE'
        ? 'the address is already in use'
        : code === 'EACCES'
          ? 'permission denied'
          : (err as Error).message
    throw Object.assign(new Error(`cannot listen on ${listening.host}:${listening.port}: ${reason}`), { code })
  }
  const shown = displayLocation(config.store)
  app.log.info(
    { store: shown, workers: config.workers },
    `mdq serving ${shown} on http://${config.host}:${(app.server.address() as { port: number }).port}`,
  )
  const ingestUrl = ingest && `http://${config.ingestHost}:${(ingest.server.address() as { port: number }).port}`
  if (ingestUrl) app.log.info(`mdq ingest listening on ${ingestUrl} (keys of scope ingest)`)
  logStream.flush() // the address lines, at once: scripts wait for them
  return { ...(ingestUrl && { ingestUrl }) }
}
