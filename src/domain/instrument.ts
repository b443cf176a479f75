/** @module The instrument record and its security classes (contract "GET /v1/instruments"). */
import { MARKETS, parseSymbol, type Exchange, type Region } from './market.js'

/** Security classes, the top-level `type` of an instrument record (TickFlow's). */
export const SECURITY_TYPES = ['stock', 'etf', 'index', 'bond', 'fund', 'futures', 'options', 'other'] as const
export type SecurityType = (typeof SECURITY_TYPES)[number]

export function isSecurityType(value: string): value is SecurityType {
  return (SECURITY_TYPES as readonly string[]).includes(value)
}

/** An instrument; every field the store does not have is null, never made up. */
export interface Instrument {
  readonly symbol: string
  readonly code: string
  readonly exchange: Exchange
  readonly region: Region
  readonly name: string | null
  readonly type: SecurityType | null
  readonly listingDate: string | null
  readonly tickSize: number | null
  readonly totalShares: number | null
  readonly floatShares: number | null
  readonly limitUp: number | null
  readonly limitDown: number | null
  /** English name (TickFlow's CN `ext.name_en`). */
  readonly nameEn: string | null
  /** Shares per board lot (TickFlow's HK `ext.lot_size`). */
  readonly lotSize: number | null
}

/** An instrument known only by its symbol: every other field null. */
export function bareInstrument(
  symbol: string,
  fields: Partial<Omit<Instrument, 'symbol' | 'code' | 'exchange' | 'region'>> = {},
): Instrument {
  const { code, exchange } = parseSymbol(symbol)
  return {
    symbol,
    code,
    exchange,
    region: MARKETS[exchange].region,
    name: null,
    type: null,
    listingDate: null,
    tickSize: null,
    totalShares: null,
    floatShares: null,
    limitUp: null,
    limitDown: null,
    nameEn: null,
    lotSize: null,
    ...fields,
  }
}
