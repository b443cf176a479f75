/** @module Exchanges, their regions, time zones and regular sessions; symbol parsing (contract "Symbols and markets"). */
import { MdqError } from './errors.js'
import { symbolMeant } from './symbol-hints.js'
import { zoneOf, type Zone } from './time-zone.js'

export const EXCHANGES = ['SH', 'SZ', 'BJ', 'HK', 'US'] as const
export type Exchange = (typeof EXCHANGES)[number]
export type Region = 'CN' | 'HK' | 'US'
export type InstrumentKind = 'cn_equity' | 'hk_equity' | 'us_equity'

/** A regular trading session in minutes since local midnight, [open, close). */
export interface Session {
  readonly open: number
  readonly close: number
}

export interface Market {
  readonly exchange: Exchange
  readonly region: Region
  readonly zone: Zone
  readonly sessions: readonly Session[]
  /**
   * Minutes before the first open whose trades belong to the day's first minute bar (the opening
   * call auction: CN matches at 09:25, HK at 09:20); 0 where trades before the open (US pre-market)
   * are in no bar.
   */
  readonly openAuctionMinutes: number
  /**
   * Minutes after the last close whose trades belong to the day's last minute bar (the closing
   * auction's print: CN 15:00, HK's random close 16:08-16:10, the US closing cross at 16:00); trades
   * after them (CN's after-hours fixed-price trading from 15:05, US after hours) are in no bar.
   */
  readonly closeAuctionMinutes: number
  readonly kind: InstrumentKind
  readonly codePattern: RegExp
  readonly codeRule: string
}

const hm = (h: number, m: number) => h * 60 + m
const CN_SESSIONS: readonly Session[] = [
  { open: hm(9, 30), close: hm(11, 30) },
  { open: hm(13, 0), close: hm(15, 0) },
]
function cn(exchange: Exchange): Market {
  return {
    exchange,
    region: 'CN',
    zone: zoneOf('Asia/Shanghai'),
    sessions: CN_SESSIONS,
    openAuctionMinutes: 15,
    closeAuctionMinutes: 5,
    kind: 'cn_equity',
    codePattern: /^\d{6}$/,
    codeRule: '6 digits',
  }
}

export const MARKETS: Readonly<Record<Exchange, Market>> = {
  SH: cn('SH'),
  SZ: cn('SZ'),
  BJ: cn('BJ'),
  HK: {
    exchange: 'HK',
    region: 'HK',
    zone: zoneOf('Asia/Hong_Kong'),
    sessions: [
      { open: hm(9, 30), close: hm(12, 0) },
      { open: hm(13, 0), close: hm(16, 0) },
    ],
    openAuctionMinutes: 30,
    closeAuctionMinutes: 15,
    kind: 'hk_equity',
    codePattern: /^\d{5}$/,
    codeRule: '5 digits',
  },
  US: {
    exchange: 'US',
    region: 'US',
    zone: zoneOf('America/New_York'),
    sessions: [{ open: hm(9, 30), close: hm(16, 0) }],
    openAuctionMinutes: 0,
    closeAuctionMinutes: 1,
    kind: 'us_equity',
    codePattern: /^[A-Z0-9](?:[A-Z0-9.-]{0,10}[A-Z0-9])?$/,
    codeRule: 'letters and digits, possibly with "." or "-" (e.g. BRK.B)',
  },
}

export interface SymbolParts {
  /** Canonical `<CODE>.<EXCHANGE>`. */
  readonly symbol: string
  readonly code: string
  readonly exchange: Exchange
}

/**
 * Upper case for ASCII letters only: String#toUpperCase folds some other letters into ASCII ones
 * ('ſ' to 'S', 'ı' to 'I'), which would let a symbol that is not one pass as another.
 */
export const asciiUpperCase = (s: string): string => s.replace(/[a-z]+/g, (letters) => letters.toUpperCase())

export function isExchange(value: string): value is Exchange {
  return (EXCHANGES as readonly string[]).includes(value)
}

/** Parses and canonicalizes a symbol, split at the LAST dot; throws BAD_SYMBOL naming the rule broken (and the symbol meant, when it reads as another vendor's form). */
export function parseSymbol(input: string, param = 'symbol'): SymbolParts {
  const dot = input.lastIndexOf('.')
  if (dot <= 0 || dot === input.length - 1) {
    throw badSymbol(
      input,
      `Parameter '${param}': '${clip(input)}' is not of the form <code>.<exchange> (exchange one of ${EXCHANGES.join(', ')}).`,
    )
  }
  const exchange = asciiUpperCase(input.slice(dot + 1))
  if (!isExchange(exchange)) {
    throw badSymbol(
      input,
      `Parameter '${param}': unknown exchange '${clip(input.slice(dot + 1))}' in '${clip(input)}'; allowed: ${EXCHANGES.join(', ')}.`,
    )
  }
  const market = MARKETS[exchange]
  const code = asciiUpperCase(input.slice(0, dot))
  if (!market.codePattern.test(code)) {
    throw badSymbol(
      input,
      `Parameter '${param}': code '${clip(input.slice(0, dot))}' is not valid for exchange ${exchange}; expected ${market.codeRule}.`,
    )
  }
  return { symbol: `${code}.${exchange}`, code, exchange }
}

function badSymbol(input: string, message: string): MdqError {
  const meant = input.length <= 40 ? symbolMeant(input) : undefined
  return new MdqError('BAD_SYMBOL', meant === undefined ? message : `${message} Did you mean '${meant}'?`)
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}...` : s
}
