/**
 * @module `mdq replay`: stored 1m bars of chosen symbols and days played back as quote snapshots
 * (several a minute) at N times real speed, pushed into a running mdq's ingest listener, or served
 * as a stand-in for TickFlow's live stream (`--serve-stream`) for a relay to take.
 */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { performance } from 'node:perf_hooks'
import { MdqError } from '../domain/errors.js'
import { parseSymbol } from '../domain/market.js'
import { civilFromDays, daysFromCivil } from '../domain/time-zone.js'
import { pushQuotes } from '../replay/ingest-client.js'
import { paced } from '../replay/pacer.js'
import { planReplay } from '../replay/replay-plan.js'
import { startStreamServer } from '../replay/stream-server.js'
import { withStores } from '../store/backends.js'
import { storeFlags } from './store-flags.js'

interface ReplayFlags {
  symbols: string[]
  from?: number
  to?: number
  days: number
  onto?: number | 'today'
  speed: number
  perMinute: number
  batch: number
  ingest?: string
  key?: string
  serveStream?: number
  streamHost: string
}

function localDay(value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!m) throw new InvalidArgumentError('must be a date YYYY-MM-DD')
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const day = daysFromCivil(y, mo, d)
  const back = civilFromDays(day)
  if (back.year !== y || back.month !== mo || back.day !== d)
    throw new InvalidArgumentError(`${value} is not a calendar date`)
  return day
}

const positive = (what: string) => (value: string) => {
  const n = value === 'max' ? Infinity : Number(value)
  if (!(n > 0)) throw new InvalidArgumentError(`must be ${what}`)
  return n
}
const whole = (value: string) => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number >= 1')
  return n
}
const symbolList = (value: string) => {
  const named = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (named.length === 0) throw new InvalidArgumentError('must name at least one symbol')
  return named.map((s) => {
    try {
      return parseSymbol(s).symbol
    } catch (err) {
      throw new InvalidArgumentError(err instanceof MdqError ? err.message : String(err))
    }
  })
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description(
      'play stored 1m bars back as live quote snapshots: into a running mdq (--ingest) or as a stand-in TickFlow stream (--serve-stream)',
    )
    .requiredOption('--symbols <list>', 'comma-separated symbols whose 1m bars to replay', symbolList)
    .option('--from <date>', 'first local day to replay (YYYY-MM-DD)', localDay)
    .option('--to <date>', 'last local day to replay (YYYY-MM-DD)', localDay)
    .option('--days <n>', 'without --from/--to: the latest N days with 1m bars', whole, 1)
    .option(
      '--onto <date>',
      "stamp the first replayed day as this day (YYYY-MM-DD), the next ones as the weekdays after it; 'today': the last one as today in each symbol's zone (the weekday before, on a weekend), the ones before it as the weekdays before",
      (v: string) => (v === 'today' ? 'today' : localDay(v)),
    )
    .option(
      '--speed <n>',
      "times real speed ('max': as fast as the listener takes them)",
      positive('a positive number or max'),
      1,
    )
    .option('--per-minute <n>', 'snapshots per minute bar, at least (A-share level-1: 3)', whole, 3)
    .option('--batch <n>', 'snapshots per push at most', whole, 500)
    .option('--ingest <url>', 'push into this ingest listener (mdq serve --ingest-port), e.g. http://127.0.0.1:8081')
    .addOption(new Option('--key <key>', 'an API key of scope ingest for --ingest').env('MDQ_INGEST_KEY'))
    .option(
      '--serve-stream <port>',
      "serve the snapshots as TickFlow's /v1/ws/stream on this port (0: any)",
      (v: string) => {
        const n = Number(v)
        if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number 0..65535')
        return n
      },
    )
    .option('--stream-host <host>', 'address for --serve-stream', '127.0.0.1')
    .action(async (o: ReplayFlags) => {
      if ((o.ingest === undefined) === (o.serveStream === undefined))
        throw new MdqError(
          'BAD_PARAM',
          'give one of --ingest URL (with --key or MDQ_INGEST_KEY) or --serve-stream PORT',
        )
      if (o.ingest !== undefined && !o.key)
        throw new MdqError('BAD_PARAM', '--ingest needs an API key of scope ingest: --key KEY or MDQ_INGEST_KEY')
      const onto = o.onto === 'today' ? { endingOn: Date.now() } : { ontoDay: o.onto }
      const snapshots = await withStores({ ...storeFlags(program), create: false }, ({ market }) =>
        planReplay(market, {
          symbols: o.symbols,
          fromDay: o.from,
          toDay: o.to,
          latestDays: o.days,
          ...onto,
          perMinute: o.perMinute,
        }),
      )
      const log = (line: string) => process.stderr.write(`${line}\n`)
      log(
        `replaying ${snapshots.length.toLocaleString('en-US')} snapshots of ${o.symbols.length} symbol(s) at ${o.speed}x`,
      )
      const t0 = performance.now()
      if (o.ingest !== undefined) {
        const base = o.ingest.replace(/\/+$/, '')
        const total = { accepted: 0, stale: 0, duplicate: 0 }
        for await (const batch of paced(snapshots, { speed: o.speed, batch: o.batch })) {
          const c = await pushQuotes(base, o.key!, batch, (failure, waitMs) =>
            log(`push failed (${failure}); sending it again in ${waitMs} ms`),
          )
          total.accepted += c.accepted
          total.stale += c.stale
          total.duplicate += c.duplicate
        }
        log(
          `pushed ${snapshots.length.toLocaleString('en-US')} snapshots in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${total.accepted} accepted, ${total.stale} stale, ${total.duplicate} repeated`,
        )
        return
      }
      const stream = await startStreamServer(o.streamHost, o.serveStream!)
      log(`stream on ws://${o.streamHost}:${stream.port}/v1/ws/stream (waiting for a subscriber)`)
      const stop = async () => {
        await stream.close()
        process.exit(0)
      }
      process.on('SIGINT', () => void stop())
      process.on('SIGTERM', () => void stop())
      await stream.subscribed
      for await (const batch of paced(snapshots, { speed: o.speed, batch: o.batch })) stream.send(batch)
      log(`replay finished: ${snapshots.length.toLocaleString('en-US')} snapshots sent; serving until stopped`)
    })
}
