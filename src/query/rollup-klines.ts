/** @module Derived minute klines from stored rollups: fill prev_close and adjust as for 1m bars, then stamp each with its bucket. */
import { adjustBars, isAdditive } from '../domain/adjust.js'
import { barCount, lowerBound, sliceBars, type Bars } from '../domain/bars.js'
import { bucketStarts } from '../domain/buckets.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import type { Market } from '../domain/market.js'
import type { RollupPeriod } from '../domain/rollups.js'
import { HOUR_MS } from '../domain/time-zone.js'
import type { MarketStore } from '../store/market-store.js'
import type { KlinesQuery } from './klines-query.js'

export interface RollupContext {
  readonly events: readonly ExFactorEvent[]
  readonly gaps: () => Promise<Float64Array>
  /**
   * Fills NaN prev_close exactly as for 1m bars; `before`: the 1m bar before the first (read from
   * the 1m bars when not given).
   */
  readonly fill: (raw: Bars, before?: { timestamp: number; close: number }) => Promise<Bars>
}

/**
 * The same bars readKlines would aggregate from 1m bars, from the rollups: a rollup is stamped with
 * its first 1m bar, so filling and adjusting it is filling and adjusting that bar, and the bucket's
 * high/low/close/sums were folded at import. Undefined when two rollups share a bucket (a bucket
 * across local days: only a zone's odd hours can make one), for the caller to aggregate instead.
 */
export async function readRollupKlines(
  store: MarketStore,
  symbol: string,
  period: RollupPeriod,
  market: Market,
  ctx: RollupContext,
  q: KlinesQuery,
): Promise<Bars | undefined> {
  const from = q.startTime ?? -8.64e15
  const to = q.endTime ?? 8.64e15
  // A bucket stamped <= to starts its first bar at most one bucket (<= 1 h) later.
  let limit = q.count + 64
  for (;;) {
    // One rollup more than needed: when the range holds it, its close is the close of the 1m bar
    // before the first (a bucket's close is its last bar's, on the same local day), read with the rest.
    const read = await store.readBars({ symbol, period, fromMs: from, toMs: to + HOUR_MS, limit: limit + 1 })
    const extra = barCount(read) > limit
    const raw = extra ? sliceBars(read, 1, barCount(read)) : read
    const filled = await ctx.fill(raw, extra ? { timestamp: read.timestamp[0], close: read.close[0] } : undefined)
    const adjusted = adjustBars(
      filled,
      ctx.events,
      q.adjust,
      isAdditive(q.adjust) ? await ctx.gaps() : undefined,
      filled,
    )
    const starts = bucketStarts(adjusted.timestamp, period, market)
    for (let i = 1; i < starts.length; i++) if (starts[i] === starts[i - 1]) return undefined
    const bars = { ...adjusted, timestamp: starts }
    const end = lowerBound(starts, to + 1)
    if (barCount(raw) < limit || end >= q.count)
      return sliceBars(bars, Math.max(lowerBound(starts, from, 0, end), end - q.count), end)
    limit *= 2
  }
}
