/**
 * @module The fan-out bench's feed: every symbol one quote snapshot per cycle (3 s, the A-share
 * level-1 cadence), sent as a push every `pushMs` that carries the next slice of the symbols. A
 * snapshot's timestamp names its push (`t0 + push * pushMs`), so a client that receives it knows
 * which push it came from, and its cycle is its sequence number within the symbol.
 */
import { MARKETS } from '../src/domain/market.js'

export const CYCLE_MS = 3000

export interface FanoutFeed {
  readonly symbols: readonly string[]
  readonly pushMs: number
  /** Pushes per cycle, each carrying `batch` symbols (the last one the rest). */
  readonly pushesPerCycle: number
  readonly batch: number
  readonly cycles: number
  /** The first snapshot's time: the day's open (epoch ms). */
  readonly t0: number
}

/** A feed over `seconds` of local day `day` from its open (CN sessions), pushing every `pushMs`. */
export function fanoutFeed(symbols: readonly string[], day: number, seconds: number, pushMs: number): FanoutFeed {
  if (CYCLE_MS % pushMs !== 0) throw new Error(`the push interval must divide ${CYCLE_MS} ms`)
  const pushesPerCycle = CYCLE_MS / pushMs
  const open = MARKETS.SH.zone.midnightUtc(day) + MARKETS.SH.sessions[0].open * 60_000
  return {
    symbols,
    pushMs,
    pushesPerCycle,
    batch: Math.ceil(symbols.length / pushesPerCycle),
    cycles: Math.max(1, Math.floor((seconds * 1000) / CYCLE_MS)),
    t0: open,
  }
}

export const pushCount = (feed: FanoutFeed): number => feed.cycles * feed.pushesPerCycle

/** Which push a received snapshot came from. */
export const pushOf = (feed: FanoutFeed, timestamp: number): number => Math.round((timestamp - feed.t0) / feed.pushMs)

/** Which cycle (the symbol's sequence number) a push belongs to. */
export const cycleOf = (feed: FanoutFeed, push: number): number => Math.floor(push / feed.pushesPerCycle)

/** The symbols (indexes into `feed.symbols`) a push carries. */
export function pushSymbols(feed: FanoutFeed, push: number): { from: number; to: number } {
  const slot = push % feed.pushesPerCycle
  return { from: slot * feed.batch, to: Math.min(feed.symbols.length, (slot + 1) * feed.batch) }
}

/**
 * Push `push`'s body: TickFlow Quote rows whose prices stay inside a fixed day range and whose
 * cumulative volume and amount grow each cycle, so the ingest accepts every snapshot as new.
 */
export function pushBody(feed: FanoutFeed, push: number): string {
  const cycle = cycleOf(feed, push)
  const timestamp = feed.t0 + push * feed.pushMs
  const { from, to } = pushSymbols(feed, push)
  const rows: string[] = []
  for (let k = from; k < to; k++) {
    const cents = 500 + ((k * 7919) % 5000)
    const last = (cents + ((cycle + k) % 5) - 2) / 100
    const volume = 100 * (cycle + 1)
    rows.push(
      `{"symbol":"${feed.symbols[k]}","timestamp":${timestamp},"last_price":${last},"open":${cents / 100},"high":${(cents + 2) / 100},"low":${(cents - 2) / 100},"prev_close":${cents / 100},"volume":${volume},"amount":${(volume * cents) / 100},"region":"CN"}`,
    )
  }
  return `[${rows.join(',')}]`
}
