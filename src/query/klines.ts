/** @module readKlines: the klines use case: select base bars, fill prev_close, adjust, aggregate, trim to count. */
import { adjustBars, isAdditive } from '../domain/adjust.js'
import { cutoffsOf } from '../domain/as-of.js'
import { aggregate } from '../domain/aggregate.js'
import { barCount, lowerBound, sliceBars, type Bars } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import { MARKETS, parseSymbol, type Market } from '../domain/market.js'
import { basePeriodOf, type Period, type StoredPeriod } from '../domain/period.js'
import { fillDailyPrevClose, fillMinutePrevClose } from '../domain/prev-close.js'
import { DAY_MS, HOUR_MS } from '../domain/time-zone.js'
import { isRollupPeriod, rollupsAdjustExactly } from '../domain/rollups.js'
import type { MarketStore } from '../store/market-store.js'
import { answerVersion } from './answer-version.js'
import { readRollupKlines } from './rollup-klines.js'
import { dayPrevCloses, type DailyPrevCloses } from './daily-prev-close.js'
import type { KlinesQuery } from './klines-query.js'
import { knownAsOf, type SymbolContexts } from './symbol-context.js'

/** Base bars per derived bar, a first guess for how many to read (then doubled until enough). */
const BASE_PER_BAR: Record<Period, number> = {
  '1m': 1,
  '5m': 5,
  '10m': 10,
  '15m': 15,
  '30m': 30,
  '60m': 60,
  '1d': 1,
  '1w': 5,
  '1M': 23,
  '1Q': 66,
  '1Y': 260,
}
/** The longest span of one derived bar: a bar stamped t holds base bars up to t + span. */
const SPAN_MS: Record<Period, number> = {
  '1m': 0,
  '5m': HOUR_MS,
  '10m': HOUR_MS,
  '15m': HOUR_MS,
  '30m': HOUR_MS,
  '60m': HOUR_MS,
  '1d': 0,
  '1w': 7 * DAY_MS,
  '1M': 31 * DAY_MS,
  '1Q': 92 * DAY_MS,
  '1Y': 366 * DAY_MS,
}

/** Reads of one answer redone at most this often when imports commit in between (then a 503). */
const MAX_ATTEMPTS = 5

/**
 * Bars of `period` with startTime <= timestamp <= endTime, the latest `count` of them, ascending.
 * Prices are adjusted (not yet rounded); a derived bar always holds its whole bucket.
 * One answer is read from one data version: the several reads it takes (bars, the bar before
 * them, daily prev_close, events) are redone when a commit landed between them.
 */
export async function readKlines(store: MarketStore, contexts: SymbolContexts, q: KlinesQuery): Promise<Bars> {
  for (let attempt = 1; ; attempt++) {
    const version = answerVersion(await store.readVersions(), q.symbol)
    const bars = await readKlinesOnce(store, contexts, q)
    if (answerVersion(await store.readVersions(), q.symbol) === version) return bars
    if (attempt === MAX_ATTEMPTS)
      throw new MdqError(
        'STORE_UNAVAILABLE',
        `The data changed during each of ${MAX_ATTEMPTS} reads of this answer (imports or pushes committing back to back); retry shortly.`,
      )
  }
}

async function readKlinesOnce(store: MarketStore, contexts: SymbolContexts, q: KlinesQuery): Promise<Bars> {
  const { symbol, exchange } = parseSymbol(q.symbol)
  const known = await contexts.get(symbol)
  if (!known) throw new MdqError('UNKNOWN_SYMBOL', `Unknown symbol '${symbol}': no such instrument in this store.`)
  const market = MARKETS[exchange]
  // As of a moment: only the bars complete by then exist, and only the events up to it (symbol-context.ts).
  const cut = q.asOf ? cutoffsOf(q.asOf, market) : undefined
  const ctx = cut ? knownAsOf(known, cut.events) : known
  const base = basePeriodOf(q.period)
  const cutoff = cut ? (base === '1d' ? cut.daily : cut.minute) : Infinity
  const dailyCutoff = cut?.daily ?? Infinity
  const from = q.startTime ?? -8.64e15
  const to = Math.min(q.endTime ?? 8.64e15, cutoff)
  const derived = q.period !== base
  if (
    isRollupPeriod(q.period) &&
    store.capabilities.storedRollups &&
    // A rollup holds its whole bucket: a cutoff inside a session would cut one.
    (cut === undefined || cut.wholeDays) &&
    rollupsAdjustExactly(ctx.events, market.zone, q.adjust)
  ) {
    const fill = (raw: Bars, before?: { timestamp: number; close: number }) =>
      fillPrevClose(store, symbol, '1m', raw, ctx.events, market, before, ctx.dailyPrevCloses, dailyCutoff)
    const fromRollups = await readRollupKlines(
      store,
      symbol,
      q.period,
      market,
      { events: ctx.events, gaps: ctx.gaps, fill },
      { ...q, endTime: to },
    )
    if (fromRollups) return fromRollups
  }

  let limit = derived ? (q.count + 1) * BASE_PER_BAR[q.period] + 64 : q.count
  let bars: Bars
  for (;;) {
    // One bar more than needed: when the range holds it, it is the bar before (for prev_close), read
    // from the chunk already being decoded instead of by a second read.
    const read = await store.readBars({
      symbol,
      period: base,
      fromMs: from,
      // A derived bar holds base bars after its stamp, never past the cutoff.
      toMs: derived ? Math.min(to + SPAN_MS[q.period], cutoff) : to,
      limit: limit + 1,
    })
    const extra = barCount(read) > limit
    const raw = extra ? sliceBars(read, 1, barCount(read)) : read
    const before = extra ? { timestamp: read.timestamp[0], close: read.close[0] } : undefined
    const filled = await fillPrevClose(
      store,
      symbol,
      base,
      raw,
      ctx.events,
      market,
      before,
      ctx.dailyPrevCloses,
      dailyCutoff,
    )
    const adjusted = adjustBars(
      filled,
      ctx.events,
      q.adjust,
      isAdditive(q.adjust) ? await ctx.gaps() : undefined,
      filled,
    )
    bars = aggregate(adjusted, q.period, market)
    // Enough when the store had no more, or when one more bucket than asked shows the earliest is whole.
    const inRange = lowerBound(bars.timestamp, to + 1)
    if (!derived || barCount(raw) < limit || inRange > q.count) break
    limit *= 2
  }
  // Selection is by each bar's own stamp: a bucket begun before start_time (and so only partly read) is out.
  const end = lowerBound(bars.timestamp, to + 1)
  return sliceBars(bars, Math.max(lowerBound(bars.timestamp, from, 0, end), end - q.count), end)
}

/**
 * Raw prev_close where none was imported (domain/prev-close.ts), looking one bar back in the store;
 * a minute bar takes its day's daily prev_close only from a daily bar stamped by `dailyCutoff`.
 */
async function fillPrevClose(
  store: MarketStore,
  symbol: string,
  base: StoredPeriod,
  raw: Bars,
  events: readonly ExFactorEvent[],
  market: Market,
  known?: { timestamp: number; close: number },
  daily?: () => Promise<DailyPrevCloses | undefined>,
  dailyCutoff = Infinity,
): Promise<Bars> {
  const n = barCount(raw)
  if (n === 0) return raw
  let missing = false
  for (let i = 0; i < n && !missing; i++) missing = Number.isNaN(raw.prevClose[i])
  if (!missing) return raw
  // The bar before is only ever used for bar 0's own prev_close (domain/prev-close.ts); it is read
  // beside the daily prev_closes (a store that sends reads together sends both as one).
  const prior =
    !known && Number.isNaN(raw.prevClose[0])
      ? store.readBars({ symbol, period: base, toMs: raw.timestamp[0] - 1, limit: 1 })
      : undefined
  const before = async () => {
    const bar = await prior
    return bar && barCount(bar) ? { timestamp: bar.timestamp[0], close: bar.close[0] } : known
  }
  // The bars were just read for this answer (adjustBars then adjusts them in place too).
  if (base === '1d') return fillDailyPrevClose(raw, events, await before(), true)
  // Minute bars: a day's first bar takes that day's daily prev_close when there is a daily bar.
  const zone = market.zone
  // The days' bars and one more before them in one read (the window's days are at most `days` bars):
  // a bar before the first day is there only as the bar before, so its own prev_close is never used;
  // fewer than `days + 1` bars means there is no bar before them to read.
  const firstDay = zone.localDay(raw.timestamp[0])
  const days = zone.localDay(raw.timestamp[n - 1]) - firstDay + 1
  const lastDaily = Math.min(raw.timestamp[n - 1], dailyCutoff)
  const dayPrevClose = async (): Promise<Map<number, number>> => {
    const whole = await daily?.()
    if (whole) return dayPrevCloses(whole, zone, lastDaily, days + 1)
    const dailyBars = await store.readBars({ symbol, period: '1d', toMs: lastDaily, limit: days + 1 })
    const closes = new Map<number, number>()
    if (barCount(dailyBars)) {
      const dailyFilled = fillDailyPrevClose(dailyBars, events, undefined, true)
      for (let i = 0; i < barCount(dailyFilled); i++)
        closes.set(zone.localDay(dailyFilled.timestamp[i]), dailyFilled.prevClose[i])
    }
    return closes
  }
  const [bar, closes] = await Promise.all([before(), dayPrevClose()])
  return fillMinutePrevClose(raw, events, zone, closes, bar)
}
