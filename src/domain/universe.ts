/** @module Universes: named symbol lists (TickFlow's), the four built in ones derived from instruments. */
import type { Instrument, SecurityType } from './instrument.js'
import type { Region } from './market.js'

export const UNIVERSE_CATEGORIES = ['equity', 'etf', 'index'] as const
export type UniverseCategory = (typeof UNIVERSE_CATEGORIES)[number]

/**
 * A symbol's membership of a universe: from `inDate` (inclusive) until `outDate` (exclusive: the
 * first day it is out), both `YYYY-MM-DD`, null = open.
 */
export interface UniverseSpell {
  readonly symbol: string
  readonly inDate: string | null
  readonly outDate: string | null
}

/** An imported universe as the store keeps it: its members replaced as a whole by each import. */
export interface StoredUniverse {
  readonly id: string
  readonly name: string
  readonly region: string | null
  readonly category: string | null
  readonly description: string | null
  /** The members today: every member, or for a universe imported with dates, those not yet out. */
  readonly symbols: string[]
  /** The memberships with their dates, when imported with dates (in file order). */
  readonly spells?: readonly UniverseSpell[]
}

/** Whether any spell carries a date (else the universe is a plain list). */
export const isDated = (spells: readonly UniverseSpell[]): boolean =>
  spells.some((s) => s.inDate !== null || s.outDate !== null)

/** The members of a dated universe today: symbols with a spell not yet ended, in order, each once. */
export function currentMembers(spells: readonly UniverseSpell[]): string[] {
  return [...new Set(spells.filter((s) => s.outDate === null).map((s) => s.symbol))]
}

/**
 * The members of a universe on a day (`dateOf(symbol)`, `YYYY-MM-DD` in the symbol's own zone): for
 * a dated universe the symbols with a spell covering that day, in order, each once; a plain list is
 * the same on every day.
 */
export function membersOn(u: StoredUniverse, dateOf: (symbol: string) => string): string[] {
  if (!u.spells) return u.symbols
  const on = u.spells.filter((s) => {
    const day = dateOf(s.symbol)
    return (s.inDate === null || s.inDate <= day) && (s.outDate === null || day < s.outDate)
  })
  return [...new Set(on.map((s) => s.symbol))]
}

/** A stored universe from its fields and member rows: dated (with spells) when any row has a date. */
export function universeOfRows(
  fields: Omit<StoredUniverse, 'symbols' | 'spells'>,
  rows: readonly UniverseSpell[],
): StoredUniverse {
  return isDated(rows)
    ? { ...fields, symbols: currentMembers(rows), spells: rows }
    : { ...fields, symbols: rows.map((r) => r.symbol) }
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
