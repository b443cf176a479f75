/** @module Exchanges and universes: listings derived from the instruments, plus the imported universes. */
import { asOfDate, type AsOf } from '../domain/as-of.js'
import { MdqError } from '../domain/errors.js'
import { isSecurityType, SECURITY_TYPES, type Instrument } from '../domain/instrument.js'
import {
  asciiUpperCase,
  EXCHANGES,
  isExchange,
  MARKETS,
  parseSymbol,
  type Exchange,
  type Region,
} from '../domain/market.js'
import { builtInUniverses, membersOn, type StoredUniverse } from '../domain/universe.js'
import type { MarketStore } from '../store/market-store.js'
import { withSharesAsOf } from './reference.js'

export interface ExchangeSummary {
  readonly exchange: Exchange
  readonly region: Region
  readonly count: number
}

/** Exchanges with at least one instrument, ascending by code. */
export async function listExchanges(store: MarketStore): Promise<ExchangeSummary[]> {
  const counts = new Map<Exchange, number>()
  for (const i of await store.listInstruments()) counts.set(i.exchange, (counts.get(i.exchange) ?? 0) + 1)
  return [...counts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([exchange, count]) => ({ exchange, region: MARKETS[exchange].region, count }))
}

/** The instruments of one exchange (code matched case-insensitively), optionally of one security type; shares as of `asOf` (reference.ts). */
export async function exchangeInstruments(
  store: MarketStore,
  exchangeParam: string,
  type?: string,
  asOf?: AsOf,
): Promise<{ exchange: Exchange; instruments: Instrument[] }> {
  const exchange = asciiUpperCase(exchangeParam)
  if (!isExchange(exchange))
    throw new MdqError(
      'BAD_PARAM',
      `Parameter 'exchange': unknown exchange '${exchangeParam.slice(0, 20)}'; allowed: ${EXCHANGES.join(', ')}.`,
    )
  if (type !== undefined && !isSecurityType(type))
    throw new MdqError('BAD_PARAM', `Parameter 'type' must be one of ${SECURITY_TYPES.join(', ')}.`)
  const instruments = await store.listInstruments({ exchange, ...(type === undefined ? {} : { type }) })
  return { exchange, instruments: asOf ? await withSharesAsOf(store, instruments, asOf) : instruments }
}

/**
 * Every universe: the four built-in ones (always current), then the imported ones by id; with
 * `asOf`, a universe imported with dates has the members of that day (each symbol's own zone).
 */
export async function listUniverses(store: MarketStore, asOf?: AsOf): Promise<StoredUniverse[]> {
  const imported = await store.readUniverses()
  const dateOf = (symbol: string) => asOfDate(asOf!, MARKETS[parseSymbol(symbol).exchange].zone)
  return [
    ...builtInUniverses(await store.listInstruments()),
    ...(asOf ? imported.map((u) => (u.spells ? { ...u, symbols: membersOn(u, dateOf) } : u)) : imported),
  ]
}

/** The universes among `ids` (in the order asked, duplicates once), unknown ones left out. */
export async function readUniverses(
  store: MarketStore,
  ids: readonly string[],
  asOf?: AsOf,
): Promise<StoredUniverse[]> {
  const all = new Map((await listUniverses(store, asOf)).map((u) => [u.id, u]))
  return [...new Set(ids)].flatMap((id) => all.get(id) ?? [])
}
