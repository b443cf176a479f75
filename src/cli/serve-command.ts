/** @module `mdq serve` and `mdq start`: their flags; the serving itself (serve.ts) is loaded only when one runs. */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { generateKey, hashKey } from '../auth/api-keys.js'
import { REDIS_COMMAND_TIMEOUT_MS } from '../auth/rate-limiter.js'
import { parseRate, positiveInt } from './keys-command.js'
import { buildDemo } from './demo-command.js'
import { positiveNumber } from './import-command.js'
import { backendOf, displayLocation, openKeyStore } from '../store/backends.js'
import { defaultWorkers } from '../runner/query-pool.js'
import { storeFlags } from './store-flags.js'
import { DEFAULT_STREAM_CAPS } from '../live/stream-session.js'
import { LOG_FORMATS, type LogFormat } from './log-format.js'

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

/** --ingest-nice: a nice value 0..19. */
function niceValue(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 19)
    throw new InvalidArgumentError('must be a whole number 0..19 (0 = the priority of the rest of the process)')
  return n
}

/** --ingest-write-every: whole milliseconds 0..60000. */
function writeEveryMs(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 60_000)
    throw new InvalidArgumentError(
      'must be a whole number of milliseconds 0..60000 (0 = as soon as the write before ends)',
    )
  return n
}

/** --stale-while-revalidate: whole milliseconds 0..60000. */
function staleMs(value: string): number {
  const n = Number(value)
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 60_000)
    throw new InvalidArgumentError('must be a whole number of milliseconds 0..60000 (0 = off)')
  return n
}

function megabytes(value: string): number {
  const n = Number(value)
  if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number of megabytes >= 0')
  return n
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
          '--stale-while-revalidate <ms>',
          "once a push or an import changes a cached answer's data, send that answer while its new one is computed in the background, if it was known current at most ms ago (0 = off: every answer waits for its data's)",
        )
          .env('MDQ_STALE_WHILE_REVALIDATE_MS')
          .default(0)
          .argParser(staleMs),
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
        new Option(
          '--ingest-answer <when>',
          'answer a quote push once its bars are written (readable at once), or once it is logged and write them behind (ClickHouse: fewer, larger writes, readable a write later)',
        )
          .env('MDQ_INGEST_ANSWER')
          .choices(['written', 'logged'])
          .default('written'),
      )
      .addOption(
        new Option(
          '--ingest-write-every <ms>',
          'with --ingest-answer logged: write behind at most this often while pushes keep coming, at once when they pause (fewer, larger writes: more snapshots a second, readable up to that much later; 0 = as soon as the write before ends)',
        )
          .env('MDQ_INGEST_WRITE_EVERY_MS')
          .default(0)
          .argParser(writeEveryMs),
      )
      .addOption(
        new Option(
          '--ingest-log <dir>',
          "with --ingest-answer logged: keep the log of answered pushes in files under dir on this host (fsync'd appends) instead of in the store (on ClickHouse an INSERT each); replayed by the next ingest started over the same dir",
        ).env('MDQ_INGEST_LOG_DIR'),
      )
      .addOption(
        new Option(
          '--ingest-nice <n>',
          "on SQLite (Linux): the ingest thread's nice value, 0..19; higher yields the CPU to the reads, and to every other process at normal priority in mdq's session, so on a busy machine a feed may fall behind",
        )
          .env('MDQ_INGEST_NICE')
          .default(0)
          .argParser(niceValue),
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
    staleWhileRevalidate: number
    rateLimit: number
    burst: number
    redisUrl?: string
    redisFailure: 'open' | 'closed'
    redisTimeout: number
    workers: number
    ingestPort?: number
    ingestHost: string
    ingestAnswer: 'written' | 'logged'
    ingestWriteEvery: number
    ingestLog?: string
    ingestNice: number
    streamConnectionsPerKey: number
    streamSubscriptionsPerKey: number
  }

  options(program.command('serve').description('serve the HTTP API from the store')).action(async (o: Flags) => {
    const { serve } = await import('./serve.js')
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
      const { serve } = await import('./serve.js')
      const { ingestUrl } = await serve({
        ...flags,
        ...o,
        ...(live !== undefined && { ingestPort: o.ingestPort ?? 0, ingestHost: '127.0.0.1' }),
      })
      if (live !== undefined && ingestUrl) {
        const { runDemoFeed } = await import('./demo-feed.js')
        void runDemoFeed({
          ...flags,
          ingestUrl,
          speed: live,
          log: (line) => process.stderr.write(`${line}\n`),
        }).catch((err: unknown) =>
          process.stderr.write(`Live demo stopped: ${err instanceof Error ? err.message : String(err)}\n`),
        )
      }
    })
}
