/** @module Which version an answer is of: a one-symbol answer's is its symbol's (other symbols' live appends leave it), any other's the data version. */
import { parseSymbol } from '../domain/market.js'
import type { DataVersions } from '../store/market-store.js'

/** The symbol a one-symbol answer is about, canonical; undefined for a malformed one (its answer is an error, of no version). */
export function canonicalOrUndefined(symbol: string): string | undefined {
  try {
    return parseSymbol(symbol).symbol
  } catch {
    return undefined
  }
}

/** The version of an answer about `symbol` (as given by the client), or about anything (no symbol): the data version. */
export function answerVersion(versions: DataVersions, symbol?: string): string {
  const canonical = symbol === undefined ? undefined : canonicalOrUndefined(symbol)
  return canonical === undefined ? versions.data : versions.of(canonical)
}
