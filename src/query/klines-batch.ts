/** @module Batches of klines: /v1/klines/batch and the intraday routes, each symbol through readKlines. */
import { cutoffsOf, type AsOf } from '../domain/as-of.js'
import { allocBars, barCount, type Bars } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { MinutePeriod } from '../domain/period.js'
import type { MarketStore } from '../store/market-store.js'
import { readKlines } from './klines.js'
import type { KlinesQuery } from './klines-query.js'
import { canonicalSymbols } from './reference.js'
import type { SymbolContexts } from './symbol-context.js'

/** A request list split into the symbols the store knows and those it does not, each canonical, in order, duplicates once. */
export interface SortedSymbols {
  readonly known: string[]
  readonly unknown: string[]
}

/** The symbols of a request list sorted into known and unknown; a malformed one throws. */
export async function knownSymbols(contexts: SymbolContexts, symbols: readonly string[]): Promise<SortedSymbols> {
  const canonical = canonicalSymbols(symbols, 'symbols')
  const found = await Promise.all(canonical.map((s) => contexts.get(s)))
  return {
    known: canonical.filter((_, i) => found[i] !== undefined),
    unknown: canonical.filter((_, i) => found[i] === undefined),
  }
}

/** Each symbol's bars, one symbol at a time (a batch answer is written out as it is produced). */
export async function* readKlinesBatch(
  store: MarketStore,
  contexts: SymbolContexts,
  symbols: readonly string[],
  q: Omit<KlinesQuery, 'symbol'>,
): AsyncGenerator<{ symbol: string; bars: Bars }> {
  for (const symbol of symbols) yield { symbol, bars: await readKlines(store, contexts, { ...q, symbol }) }
}

export interface IntradayQuery {
  readonly symbol: string
  readonly period: MinutePeriod
  /** The latest `count` bars of the day; absent = all. */
  readonly count?: number
  /** The latest trading day with 1m bars up to then, and its bars up to then. */
  readonly asOf?: AsOf
}

/** Enough for every bar of one trading day at 1m (US: 390). */
const ONE_DAY_OF_BARS = 10_000

/** The unadjusted bars of the symbol's latest trading day that has 1m bars in the store (none: empty). */
export async function readIntraday(store: MarketStore, contexts: SymbolContexts, q: IntradayQuery): Promise<Bars> {
  const { symbol, exchange } = parseSymbol(q.symbol)
  if (!(await contexts.get(symbol)))
    throw new MdqError('UNKNOWN_SYMBOL', `Unknown symbol '${symbol}': no such instrument in this store.`)
  const market = MARKETS[exchange]
  const zone = market.zone
  const upTo = q.asOf ? { toMs: cutoffsOf(q.asOf, market).minute } : {}
  const last = await store.readBars({ symbol, period: '1m', ...upTo, limit: 1 })
  if (barCount(last) === 0) return allocBars(0)
  const day = zone.localDay(last.timestamp[0])
  return readKlines(store, contexts, {
    symbol,
    period: q.period,
    count: q.count ?? ONE_DAY_OF_BARS,
    startTime: zone.midnightUtc(day),
    endTime: zone.midnightUtc(day + 1) - 1,
    adjust: 'none',
    ...(q.asOf && { asOf: q.asOf }),
  })
}

export async function* readIntradayBatch(
  store: MarketStore,
  contexts: SymbolContexts,
  symbols: readonly string[],
  q: Omit<IntradayQuery, 'symbol'>,
): AsyncGenerator<{ symbol: string; bars: Bars }> {
  for (const symbol of symbols) yield { symbol, bars: await readIntraday(store, contexts, { ...q, symbol }) }
}
