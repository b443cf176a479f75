/** @module readStatements: the financials use case (the version of each period served, as known on a date). */
import { asOfDate, type AsOf } from '../domain/as-of.js'
import { servedVersions, type PeriodRange, type Statement, type StatementRecord } from '../domain/financials.js'
import { MARKETS } from '../domain/market.js'
import type { MarketStore } from '../store/market-store.js'
import { canonicalSymbols } from './reference.js'

export interface StatementsQuery {
  readonly statement: Statement
  readonly symbols: readonly string[]
  /** On period_end. */
  readonly range: PeriodRange
  /** Only the latest period (of the range, as known). */
  readonly latest: boolean
  readonly asOf?: AsOf
}

/**
 * Per known symbol, in the order asked (unknown ones left out): the latest version of each period,
 * or with `asOf` the latest announced on or before that day (in the symbol's exchange zone); [] when none.
 */
export async function readStatements(store: MarketStore, q: StatementsQuery): Promise<Map<string, StatementRecord[]>> {
  const known = await store.readInstruments(canonicalSymbols(q.symbols, 'symbols'))
  const stored = await store.readFinancials(
    q.statement,
    known.map((i) => i.symbol),
    q.range,
  )
  const out = new Map<string, StatementRecord[]>()
  for (const { symbol, exchange } of known) {
    const knownOn = q.asOf && asOfDate(q.asOf, MARKETS[exchange].zone)
    out.set(symbol, servedVersions(stored.get(symbol) ?? [], knownOn, q.latest))
  }
  return out
}
