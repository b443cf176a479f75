/** @module Quotes: the latest snapshot pushed today, else the latest trading day of the stored bars (raw prices). */
import { cutoffsOf, type AsOf } from '../domain/as-of.js'
import { allocBars, barCount } from '../domain/bars.js'
import { MdqError } from '../domain/errors.js'
import { MARKETS } from '../domain/market.js'
import { quoteOfDay, quoteOfSnapshot, type Quote } from '../domain/quote.js'
import type { LiveQuote, MarketStore } from '../store/market-store.js'
import { readKlines } from './klines.js'
import { readUniverses } from './listing.js'
import { canonicalSymbols } from './reference.js'
import type { SymbolContexts } from './symbol-context.js'

export interface QuotesRequest {
  readonly symbols: readonly string[]
  readonly universes: readonly string[]
  /** Universe members, and the bars quoted, as of then. */
  readonly asOf?: AsOf
}

export const MAX_QUOTE_SYMBOLS = 1000

/** The symbols asked for, then the members of the universes asked for: canonical, duplicates once, 1..1000 in all. */
export async function quoteSymbols(store: MarketStore, req: QuotesRequest): Promise<string[]> {
  const found = await readUniverses(store, req.universes, req.asOf)
  const missing = req.universes.filter((id) => !found.some((u) => u.id === id))
  if (missing.length)
    throw new MdqError(
      'BAD_PARAM',
      `Parameter 'universes': unknown universe '${missing[0].slice(0, 64)}' (GET /v1/universes lists them).`,
    )
  const symbols = canonicalSymbols([...req.symbols, ...found.flatMap((u) => u.symbols)], 'symbols')
  if (symbols.length === 0)
    throw new MdqError('BAD_PARAM', `Parameters 'symbols' and 'universes' name no symbol; give at least one.`)
  if (symbols.length > MAX_QUOTE_SYMBOLS)
    throw new MdqError(
      'BAD_PARAM',
      `Parameters 'symbols' and 'universes' name ${symbols.length} symbols; at most ${MAX_QUOTE_SYMBOLS} in all.`,
    )
  return symbols
}

/**
 * Quotes of the known symbols, in order: a symbol's latest pushed snapshot when it is of today
 * (the exchange's local day of `nowMs`), else from its bars (up to `asOf`; as of a past time, bars
 * only). `nowMs` decides which day is today and `session`.
 */
export async function readQuotes(
  store: MarketStore,
  contexts: SymbolContexts,
  symbols: readonly string[],
  nowMs: number,
  asOf?: AsOf,
): Promise<Quote[]> {
  const out: Quote[] = []
  const instruments = await store.readInstruments(symbols)
  const pushed = asOf || instruments.length === 0 ? new Map<string, LiveQuote>() : await store.readLiveQuotes(symbols)
  for (const instrument of instruments) {
    const { symbol } = instrument
    const market = MARKETS[instrument.exchange]
    const zone = market.zone
    const live = pushed.get(symbol)
    if (live && zone.localDay(live.state.last.timestamp) === zone.localDay(nowMs)) {
      out.push(quoteOfSnapshot(live.state.last, market, instrument.name, nowMs, live.ext))
      continue
    }
    const cut = asOf && cutoffsOf(asOf, market)
    const [lastDaily, lastMinute] = await Promise.all([
      store.readBars({ symbol, period: '1d', ...(cut && { toMs: cut.daily }), limit: 1 }),
      store.readBars({ symbol, period: '1m', ...(cut && { toMs: cut.minute }), limit: 1 }),
    ])
    const days = [...lastDaily.timestamp, ...lastMinute.timestamp].map((t) => zone.localDay(t))
    if (days.length === 0) continue
    const day = Math.max(...days)
    const range = {
      startTime: zone.midnightUtc(day),
      endTime: zone.midnightUtc(day + 1) - 1,
      adjust: 'none' as const,
      ...(asOf && { asOf }),
    }
    const daily =
      barCount(lastDaily) && zone.localDay(lastDaily.timestamp[0]) === day
        ? await readKlines(store, contexts, { symbol, period: '1d', count: 1, ...range })
        : allocBars(0)
    const minutes =
      barCount(lastMinute) && zone.localDay(lastMinute.timestamp[0]) === day
        ? await readKlines(store, contexts, { symbol, period: '1m', count: 10_000, ...range })
        : allocBars(0)
    out.push(quoteOfDay(instrument, market, daily, minutes, nowMs))
  }
  return out
}
