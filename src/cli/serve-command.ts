/** @module `mdq serve` and `mdq start`: open the store, build the app, listen, shut down gracefully. */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { existsSync } from 'node:fs'
import { buildApp } from '../api/app.js'
import { generateKey, hashKey } from '../auth/api-keys.js'
import { SqliteStore } from '../store/sqlite/sqlite-store.js'
import { buildDemo } from './demo-command.js'

export interface ServeConfig {
  readonly db: string
  readonly port: number
  readonly host: string
  readonly logLevel: string
  /** Response cache size in MB (0 disables). */
  readonly cacheMb: number
}

function port(value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number 0..65535')
  return n
}

function megabytes(value: string): number {
  const n = Number(value)
  if (!(n >= 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number of megabytes >= 0')
  return n
}

/** Serves until SIGINT/SIGTERM; then finishes in-flight requests and closes the store. */
export async function serve(config: ServeConfig): Promise<void> {
  const store = SqliteStore.open(config.db)
  const app = await buildApp({
    store,
    logger: { level: config.logLevel, redact: ['req.headers["x-api-key"]'] },
    responseCacheBytes: config.cacheMb * 1024 * 1024,
  })
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    await app.close()
    await store.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  await app.listen({ port: config.port, host: config.host })
  app.log.info({ db: config.db }, `mdq serving ${config.db} on http://${config.host}:${(app.server.address() as { port: number }).port}`)
}

export function registerServe(program: Command): void {
  const options = (cmd: Command) =>
    cmd
      .addOption(new Option('--port <n>', 'port to listen on').env('PORT').default(8080).argParser(port))
      .addOption(new Option('--host <host>', 'address to listen on').env('HOST').default('127.0.0.1'))
      .addOption(new Option('--log-level <level>', 'pino log level').env('LOG_LEVEL').default('info').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
      .addOption(new Option('--cache-mb <n>', 'memory for cached answers to repeated requests (0 = off)').env('MDQ_CACHE_MB').default(64).argParser(megabytes))
  type Flags = { port: number; host: string; logLevel: string; cacheMb: number }

  options(program.command('serve').description('serve the HTTP API from the store')).action(async (o: Flags) => {
    await serve({ db: program.opts<{ db: string }>().db, ...o })
  })

  options(program.command('start').description('npm start: build the demo store on first run, then serve')).action(async (o: Flags) => {
    const db = program.opts<{ db: string }>().db
    if (!existsSync(db)) {
      process.stderr.write(`No store at ${db}: building the demo data set...\n${await buildDemo(db)}\n`)
      const store = SqliteStore.open(db)
      const key = generateKey()
      await store.createKey({ name: 'demo', hash: hashKey(key), ratePerMin: null, burst: null })
      await store.close()
      process.stderr.write(`\nDemo API key (shown once, keep it): ${key}\n` + `Try: curl -H "X-API-Key: ${key}" "http://${o.host}:${o.port}/v1/klines?symbol=600519.SH&period=1w&adjust=forward&count=5"\n\n`)
    } else {
      process.stderr.write(`Serving ${db}. Create an API key with: npx mdq keys create --name me${db === './data/mdq.db' ? '' : ` --db ${db}`}\n`)
    }
    await serve({ db, ...o })
  })
}
