/**
 * @module `as_of`: an answer as it was known at a past moment. A date is the end of that day in the
 * exchange's own zone (a day's bars, ex-dates and announcements all count); epoch milliseconds are
 * that instant. A bar counts once it is complete (a 1m bar a minute after its stamp, a daily bar at
 * its session's close); dated things (ex-dates, announce dates, membership dates) from local midnight.
 */
import { MdqError } from './errors.js'
import type { Market } from './market.js'
import { MINUTE_MS, civilFromDays, daysFromCivil, formatCivil, type Zone } from './time-zone.js'

/** Plain data (it crosses to query workers): a local calendar day, or an instant. */
export type AsOf = { readonly day: number } | { readonly ms: number }

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const FIRST_YEAR = 1970
const LAST_YEAR = 2099
const MAX_MS = Date.UTC(LAST_YEAR + 1, 0, 1)
/** Fewer digits are not taken as epoch milliseconds: they would be 1970-1973, and are mostly epoch seconds or YYYYMMDD. */
const MIN_MS = 1e11

/** A `YYYY-MM-DD` parameter checked to be a calendar date of 1970-2099; a BAD_PARAM naming `param` otherwise. */
export function parseDateParam(text: string, param: string): string {
  const bad = (why: string) => new MdqError('BAD_PARAM', `Parameter '${param}' ${why}; give a date YYYY-MM-DD.`)
  const shown = text.length > 30 ? `${text.slice(0, 30)}...` : text
  if (/^\d{8}$/.test(text))
    throw bad(`'${text}' looks like YYYYMMDD: write it ${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}`)
  if (calendarDay(text) === undefined) throw bad(`'${shown}' is not a calendar date of ${FIRST_YEAR}-${LAST_YEAR}`)
  return text
}

/** The day number of a `YYYY-MM-DD` of 1970-2099, or undefined. */
function calendarDay(text: string): number | undefined {
  const m = DATE.exec(text)
  if (!m) return undefined
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const day = daysFromCivil(y, mo, d)
  const back = civilFromDays(day)
  return back.month === mo && back.day === d && y >= FIRST_YEAR && y <= LAST_YEAR ? day : undefined
}

/** Parses an `as_of` value; a BAD_PARAM naming `param` (and a hint for the usual mistakes) when it is neither form. */
export function parseAsOf(text: string, param = 'as_of'): AsOf {
  const bad = (why: string) =>
    new MdqError('BAD_PARAM', `Parameter '${param}' ${why}; give a date YYYY-MM-DD or epoch milliseconds.`)
  const shown = text.length > 30 ? `${text.slice(0, 30)}...` : text
  if (DATE.test(text)) {
    const day = calendarDay(text)
    if (day === undefined) throw bad(`'${shown}' is not a calendar date of ${FIRST_YEAR}-${LAST_YEAR}`)
    return { day }
  }
  if (!/^\d{1,16}$/.test(text)) throw bad(`'${shown}' is neither a date nor a whole number of milliseconds`)
  const ms = Number(text)
  if (text.length === 8)
    throw bad(`'${text}' looks like a date YYYYMMDD: write it ${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6)}`)
  if (ms < MIN_MS) {
    const seconds =
      ms * 1000 < MAX_MS ? ` (as epoch seconds it is ${new Date(ms * 1000).toISOString()}: multiply by 1000)` : ''
    throw bad(`${text} is too small for epoch milliseconds${seconds}`)
  }
  if (ms >= MAX_MS) throw bad(`${text} is after ${LAST_YEAR}`)
  return { ms }
}

/** The moment `a` stands for in a market of zone `zone`: an event (ex-date midnight) at or before it is known. */
export function asOfMs(a: AsOf, zone: Zone): number {
  return 'ms' in a ? a.ms : zone.midnightUtc(a.day + 1) - 1
}

/** The stamps known as of a moment in one market: a thing stamped at or before its cutoff counts. */
export interface Cutoffs {
  /** Ex-factor events (stamped at local midnight of the ex-date). */
  readonly events: number
  /** 1m bars: complete a minute after their stamp. */
  readonly minute: number
  /** Daily bars (stamped at local midnight): complete once the day's last session has closed. */
  readonly daily: number
  /** No session is cut: each day with a bar up to the cutoffs is complete (no bucket of a day is partial). */
  readonly wholeDays: boolean
}

export function cutoffsOf(a: AsOf, market: Market): Cutoffs {
  const zone = market.zone
  const ms = asOfMs(a, zone)
  const day = zone.localDay(ms)
  const civil = civilFromDays(day)
  const at = (minute: number) => zone.utcOf(civil.year, civil.month, civil.day, minute)
  const closed = ms >= at(market.sessions[market.sessions.length - 1].close)
  const minute = ms - MINUTE_MS
  return {
    events: ms,
    minute,
    daily: closed ? ms : zone.midnightUtc(day) - 1,
    wholeDays: closed || minute < at(market.sessions[0].open),
  }
}

/** The local day of `a` in zone `zone`, as `YYYY-MM-DD`: a dated thing (an announcement) counts when on or before it. */
export function asOfDate(a: AsOf, zone: Zone): string {
  return formatCivil(civilFromDays('ms' in a ? zone.localDay(a.ms) : a.day))
}
