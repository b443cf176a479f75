/**
 * @module The live bench's feed: a day of 1m bars for every symbol of the full market, turned into
 * quote snapshots (domain/quote-snapshots.ts, three or more a minute) kept as columns, and handed out
 * minute by minute as a feed sends them: every symbol's snapshots of that minute, by time, in batches.
 */
import { barCount, type Bars } from '../src/domain/bars.js'
import { seededRandom } from '../src/demo/demo-data.js'
import { MARKETS, parseSymbol } from '../src/domain/market.js'
import { barMinuteOf } from '../src/domain/minute-bars.js'
import { snapshotsOfDay } from '../src/domain/quote-snapshots.js'
import { isoWeekday } from '../src/domain/time-zone.js'
import { walk } from './full-market-store.js'

/** One symbol's snapshots of the day as columns, and where each minute's begin. */
interface SymbolFeed {
  readonly symbol: string
  readonly ts: Float64Array
  readonly last: Float64Array
  readonly open: Float64Array
  readonly high: Float64Array
  readonly low: Float64Array
  readonly volume: Float64Array
  readonly amount: Float64Array
  readonly prevClose: number
  /** Snapshot index where minute m's begin, m = 0..minutes (the last one: the end). */
  readonly minuteStarts: Int32Array
}

export interface LiveDay {
  readonly day: number
  /** Bar starts of the day's minutes. */
  readonly minuteMs: readonly number[]
  readonly symbols: readonly string[]
  /** Per symbol, the day's 1m bars (the bars the snapshots make). */
  readonly bars: readonly Bars[]
  readonly feeds: readonly SymbolFeed[]
}

/** The first weekday after local day `after`. */
export function nextWeekday(after: number): number {
  let d = after + 1
  while (isoWeekday(d) >= 5) d++
  return d
}

/** The day's bars and snapshots of every symbol (CN symbols: one calendar). */
export function liveDay(symbols: readonly string[], day: number, minutes = 240): LiveDay {
  const market = MARKETS[parseSymbol(symbols[0]).exchange]
  const zone = market.zone
  const minuteMs: number[] = []
  for (const s of market.sessions)
    for (let m = s.open; m < s.close && minuteMs.length < minutes; m++)
      minuteMs.push(zone.midnightUtc(day) + m * 60_000)
  const index = new Map(minuteMs.map((t, i) => [t, i]))
  const bars: Bars[] = []
  const feeds: SymbolFeed[] = []
  for (const [k, symbol] of symbols.entries()) {
    const rnd = seededRandom(1_000_000 + k)
    const day1m = walk(minuteMs, rnd, 500 + Math.round(rnd() * 5000), 1e4, 0.004)
    bars.push(day1m)
    const prevClose = day1m.open[0]
    const quotes = snapshotsOfDay(symbol, day1m, market, prevClose, 3)
    const n = quotes.length
    const col = () => new Float64Array(n)
    const f = {
      symbol,
      ts: col(),
      last: col(),
      open: col(),
      high: col(),
      low: col(),
      volume: col(),
      amount: col(),
      prevClose,
      minuteStarts: new Int32Array(minuteMs.length + 1).fill(n),
    }
    for (let i = n - 1; i >= 0; i--) {
      const q = quotes[i]
      f.ts[i] = q.timestamp
      f.last[i] = q.lastPrice
      f.open[i] = q.open
      f.high[i] = q.high
      f.low[i] = q.low
      f.volume[i] = q.volume
      f.amount[i] = q.amount
      const m = index.get(barMinuteOf(q.timestamp, market) ?? NaN)
      if (m !== undefined) f.minuteStarts[m] = i
    }
    // A minute without snapshots of its own starts where the next one does.
    for (let m = minuteMs.length - 1; m >= 0; m--)
      f.minuteStarts[m] = Math.min(f.minuteStarts[m], f.minuteStarts[m + 1])
    f.minuteStarts[0] = 0
    feeds.push(f)
  }
  return { day, minuteMs, symbols, bars, feeds }
}

/** A snapshot as TickFlow's Quote (the pushed wire shape). */
function quoteJson(f: SymbolFeed, i: number): string {
  return `{"symbol":"${f.symbol}","timestamp":${f.ts[i]},"last_price":${f.last[i]},"open":${f.open[i]},"high":${f.high[i]},"low":${f.low[i]},"prev_close":${f.prevClose},"volume":${f.volume[i]},"amount":${f.amount[i]},"region":"CN"}`
}

/** Minute m's snapshots of every symbol (those `keep` keeps), by time, as JSON array bodies of at most `batch` rows. */
export function minuteBodies(
  live: LiveDay,
  m: number,
  batch: number,
  keep: (symbol: string) => boolean = () => true,
): { bodies: string[]; snapshots: number } {
  const picks: [number, number][] = []
  for (const [k, f] of live.feeds.entries())
    if (keep(f.symbol)) for (let i = f.minuteStarts[m]; i < f.minuteStarts[m + 1]; i++) picks.push([k, i])
  picks.sort((a, b) => live.feeds[a[0]].ts[a[1]] - live.feeds[b[0]].ts[b[1]])
  const bodies: string[] = []
  for (let at = 0; at < picks.length; at += batch)
    bodies.push(
      `[${picks
        .slice(at, at + batch)
        .map(([k, i]) => quoteJson(live.feeds[k], i))
        .join(',')}]`,
    )
  return { bodies, snapshots: picks.length }
}

export const barsOfDay = (live: LiveDay): number => live.bars.reduce((n, b) => n + barCount(b), 0)
