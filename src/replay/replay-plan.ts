/** @module What `mdq replay` sends: stored 1m bars of chosen symbols and days as the quote snapshots a live feed would have sent, by time. */
import { barCount, lowerBound, sliceBars } from '../domain/bars.js'
import { noonOffsetMs } from '../domain/buckets.js'
import { MdqError } from '../domain/errors.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { QuoteSnapshot } from '../domain/minute-bars.js'
import { snapshotsOfDay } from '../domain/quote-snapshots.js'
import { DAY_MS, isoWeekday } from '../domain/time-zone.js'
import type { MarketStore } from '../store/market-store.js'

export interface ReplayPlanOptions {
  /** Canonical symbols. */
  readonly symbols: readonly string[]
  /** Local days (days since 1970-01-01) to replay, inclusive; absent: the `latestDays` latest days with 1m bars. */
  readonly fromDay?: number
  readonly toDay?: number
  readonly latestDays: number
  /** Stamp the first replayed day as this local day (and the next ones as the weekdays after it); absent: as they were. */
  readonly ontoDay?: number
  /**
   * Instead, a clock reading (epoch ms): stamp the replayed days as the weekdays up to that instant's
   * local day in each symbol's own zone, the last one on it (or on the weekday before a weekend), so
   * that none lands on a day still to come there.
   */
  readonly endingOn?: number
  readonly perMinute: number
}

/** The weekdays from `first` on, `n` of them. */
function weekdaysFrom(first: number, n: number): number[] {
  const out: number[] = []
  for (let d = first; out.length < n; d++) if (isoWeekday(d) < 5) out.push(d)
  return out
}

/** The weekdays up to `last` (on it if it is one), `n` of them, oldest first. */
function weekdaysUpTo(last: number, n: number): number[] {
  const out: number[] = []
  for (let d = last; out.length < n; d--) if (isoWeekday(d) < 5) out.unshift(d)
  return out
}

/**
 * Every symbol's snapshots (domain/quote-snapshots.ts), merged by time. A day's prev_close is its
 * daily bar's where there is one, else the last 1m close before it, else its first open.
 */
export async function planReplay(store: MarketStore, o: ReplayPlanOptions): Promise<QuoteSnapshot[]> {
  const out: QuoteSnapshot[] = []
  for (const symbol of o.symbols) {
    const market = MARKETS[parseSymbol(symbol).exchange]
    const zone = market.zone
    const bounded = o.fromDay !== undefined || o.toDay !== undefined
    const minutes = await store.readBars({
      symbol,
      period: '1m',
      fromMs: o.fromDay === undefined ? undefined : zone.midnightUtc(o.fromDay),
      toMs: o.toDay === undefined ? undefined : zone.midnightUtc(o.toDay + 1) - 1,
      limit: bounded ? Number.MAX_SAFE_INTEGER : o.latestDays * 400,
    })
    const n = barCount(minutes)
    if (n === 0) throw new MdqError('BAD_PARAM', `${symbol} has no 1m bars in the days asked for.`)
    let days = [...new Set(Array.from(minutes.timestamp, (t) => zone.localDay(t)))]
    if (!bounded) days = days.slice(-o.latestDays)
    const targets =
      o.ontoDay !== undefined
        ? weekdaysFrom(o.ontoDay, days.length)
        : o.endingOn !== undefined
          ? weekdaysUpTo(zone.localDay(o.endingOn), days.length)
          : days
    for (const [k, day] of days.entries()) {
      const lo = lowerBound(minutes.timestamp, zone.midnightUtc(day))
      const hi = lowerBound(minutes.timestamp, zone.midnightUtc(day + 1))
      const bars = sliceBars(minutes, lo, hi)
      const daily = await store.readBars({
        symbol,
        period: '1d',
        fromMs: zone.midnightUtc(day),
        toMs: zone.midnightUtc(day),
        limit: 1,
      })
      const before =
        lo > 0
          ? minutes.close[lo - 1]
          : (await store.readBars({ symbol, period: '1m', toMs: minutes.timestamp[lo] - 1, limit: 1 })).close[0]
      const prevClose = barCount(daily) && daily.prevClose[0] > 0 ? daily.prevClose[0] : (before ?? bars.open[0])
      // Restamped by local wall time (the day's offset as the builder takes it), so DST moves nothing.
      const shift = (t: number) =>
        t + noonOffsetMs(zone, day) - day * DAY_MS + targets[k] * DAY_MS - noonOffsetMs(zone, targets[k])
      for (const q of snapshotsOfDay(symbol, bars, market, prevClose, o.perMinute))
        out.push(targets[k] === day ? q : { ...q, timestamp: shift(q.timestamp) })
    }
  }
  return out.sort((a, b) => a.timestamp - b.timestamp)
}
