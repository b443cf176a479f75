/** @module A pushed quote read back later (GET /v1/quotes): whether it is still today's, and its session at that time. */
import type { Market } from './market.js'
import type { SessionStatus } from './quote.js'
import { isoWeekday } from './time-zone.js'

/** The market's session `ms` falls in (exchange-local), -1 outside them and on weekends. */
function sessionIndex(market: Market, ms: number): number {
  if (isoWeekday(market.zone.localDay(ms)) >= 5) return -1
  const minute = market.zone.localMinute(ms)
  return market.sessions.findIndex((s) => minute >= s.open && minute < s.close)
}

/** Whether a quote stamped `quoteMs` is of the exchange's local day of `nowMs`. */
export function isTodays(market: Market, quoteMs: number, nowMs: number): boolean {
  return market.zone.localDay(quoteMs) === market.zone.localDay(nowMs)
}

/**
 * The session of a quote stamped `quoteMs`, seen at `nowMs`: `regular` only while the session it was
 * stamped in is still running (same day, same session; a feed's clock a little ahead of ours is no
 * matter), else `closed`.
 */
export function liveSession(market: Market, quoteMs: number, nowMs: number): SessionStatus {
  const now = sessionIndex(market, nowMs)
  return now >= 0 && isTodays(market, quoteMs, nowMs) && sessionIndex(market, quoteMs) === now ? 'regular' : 'closed'
}
