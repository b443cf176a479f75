/**
 * @module Minute bars built from quote snapshots (TickFlow's `Quote`, day figures cumulative): which
 * minute a snapshot's trades belong to, session by session, and the bars they make. Pure: the state
 * goes in and comes out.
 */
import type { BarRow } from './bars.js'
import { noonOffsetMs } from './buckets.js'
import { exactDifference } from './decimal.js'
import { dayCloseMinute } from './early-close.js'
import type { Market } from './market.js'
import { DAY_MS, MINUTE_MS } from './time-zone.js'

/** One pushed quote, checked (pushed-rows.ts): prices positive once the day has traded. */
export interface QuoteSnapshot {
  /** Canonical. */
  readonly symbol: string
  readonly timestamp: number
  readonly lastPrice: number
  /** The day's open, high and low (0 or anything before the day's first trade). */
  readonly open: number
  readonly high: number
  readonly low: number
  readonly prevClose: number
  /** Cumulative for the trading day. */
  readonly volume: number
  readonly amount: number
}

/** The latest minute bar of a symbol's day, as far as its snapshots have made it. */
export interface FormingBar {
  readonly start: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
  readonly amount: number
  /** The day's cumulative figures before the bar's first trade: what its next snapshots are measured from. */
  readonly baseVolume: number
  readonly baseAmount: number
  /** A later snapshot showed its minute over. */
  readonly closed: boolean
}

/** What building a symbol's bars needs to remember; a store keeps it beside the bars, so a restart continues. */
export interface SymbolState {
  /** The latest accepted snapshot. */
  readonly last: QuoteSnapshot
  /** The latest minute bar of `last`'s day, if that day has one. */
  readonly bar?: FormingBar
}

/** `stale`: older than the symbol's latest (or inconsistent with it); `duplicate`: the latest again. */
export type SnapshotOutcome = 'accepted' | 'stale' | 'duplicate'

export interface SnapshotResult {
  readonly outcome: SnapshotOutcome
  /** The state after the snapshot (the same state when it was not accepted). */
  readonly state: SymbolState | undefined
  /** The minute bar the snapshot opened or changed (prev_close NaN: filled on read, as for imported bars). */
  readonly minute?: BarRow
  /** The bar a later minute has shown complete. */
  readonly closed?: BarRow
  /** The day's bar from the snapshot's day figures, when the day has traded. */
  readonly day?: BarRow
}

/**
 * The start (UTC ms) of the minute bar a snapshot stamped `ts` adds its trades to, or undefined when
 * they are in no bar. Trades in a session go to their minute; the opening auction's (before the first
 * open, within `openAuctionMinutes`) to the first minute; a print after a session's close (the lunch
 * break's 11:30 print, the closing auction, a half day's early close) to that session's last minute,
 * until the next session opens or, after the day's close, for `closeAuctionMinutes`.
 */
export function barMinuteOf(ts: number, market: Market): number | undefined {
  const zone = market.zone
  const day = zone.localDay(ts)
  // As the bucket starts do: the day's offset taken at local noon (sessions never straddle a DST switch).
  const offset = noonOffsetMs(zone, day)
  const at = (minute: number) => day * DAY_MS + minute * MINUTE_MS - offset
  const wall = (ts + offset - day * DAY_MS) / MINUTE_MS
  const close = dayCloseMinute(market, day)
  const sessions = market.sessions
  if (wall < sessions[0].open)
    return wall >= sessions[0].open - market.openAuctionMinutes ? at(sessions[0].open) : undefined
  for (let i = 0; i < sessions.length && sessions[i].open < close; i++) {
    const end = Math.min(sessions[i].close, close)
    if (wall < end) return at(Math.floor(wall))
    const next = sessions[i + 1]
    if (next !== undefined && next.open < close && wall < next.open) return at(end - 1)
  }
  return wall < close + market.closeAuctionMinutes ? at(close - 1) : undefined
}

/** The first minute bar start of a local day. */
function firstMinuteOf(day: number, market: Market): number {
  return day * DAY_MS + market.sessions[0].open * MINUTE_MS - noonOffsetMs(market.zone, day)
}

const sameSnapshot = (a: QuoteSnapshot, b: QuoteSnapshot) =>
  a.lastPrice === b.lastPrice &&
  a.volume === b.volume &&
  a.amount === b.amount &&
  a.open === b.open &&
  a.high === b.high &&
  a.low === b.low &&
  Object.is(a.prevClose, b.prevClose)

export const rowOfBar = (b: FormingBar): BarRow => ({
  timestamp: b.start,
  open: b.open,
  high: b.high,
  low: b.low,
  close: b.close,
  volume: b.volume,
  amount: b.amount,
  prevClose: NaN,
})

/** The day's bar from a snapshot's day figures: stamped at local midnight, as stored daily bars are. */
function dayBarOf(q: QuoteSnapshot, market: Market, day: number): BarRow {
  return {
    timestamp: market.zone.midnightUtc(day),
    open: q.open,
    high: q.high,
    low: q.low,
    close: q.lastPrice,
    volume: q.volume,
    amount: q.amount,
    prevClose: q.prevClose,
  }
}

/**
 * Applies one snapshot to a symbol's state. Volume and amount are differences of the day's
 * cumulative figures (exact decimals), so the trades between two snapshots go to the minute of the
 * later one. A new high or low of the day since the previous snapshot was traded in that interval,
 * so it is the bar's high or low even when no snapshot showed it as the last price. The day's first
 * trades (the first snapshot that has any) are all that bar's, so its open, high and low are the
 * day's, whether untraded snapshots (an auction's) came before or not. The first snapshot of a day
 * opens a bar only in the day's first minute (or its opening auction); seen later in the day, it only
 * sets where the next bar's trades are counted from.
 */
export function applySnapshot(state: SymbolState | undefined, q: QuoteSnapshot, market: Market): SnapshotResult {
  const prev = state?.last
  if (prev !== undefined && q.timestamp <= prev.timestamp)
    return { outcome: q.timestamp === prev.timestamp && sameSnapshot(q, prev) ? 'duplicate' : 'stale', state }
  const zone = market.zone
  const day = zone.localDay(q.timestamp)
  const sameDay = prev !== undefined && zone.localDay(prev.timestamp) === day
  // Cumulative figures never fall within a day: a snapshot that says so is out of order.
  if (sameDay && (q.volume < prev.volume || q.amount < prev.amount)) return { outcome: 'stale', state }
  const traded = sameDay ? q.volume > prev.volume : q.volume > 0
  const minute = barMinuteOf(q.timestamp, market)
  let bar = state?.bar
  let closed: BarRow | undefined
  const over =
    !sameDay || (minute !== undefined ? minute > (bar?.start ?? 0) : q.timestamp >= (bar?.start ?? 0) + MINUTE_MS)
  if (bar !== undefined && !bar.closed && over) {
    bar = { ...bar, closed: true }
    closed = rowOfBar(bar)
  }
  if (!sameDay) bar = undefined
  let changed = false
  if (minute !== undefined && traded) {
    // The day's first trades: the day's open, high and low are theirs (a traded snapshot's are > 0).
    const first = !sameDay || prev.volume === 0
    // A day's new extreme since the previous snapshot was traded since then.
    const high = first || q.high > prev.high ? Math.max(q.high, q.lastPrice) : q.lastPrice
    const low = first || (q.low < prev.low && q.low > 0) ? Math.min(q.low, q.lastPrice) : q.lastPrice
    if (bar !== undefined && bar.start === minute) {
      bar = {
        ...bar,
        high: Math.max(bar.high, high),
        low: Math.min(bar.low, low),
        close: q.lastPrice,
        volume: q.volume - bar.baseVolume,
        amount: exactDifference(q.amount, bar.baseAmount),
      }
      changed = true
    } else if (sameDay) {
      bar = {
        start: minute,
        open: first ? q.open : q.lastPrice,
        high,
        low,
        close: q.lastPrice,
        volume: q.volume - prev.volume,
        amount: exactDifference(q.amount, prev.amount),
        baseVolume: prev.volume,
        baseAmount: prev.amount,
        closed: false,
      }
      changed = true
    } else if (minute === firstMinuteOf(day, market)) {
      bar = {
        start: minute,
        open: q.open,
        high,
        low,
        close: q.lastPrice,
        volume: q.volume,
        amount: q.amount,
        baseVolume: 0,
        baseAmount: 0,
        closed: false,
      }
      changed = true
    }
  }
  return {
    outcome: 'accepted',
    state: { last: q, ...(bar !== undefined && { bar }) },
    ...(changed && bar !== undefined && { minute: rowOfBar(bar) }),
    ...(closed !== undefined && { closed }),
    ...(traded && { day: dayBarOf(q, market, day) }),
  }
}
