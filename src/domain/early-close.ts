/** @module Half trading days: the exchanges' early closes, by their published rules (no holiday calendar). */
import type { Market } from './market.js'
import { DAY_MS, civilFromDays, daysFromCivil, isoWeekday } from './time-zone.js'

const US_EARLY_CLOSE = 13 * 60
const HK_EARLY_CLOSE = 12 * 60

/**
 * The minute (since local midnight) the last session of local day `day` closes: the regular close,
 * or an early close where the exchange's rule makes the day a half day:
 * - US (NYSE/Nasdaq): 13:00 on July 3 and December 24 when they fall Monday to Thursday (on a Friday
 *   they are the observed holiday), and on the day after Thanksgiving (the fourth Thursday of November).
 * - HK: 12:00 (no afternoon session) on December 24, December 31 and Lunar New Year's Eve, on weekdays.
 * - CN: none.
 */
export function dayCloseMinute(market: Market, day: number): number {
  const regular = market.sessions[market.sessions.length - 1].close
  if (market.region === 'US' && usHalfDay(day)) return US_EARLY_CLOSE
  if (market.region === 'HK' && hkHalfDay(day)) return HK_EARLY_CLOSE
  return regular
}

function usHalfDay(day: number): boolean {
  const weekday = isoWeekday(day)
  const { year, month, day: dom } = civilFromDays(day)
  if ((month === 7 && dom === 3) || (month === 12 && dom === 24)) return weekday <= 3
  if (month !== 11) return false
  const firstThursday = 1 + ((3 - isoWeekday(daysFromCivil(year, 11, 1)) + 7) % 7)
  return dom === firstThursday + 22
}

function hkHalfDay(day: number): boolean {
  if (isoWeekday(day) >= 5) return false
  const { month, day: dom } = civilFromDays(day)
  if (month === 12 && (dom === 24 || dom === 31)) return true
  return lunarNewYear(day + 1)
}

const lunarFormat = new Intl.DateTimeFormat('en-u-ca-chinese', { timeZone: 'UTC', month: 'numeric', day: 'numeric' })
/** Lunar New Year's day number per Gregorian year: Intl's Chinese calendar costs about 0.2 ms a date. */
const lunarNewYears = new Map<number, number>()

/** Whether local day `day` is the first day of the first month of the Chinese calendar (always January 21 to February 20). */
function lunarNewYear(day: number): boolean {
  const { year } = civilFromDays(day)
  let first = lunarNewYears.get(year)
  if (first === undefined) {
    first = daysFromCivil(year, 1, 21)
    while (!isLunarFirst(first) && first < daysFromCivil(year, 2, 21)) first++
    lunarNewYears.set(year, first)
  }
  return day === first
}

function isLunarFirst(day: number): boolean {
  let month = ''
  let dom = ''
  for (const part of lunarFormat.formatToParts(day * DAY_MS)) {
    if (part.type === 'month') month = part.value
    else if (part.type === 'day') dom = part.value
  }
  return month === '1' && dom === '1'
}
