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

/**
 * Reads of a batch under way at once on a store whose reads wait on a server: it sends them together.
 * A blocking store (SQLite) reads one symbol at a time, so no more than one symbol's bars are held.
 */
const READ_AHEAD = 32

/** Each symbol's bars in order, read ahead on a waiting store (a batch answer is written out as it is produced). */
export async function* readKlinesBatch(
  store: MarketStore,
  contexts: SymbolContexts,
  symbols: readonly string[],
  q: Omit<KlinesQuery, 'symbol'>,
): AsyncGenerator<{ symbol: string; bars: Bars }> {
  yield* readAhead(store, symbols, (symbol) => readKlines(store, contexts, { ...q, symbol }))
}

/** `read` of each symbol, in order, READ_AHEAD of them under way on a waiting store; a failure surfaces at its symbol's turn. */
async function* readAhead(
  store: MarketStore,
  symbols: readonly string[],
  read: (symbol: string) => Promise<Bars>,
): AsyncGenerator<{ symbol: string; bars: Bars }> {
  const ahead = store.capabilities.blockingReads ? 1 : READ_AHEAD
  const started: Promise<Bars>[] = []
  for (let i = 0; i < symbols.length; i++) {
    while (started.length < ahead && i + started.length < symbols.length) {
      const p = read(symbols[i + started.length])
      p.catch(() => undefined) // awaited at its turn; a batch ended before then drops it
      started.push(p)
    }
    yield { symbol: symbols[i], bars: await started.shift()! }
  }
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
  yield* readAhead(store, symbols, (symbol) => readIntraday(store, contexts, { ...q, symbol }))
}
