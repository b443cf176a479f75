/** @module readInstruments and readExFactors: the batch use cases (canonical symbols, order kept, unknown left out), as known on a date. */
import { asOfDate, asOfMs, type AsOf } from '../domain/as-of.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import { sharesOn } from '../domain/financials.js'
import type { Instrument } from '../domain/instrument.js'
import { MARKETS, parseSymbol } from '../domain/market.js'
import type { MarketStore } from '../store/market-store.js'

/** Canonical symbols of a request list, in order, duplicates once; a malformed one throws BAD_SYMBOL. */
export function canonicalSymbols(symbols: readonly string[], param: string): string[] {
  return [...new Set(symbols.map((s) => parseSymbol(s, param).symbol))]
}

/**
 * The instruments asked for; with `asOf`, `totalShares` and `floatShares` are those in force then
 * by the symbol's imported shares history (null before its first known entry), and as imported
 * for a symbol without one.
 */
export async function readInstruments(
  store: MarketStore,
  symbols: readonly string[],
  asOf?: AsOf,
): Promise<Instrument[]> {
  const instruments = await store.readInstruments(canonicalSymbols(symbols, 'symbols'))
  return asOf ? withSharesAsOf(store, instruments, asOf) : instruments
}

export async function withSharesAsOf(
  store: MarketStore,
  list: readonly Instrument[],
  asOf: AsOf,
): Promise<Instrument[]> {
  if (list.length === 0) return []
  const history = await store.readFinancials(
    'shares',
    list.map((i) => i.symbol),
  )
  return list.map((i) => {
    const versions = history.get(i.symbol)
    if (!versions) return i
    const on = sharesOn(versions, asOfDate(asOf, MARKETS[i.exchange].zone))
    return { ...i, totalShares: on?.totalShares ?? null, floatShares: on?.floatShares ?? null }
  })
}

/** Events per known symbol with fromMs <= ex-date <= toMs; with `asOf`, only those with an ex-date by then. */
export async function readExFactors(
  store: MarketStore,
  symbols: readonly string[],
  fromMs?: number,
  toMs?: number,
  asOf?: AsOf,
): Promise<Map<string, ExFactorEvent[]>> {
  const events = await store.readExFactors(canonicalSymbols(symbols, 'symbols'), fromMs, toMs)
  if (asOf)
    for (const [symbol, list] of events) {
      const cutoff = asOfMs(asOf, MARKETS[parseSymbol(symbol).exchange].zone)
      events.set(
        symbol,
        list.filter((e) => e.timestamp <= cutoff),
      )
    }
  return events
}
