/** @module readInstruments and readExFactors: the batch use cases (canonical symbols, order kept, unknown left out). */
import type { ExFactorEvent } from '../domain/ex-factors.js'
import type { Instrument } from '../domain/instrument.js'
import { parseSymbol } from '../domain/market.js'
import type { MarketStore } from '../store/market-store.js'

/** Canonical symbols of a request list, in order, duplicates once; a malformed one throws BAD_SYMBOL. */
export function canonicalSymbols(symbols: readonly string[], param: string): string[] {
  return [...new Set(symbols.map((s) => parseSymbol(s, param).symbol))]
}

export function readInstruments(store: MarketStore, symbols: readonly string[]): Promise<Instrument[]> {
  return store.readInstruments(canonicalSymbols(symbols, 'symbols'))
}

export function readExFactors(
  store: MarketStore,
  symbols: readonly string[],
  fromMs?: number,
  toMs?: number,
): Promise<Map<string, ExFactorEvent[]>> {
  return store.readExFactors(canonicalSymbols(symbols, 'symbols'), fromMs, toMs)
}
