/**
 * @module A quote: derived from stored bars (contract "TickFlow's other stored-data routes"), or from
 * the latest snapshot pushed to the ingest listener. No clock read here: `now` is passed in.
 */
import { round4 } from './adjust.js'
import { barCount, type Bars } from './bars.js'
import { dayCloseMinute } from './early-close.js'
import type { Instrument } from './instrument.js'
import type { InstrumentKind, Market, Region } from './market.js'
import type { QuoteSnapshot } from './minute-bars.js'
import { isoWeekday } from './time-zone.js'

/** TickFlow's session states we can honestly tell from a quote's time and the clock. */
export type SessionStatus = 'regular' | 'closed'

export interface Quote {
  readonly symbol: string
  readonly region: Region
  /** Start of the latest stored bar of the day: its last 1m bar, else its daily bar. */
  readonly timestamp: number
  readonly lastPrice: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly volume: number
  readonly amount: number
  readonly prevClose: number
  readonly session: SessionStatus
  readonly kind: InstrumentKind
  readonly name: string | null
  /**
   * lastPrice - prevClose rounded to 4 decimals, the precision of every computed price on the wire:
   * the exact decimal difference of prices quoted in at most 4 decimals (every tick size), without
   * the float noise of the subtraction (4.52 - 4.44 is 0.07999999999999918 in doubles).
   */
  readonly changeAmount: number
  /** changeAmount / prevClose, a fraction (-0.006135 is -0.6135 %), to 6 decimals. */
  readonly changePct: number
  /** (high - low) / prevClose, to 6 decimals. */
  readonly amplitude: number
  /** A pushed quote's own `ext` members but its name (TickFlow's: turnover rate, ...), over the computed ones. */
  readonly pushedExt?: Readonly<Record<string, string | number | boolean | null>>
}

/** Which of the market's sessions `ms` falls in (exchange-local), -1 outside them, after a half day's early close and on weekends. */
function sessionIndex(market: Market, ms: number): number {
  const zone = market.zone
  const day = zone.localDay(ms)
  if (isoWeekday(day) >= 5) return -1
  const minute = zone.localMinute(ms)
  const close = dayCloseMinute(market, day)
  return market.sessions.findIndex((s) => minute >= s.open && minute < Math.min(s.close, close))
}

/**
 * The session of a quote stamped `quoteMs` (the start of its last bar), seen at `nowMs`: `regular`
 * only when the quote belongs to the session running now (the same session of the same local day,
 * not after now); a quote from an earlier session or day, or from a daily bar (stamped at midnight),
 * describes a market that is `closed` for it, whatever the exchange's clock says now.
 */
export function quoteSession(market: Market, quoteMs: number, nowMs: number): SessionStatus {
  const now = sessionIndex(market, nowMs)
  const zone = market.zone
  return now >= 0 &&
    quoteMs <= nowMs &&
    sessionIndex(market, quoteMs) === now &&
    zone.localDay(quoteMs) === zone.localDay(nowMs)
    ? 'regular'
    : 'closed'
}

/**
 * The quote of one trading day from its bars (raw prices, prev_close filled): `daily` holds that
 * day's daily bar or nothing, `minutes` its 1m bars or nothing; at least one is non-empty.
 * Day figures come from the daily bar, else are aggregated from the minutes; the last price is
 * the last minute's close when there are minutes, else the daily close.
 */
export function quoteOfDay(instrument: Instrument, market: Market, daily: Bars, minutes: Bars, nowMs: number): Quote {
  const m = barCount(minutes)
  const fromDaily = barCount(daily) > 0
  let open: number, high: number, low: number, volume: number, amount: number, prevClose: number
  if (fromDaily) {
    ;[open, high, low, volume, amount, prevClose] = [
      daily.open[0],
      daily.high[0],
      daily.low[0],
      daily.volume[0],
      daily.amount[0],
      daily.prevClose[0],
    ]
  } else {
    ;[open, high, low, volume, amount, prevClose] = [minutes.open[0], -Infinity, Infinity, 0, 0, minutes.prevClose[0]]
    for (let i = 0; i < m; i++) {
      if (minutes.high[i] > high) high = minutes.high[i]
      if (minutes.low[i] < low) low = minutes.low[i]
      volume += minutes.volume[i]
      amount += minutes.amount[i]
    }
    amount = Math.round(amount * 1e6) / 1e6 // a sum of decimals: drop float noise, as aggregated klines do
  }
  const timestamp = m > 0 ? minutes.timestamp[m - 1] : daily.timestamp[0]
  const lastPrice = m > 0 ? minutes.close[m - 1] : daily.close[0]
  const day = { timestamp, lastPrice, open, high, low, volume, amount, prevClose }
  return withChanges(instrument.symbol, market, instrument.name, day, quoteSession(market, timestamp, nowMs))
}

/** How far ahead of this server's clock a feed's may run and its quotes still count as of now. */
const FEED_CLOCK_AHEAD_MS = 5_000

/**
 * The quote of a pushed snapshot (its own time and day figures), seen at `nowMs`: `session` from the
 * snapshot's time; `name` from the instrument (`name`, what /v1/instruments answers), else from the
 * pushed `ext`, whose other members are kept. Every answer of a pushed quote (GET /v1/quotes, the
 * streams) is made here, so they name it alike.
 */
export function quoteOfSnapshot(
  s: QuoteSnapshot,
  market: Market,
  name: string | null,
  nowMs: number,
  pushedExt?: Quote['pushedExt'],
): Quote {
  const { name: pushedName, ...others } = pushedExt ?? {}
  const named = name ?? (typeof pushedName === 'string' ? pushedName : null)
  // A feed's clock a little ahead of ours still stamps the session running now.
  const seenMs = s.timestamp > nowMs && s.timestamp - nowMs <= FEED_CLOCK_AHEAD_MS ? s.timestamp : nowMs
  const quote = withChanges(s.symbol, market, named, s, quoteSession(market, s.timestamp, seenMs))
  return pushedExt ? { ...quote, pushedExt: others } : quote
}

type DayFigures = Pick<Quote, 'timestamp' | 'lastPrice' | 'open' | 'high' | 'low' | 'volume' | 'amount' | 'prevClose'>

function withChanges(
  symbol: string,
  market: Market,
  name: string | null,
  d: DayFigures,
  session: SessionStatus,
): Quote {
  const changeAmount = round4(d.lastPrice - d.prevClose)
  return {
    symbol,
    region: market.region,
    timestamp: d.timestamp,
    lastPrice: d.lastPrice,
    open: d.open,
    high: d.high,
    low: d.low,
    volume: d.volume,
    amount: d.amount,
    prevClose: d.prevClose,
    session,
    kind: market.kind,
    name,
    changeAmount,
    changePct: roundRatio(changeAmount / d.prevClose),
    amplitude: roundRatio(round4(d.high - d.low) / d.prevClose),
  }
}

/** Ratios (change_pct, amplitude) to 6 decimals: a ten-thousandth of a percent (-0.006135 is -0.6135 %). */
function roundRatio(x: number): number {
  const r = Math.round(x * 1e6) / 1e6
  return Number.isFinite(r) ? r : x
}
