/**
 * @module Quote snapshots made from minute bars, the way a live feed would have shown that day: the
 * inverse of minute-bars.ts, for `mdq replay` and for the proof that the builder rebuilds the bars.
 */
import { barCount, type Bars } from './bars.js'
import { noonOffsetMs } from './buckets.js'
import { exactExponent, unscale } from './decimal.js'
import { dayCloseMinute } from './early-close.js'
import type { Market } from './market.js'
import type { QuoteSnapshot } from './minute-bars.js'
import { DAY_MS, MINUTE_MS } from './time-zone.js'

/** How the day's prints are stamped around the sessions. */
const PRE_OPEN_QUIET_MINUTES = 10
const OPEN_AUCTION_PRINT_MINUTES = 5
const CLOSE_PRINT_MS = 2_000

/** The prices a bar's snapshots show, in order: open, the extreme away from the close first, close (repeats dropped). */
function pricePath(bars: Bars, i: number): number[] {
  const { open, high, low, close } = bars
  const path = close[i] >= open[i] ? [open[i], low[i], high[i], close[i]] : [open[i], high[i], low[i], close[i]]
  return path.filter((p, k) => k === 0 || p !== path[k - 1])
}

/**
 * Snapshots of one symbol's trading day from its 1m bars (ascending, one local day, inside the
 * sessions): first a quote before the open with nothing traded yet; then for every bar at least
 * `perMinute` snapshots inside its minute, showing its open, low/high and close as last prices, the
 * cumulative volume and amount rising with each (exact decimal sums), so the last one of the minute
 * holds the whole bar. Where the exchange has an opening auction, the day's first bar opens with the
 * auction's print before the session; a session's last bar closes with a print just after the
 * session's end (the lunch break's 11:30 print, the closing auction, a half day's early close).
 *
 * A bar whose volume is below the snapshots its prices need (one trade a price change) has its
 * middle prices dropped; a bar with no volume has no snapshot (no trade, no bar).
 */
export function snapshotsOfDay(
  symbol: string,
  bars: Bars,
  market: Market,
  prevClose: number,
  perMinute = 3,
  /** When the day's last session closes (minutes since local midnight): by default the exchange's rule for the day. */
  closeMinute?: number,
): QuoteSnapshot[] {
  const n = barCount(bars)
  if (n === 0) return []
  const zone = market.zone
  const day = zone.localDay(bars.timestamp[0])
  const offset = noonOffsetMs(zone, day)
  const at = (minute: number) => day * DAY_MS + minute * MINUTE_MS - offset
  const firstOpen = market.sessions[0].open
  const close = closeMinute ?? dayCloseMinute(market, day)
  const sessionEnds = new Set(
    market.sessions.filter((s) => s.open < close).map((s) => at(Math.min(s.close, close)) - MINUTE_MS),
  )
  // Cumulative amounts as integers at one exponent for the day: every partial sum an exact decimal.
  const scaled = new Float64Array(n)
  const e = exactExponent(bars.amount, 0, 9, 2 ** 51, scaled)
  const out: QuoteSnapshot[] = []
  let volume = 0
  let amountUnits = 0
  let dayOpen = 0
  let dayHigh = 0
  let dayLow = 0
  let lastPrice = prevClose
  const push = (timestamp: number) =>
    out.push({
      symbol,
      timestamp,
      lastPrice,
      open: dayOpen,
      high: dayHigh,
      low: dayLow,
      prevClose,
      volume,
      amount: e === undefined ? amountUnits : unscale(amountUnits, e),
    })
  push(at(firstOpen - (market.openAuctionMinutes > 0 ? PRE_OPEN_QUIET_MINUTES : 1)))
  for (let i = 0; i < n; i++) {
    const v = bars.volume[i]
    if (!(v > 0)) continue
    let path = pricePath(bars, i)
    if (path.length > v) path = v === 1 ? [bars.close[i]] : [path[0], bars.close[i]]
    const k = Math.min(v, Math.max(perMinute, path.length))
    const start = bars.timestamp[i]
    const units = e === undefined ? bars.amount[i] : scaled[i]
    const before = { volume, amountUnits }
    for (let j = 0; j < k; j++) {
      // The path's prices first, then the close repeated; each snapshot one part of the volume and amount.
      lastPrice = j < path.length - 1 ? path[j] : path[path.length - 1]
      if (dayOpen === 0) dayOpen = dayHigh = dayLow = lastPrice
      dayHigh = Math.max(dayHigh, lastPrice)
      dayLow = Math.min(dayLow, lastPrice)
      // Whole parts (exact integers, each step at least 1 since v >= k); the last one holds the rest.
      volume = before.volume + (j === k - 1 ? v : Math.floor(v / k) * (j + 1))
      const part = j === k - 1 ? units : e === undefined ? (units / k) * (j + 1) : Math.floor(units / k) * (j + 1)
      amountUnits = before.amountUnits + part
      let t = start + Math.floor(((j + 1) * MINUTE_MS) / (k + 1))
      if (i === 0 && j === 0 && start === at(firstOpen) && market.openAuctionMinutes > 0)
        t = at(firstOpen - OPEN_AUCTION_PRINT_MINUTES)
      if (j === k - 1 && sessionEnds.has(start)) t = start + MINUTE_MS + CLOSE_PRINT_MS
      push(t)
    }
  }
  return out
}
