/** @module The Store interface: shaped by the queries the API serves and by all-or-nothing batch writes. */
import type { Bars } from '../domain/bars.js'
import type { ExFactorEvent } from '../domain/ex-factors.js'
import type { Instrument } from '../domain/instrument.js'
import type { StoredPeriod } from '../domain/period.js'
import type { StoredUniverse } from '../domain/universe.js'

export interface BarQuery {
  readonly symbol: string
  readonly period: StoredPeriod
  /** Inclusive bounds in epoch ms; absent = open. */
  readonly fromMs?: number
  readonly toMs?: number
  /** The latest `limit` bars of the range are returned. */
  readonly limit: number
}

export interface ApiKeyRecord {
  readonly id: number
  readonly name: string
  /** SHA-256 hex of the plaintext key; the plaintext is never stored. */
  readonly hash: string
  readonly createdMs: number
  readonly revokedMs: number | null
  /** Per-key quota (requests per minute and burst) or null for the service defaults. */
  readonly ratePerMin: number | null
  readonly burst: number | null
}

/** One import: everything in it is written in one transaction, or nothing is. */
export interface WriteBatch {
  readonly instruments?: readonly Instrument[]
  /** Bars of one symbol and period each, ascending; a bar at an existing timestamp replaces it. */
  readonly bars?: readonly { readonly symbol: string; readonly period: StoredPeriod; readonly bars: Bars }[]
  /** Events keyed by (symbol, ex-date timestamp); a newer value replaces an older one. */
  readonly exFactors?: readonly { readonly symbol: string; readonly events: readonly ExFactorEvent[] }[]
}

/** Declared differences between backends (Kysely's DialectAdapter idea). */
export interface StoreCapabilities {
  /** Imports from another process are visible to a running server without a restart. */
  readonly liveImport: boolean
  /** Several service instances can share the store. */
  readonly sharedAcrossInstances: boolean
}

export interface Store {
  readonly capabilities: StoreCapabilities
  /** The latest `limit` bars with fromMs <= t <= toMs, ascending; empty Bars if none. The arrays are the caller's to change. */
  readBars(q: BarQuery): Promise<Bars>
  /** The instruments among `symbols` (canonical), in the order asked, unknown ones left out. */
  readInstruments(symbols: readonly string[]): Promise<Instrument[]>
  /** Instruments whose symbol, code, name or English name contains `text` (case-insensitive), symbols ascending, at most `limit`. */
  searchInstruments(text: string, limit: number): Promise<Instrument[]>
  // Listing and universes (issue 10; seam.md names them).
  /** Every instrument, or those of one exchange and/or security type; symbol ascending. */
  listInstruments(filter?: { exchange?: string; type?: string }): Promise<Instrument[]>
  /** The imported universes (id ascending); the built-in ones are derived in query/. */
  readUniverses(): Promise<StoredUniverse[]>

  /** Events ascending per known symbol (possibly []), with fromMs <= timestamp <= toMs; unknown symbols absent. */
  readExFactors(symbols: readonly string[], fromMs?: number, toMs?: number): Promise<Map<string, ExFactorEvent[]>>
  /**
   * An opaque token that changes whenever committed market data changes (also when another process
   * imports), unique to this store: for caches and ETags.
   */
  dataVersion(): Promise<string>
  /** How many writes (imports) have been committed to this store, by any process. */
  importCount(): Promise<number>
  /** Throws unless the store can really be read now (for /readyz): touches the storage, not a cache. */
  check(): Promise<void>
  /** Writes the whole batch or, on any error, nothing. */
  write(batch: WriteBatch): Promise<void>
  /** Opens the one write transaction; readers keep seeing the old data until commit. */
  beginWrite(): Promise<StoreWriter>

  createKey(key: { name: string; hash: string; ratePerMin?: number | null; burst?: number | null }): Promise<ApiKeyRecord>
  listKeys(): Promise<ApiKeyRecord[]>
  findKey(hash: string): Promise<ApiKeyRecord | undefined>
  /** False when no such key. */
  revokeKey(id: number): Promise<boolean>
  setKeyRate(id: number, ratePerMin: number | null, burst: number | null): Promise<boolean>

  close(): Promise<void>
}

/**
 * A write transaction, for imports too large to hold at once. Nothing is visible to readers until
 * `commit`; `rollback` (or the process dying) leaves the store exactly as it was.
 */
export interface StoreWriter {
  putInstruments(list: readonly Instrument[]): Promise<void>
  /** Bars of one symbol and period, ascending; existing bars at the same timestamps are replaced. */
  putBars(symbol: string, period: StoredPeriod, bars: Bars): Promise<void>
  putExFactors(symbol: string, events: readonly ExFactorEvent[]): Promise<void>
  /** Replaces each listed universe (its fields and its members) as a whole. */
  putUniverses(list: readonly StoredUniverse[]): Promise<void>
  /** Reads inside the transaction: sees what it wrote. */
  readBars(q: BarQuery): Promise<Bars>
  readInstruments(symbols: readonly string[]): Promise<Instrument[]>
  commit(): Promise<void>
  rollback(): Promise<void>
}
