/** @module Exchanges and universes: listings derived from the instruments, plus the imported universes. */
import { MdqError } from '../domain/errors.js'
import { isSecurityType, SECURITY_TYPES, type Instrument } from '../domain/instrument.js'
import { EXCHANGES, isExchange, MARKETS, type Exchange, type Region } from '../domain/market.js'
import { builtInUniverses, type StoredUniverse } from '../domain/universe.js'
import type { MarketStore } from '../store/market-store.js'

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

/** The instruments of one exchange (code matched case-insensitively), optionally of one security type. */
export async function exchangeInstruments(
  store: MarketStore,
  exchangeParam: string,
  type?: string,
): Promise<{ exchange: Exchange; instruments: Instrument[] }> {
  const exchange = exchangeParam.toUpperCase()
  if (!isExchange(exchange))
    throw new MdqError(
      'BAD_PARAM',
      `Parameter 'exchange': unknown exchange '${exchangeParam.slice(0, 20)}'; allowed: ${EXCHANGES.join(', ')}.`,
    )
  if (type !== undefined && !isSecurityType(type))
    throw new MdqError('BAD_PARAM', `Parameter 'type' must be one of ${SECURITY_TYPES.join(', ')}.`)
  return { exchange, instruments: await store.listInstruments({ exchange, ...(type === undefined ? {} : { type }) }) }
}

/** Every universe: the four built-in ones (always current), then the imported ones by id. */
export async function listUniverses(store: MarketStore): Promise<StoredUniverse[]> {
  return [...builtInUniverses(await store.listInstruments()), ...(await store.readUniverses())]
}

/** The universes among `ids` (in the order asked, duplicates once), unknown ones left out. */
export async function readUniverses(store: MarketStore, ids: readonly string[]): Promise<StoredUniverse[]> {
  const all = new Map((await listUniverses(store)).map((u) => [u.id, u]))
  return [...new Set(ids)].flatMap((id) => all.get(id) ?? [])
}
