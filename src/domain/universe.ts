/** @module Universes: named symbol lists (TickFlow's), the four built in ones derived from instruments. */
import type { Instrument, SecurityType } from './instrument.js'
import type { Region } from './market.js'

export const UNIVERSE_CATEGORIES = ['equity', 'etf', 'index'] as const
export type UniverseCategory = (typeof UNIVERSE_CATEGORIES)[number]

/** An imported universe as the store keeps it: its members replaced as a whole by each import. */
export interface StoredUniverse {
  readonly id: string
  readonly name: string
  readonly region: string | null
  readonly category: string | null
  readonly description: string | null
  readonly symbols: string[]
}

interface BuiltIn {
  readonly id: string
  readonly name: string
  readonly region: Region
  readonly category: UniverseCategory
  readonly type: SecurityType
  readonly description: string
}

/** Always current: their members are the instruments of that region and security class. */
export const BUILT_IN_UNIVERSES: readonly BuiltIn[] = [
  {
    id: 'CN_Equity_A',
    name: 'China A-shares',
    region: 'CN',
    category: 'equity',
    type: 'stock',
    description: 'Every stock of SH, SZ and BJ in this store',
  },
  {
    id: 'CN_ETF',
    name: 'China ETFs',
    region: 'CN',
    category: 'etf',
    type: 'etf',
    description: 'Every ETF of SH, SZ and BJ in this store',
  },
  {
    id: 'HK_Equity',
    name: 'Hong Kong equities',
    region: 'HK',
    category: 'equity',
    type: 'stock',
    description: 'Every stock of HK in this store',
  },
  {
    id: 'US_Equity',
    name: 'US equities',
    region: 'US',
    category: 'equity',
    type: 'stock',
    description: 'Every stock of US in this store',
  },
]

export function isBuiltInUniverse(id: string): boolean {
  return BUILT_IN_UNIVERSES.some((u) => u.id === id)
}

/** The built-in universes over `instruments` (symbol ascending), members in the same order. */
export function builtInUniverses(instruments: readonly Instrument[]): StoredUniverse[] {
  return BUILT_IN_UNIVERSES.map((u) => ({
    id: u.id,
    name: u.name,
    region: u.region,
    category: u.category,
    description: u.description,
    symbols: instruments.filter((i) => i.region === u.region && i.type === u.type).map((i) => i.symbol),
  }))
}

/** Universe ids as imported: letters, digits, `_`, `-`, `.`, 1..64 characters. */
export const UNIVERSE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
