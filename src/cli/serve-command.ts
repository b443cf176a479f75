/** @module `mdq serve` and `mdq start`: open the store, build the app, listen, shut down gracefully. */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { buildApp } from '../http/app.js'
import { Metrics } from '../http/observability.js'
import { InProcessLiveFeed } from '../live/live-feed.js'
import { ingestApp, keepFoldingAppends } from './ingest-listener.js'
import { generateKey, hashKey } from '../auth/api-keys.js'
import { MemoryRateLimiter, REDIS_COMMAND_TIMEOUT_MS, RedisRateLimiter } from '../auth/rate-limiter.js'
import { parseRate, positiveInt } from './keys-command.js'
import { buildDemo } from './demo-command.js'
import { runDemoFeed } from './demo-feed.js'
import { positiveNumber } from './import-command.js'
import { backendOf, displayLocation, openKeyStore, openStores, type StoreLocation } from '../store/backends.js'
import { defaultWorkers, poolRunner } from '../runner/query-pool.js'
import { storeFlags } from './store-flags.js'
import { PIECE_CODERS, type PieceCoder } from '../encode/gzip-member.js'
import { LOG_FORMATS, logDestination, type LogFormat } from './log-destination.js'
import { StreamHub } from '../live/stream-hub.js'
import { RedisFanout } from '../live/redis-fanout.js'
import { streamFeed } from '../live/feed-snapshots.js'
import { DEFAULT_STREAM_CAPS } from '../live/stream-session.js'

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

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number 0..65535')
  return n
}

/** --workers: a whole number 0..256 (0 = the main thread does the query work). */
export function workerCount(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 256)
    throw new InvalidArgumentError('must be a whole number of worker threads 0..256 (0 = query in the main thread)')
  return n
}

function megabytes(value: string): number {
  const n = Number(value)
  if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number of megabytes >= 0')
  return n
}

/** How long in-flight requests may take to finish after SIGINT/SIGTERM. */
export const SHUTDOWN_GRACE_MS = 10_000

/** Serves until SIGINT/SIGTERM; then finishes in-flight requests and closes the store. */
/** Resolves once listening, with the ingest listener's address when there is one. */
export async function serve(config: ServeConfig): Promise<{ readonly ingestUrl?: string }> {
  const { market: store, keys } = await openStores({ store: config.store, keys: config.keys, create: false })
  const limiter = config.redisUrl
    ? new RedisRateLimiter(config.redisUrl, undefined, config.redisTimeout)
    : new MemoryRateLimiter()
  if (config.rateLimit === 0) await limiter.close()
  // Snapshots pushed to any instance reach every instance's subscribers through the same Redis.
  const hub = new StreamHub()
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
      : await ingestApp({ store, at: { store: config.store, keys: config.keys }, keys, feed, metrics, logger })
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
    await Promise.all([store.close(), keys.close(), runner?.close(), fanout?.close()])
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
    { store: shown },
    `mdq serving ${shown} on http://${config.host}:${(app.server.address() as { port: number }).port}`,
  )
  const ingestUrl = ingest && `http://${config.ingestHost}:${(ingest.server.address() as { port: number }).port}`
  if (ingestUrl) app.log.info(`mdq ingest listening on ${ingestUrl} (keys of scope ingest)`)
  logStream.flush() // the address lines, at once: scripts wait for them
  return { ...(ingestUrl && { ingestUrl }) }
}

export function registerServe(program: Command): void {
  const options = (cmd: Command) =>
    cmd
      .addOption(new Option('--port <n>', 'port to listen on').env('PORT').default(8080).argParser(port))
      .addOption(new Option('--host <host>', 'address to listen on').env('HOST').default('127.0.0.1'))
      .addOption(
        new Option('--log-level <level>', 'pino log level')
          .env('LOG_LEVEL')
          .default('info')
          .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
      )
      .addOption(
        new Option('--log-format <format>', 'log lines as JSON, or readable (auto: readable on a terminal)')
          .env('MDQ_LOG_FORMAT')
          .default('auto')
          .choices(LOG_FORMATS),
      )
      .addOption(
        new Option('--cache-mb <n>', 'memory for cached answers to repeated requests (0 = off)')
          .env('MDQ_CACHE_MB')
          .default(64)
          .argParser(megabytes),
      )
      .addOption(
        new Option(
          '--rate-limit <rate>',
          'default quota per key on /v1/klines and /v1/klines/ex-factors, e.g. 600/min or 10/s (off: no limiting)',
        )
          .env('MDQ_RATE_LIMIT')
          .default(600, '600/min')
          .argParser(parseRate),
      )
      .addOption(new Option('--burst <n>', 'default burst per key').env('MDQ_BURST').default(60).argParser(positiveInt))
      .addOption(new Option('--redis-url <url>', 'share rate limits between instances through Redis').env('REDIS_URL'))
      .addOption(
        new Option('--ingest-port <n>', 'also listen here for pushed quotes, bars and depth (keys of scope ingest)')
          .env('MDQ_INGEST_PORT')
          .argParser(port),
      )
      .addOption(
        new Option('--ingest-host <host>', 'address of the ingest listener')
          .env('MDQ_INGEST_HOST')
          .default('127.0.0.1'),
      )
      .addOption(
        new Option('--workers <n>', 'worker threads for uncached klines queries (0 = in the main thread)')
          .env('MDQ_WORKERS')
          .default(defaultWorkers(), 'one per core')
          .argParser(workerCount),
      )
      .addOption(
        new Option('--redis-failure <mode>', 'when Redis is unreachable: serve unlimited (open) or answer 503 (closed)')
          .env('MDQ_REDIS_FAILURE')
          .default('open')
          .choices(['open', 'closed']),
      )
      .addOption(
        new Option('--redis-timeout <ms>', 'how long a rate-limit check waits for Redis before --redis-failure answers')
          .env('MDQ_REDIS_TIMEOUT_MS')
          .default(REDIS_COMMAND_TIMEOUT_MS)
          .argParser(positiveInt),
      )
      .addOption(
        new Option('--stream-connections-per-key <n>', 'WebSocket stream connections one key may hold per instance')
          .env('MDQ_STREAM_CONNECTIONS_PER_KEY')
          .default(DEFAULT_STREAM_CAPS.connectionsPerKey)
          .argParser(positiveInt),
      )
      .addOption(
        new Option(
          '--stream-subscriptions-per-key <n>',
          'stream subscriptions (channel and symbol pairs) one key may hold per instance',
        )
          .env('MDQ_STREAM_SUBSCRIPTIONS_PER_KEY')
          .default(DEFAULT_STREAM_CAPS.subscriptionsPerKey)
          .argParser(positiveInt),
      )
  type Flags = {
    port: number
    host: string
    logLevel: string
    logFormat: LogFormat
    cacheMb: number
    rateLimit: number
    burst: number
    redisUrl?: string
    redisFailure: 'open' | 'closed'
    redisTimeout: number
    workers: number
    ingestPort?: number
    ingestHost: string
    streamConnectionsPerKey: number
    streamSubscriptionsPerKey: number
  }

  options(program.command('serve').description('serve the HTTP API from the store')).action(async (o: Flags) => {
    await serve({ ...storeFlags(program), ...o })
  })

  options(program.command('start').description('npm start: build the demo store on first run, then serve'))
    .option(
      '--live [speed]',
      "also replay the store's latest day of the demo symbols' 1m bars as today's quotes into an ingest listener (loopback; --ingest-port or any), at speed times real time",
      positiveNumber,
    )
    .action(async (o: Flags & { live?: number | true }) => {
      const flags = storeFlags(program)
      const db = displayLocation(flags.store)
      if (!(await backendOf(flags.store).exists(flags.store))) {
        process.stderr.write(`No store at ${db}: building the demo data set...\n${await buildDemo(flags.store)}\n`)
        const keys = await openKeyStore(flags)
        const key = generateKey()
        await keys.createKey({ name: 'demo', hash: hashKey(key), ratePerMin: null, burst: null })
        await keys.close()
        process.stderr.write(
          `\nDemo API key (shown once, keep it): ${key}\n` +
            `Try: curl -H "X-API-Key: ${key}" "http://${o.host}:${o.port}/v1/klines?symbol=600519.SH&period=1w&adjust=forward&count=5"\n\n`,
        )
      } else {
        process.stderr.write(
          `Serving ${db}. Create an API key with: npx mdq keys create --name me${flags.isDefault ? '' : ` --store ${db}`}${flags.keys ? ` --keys ${displayLocation(flags.keys)}` : ''}\n`,
        )
      }
      const live = o.live === true ? 10 : o.live
      const { ingestUrl } = await serve({
        ...flags,
        ...o,
        ...(live !== undefined && { ingestPort: o.ingestPort ?? 0, ingestHost: '127.0.0.1' }),
      })
      if (live !== undefined && ingestUrl)
        void runDemoFeed({
          ...flags,
          ingestUrl,
          speed: live,
          log: (line) => process.stderr.write(`${line}\n`),
        }).catch((err: unknown) =>
          process.stderr.write(`Live demo stopped: ${err instanceof Error ? err.message : String(err)}\n`),
        )
    })
}
