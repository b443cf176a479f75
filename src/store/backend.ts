/** @module How a storage backend plugs in: each backend folder exports one StoreBackend; store/backends.ts lists them. */
import type { KeyStore } from './key-store.js'
import type { MarketStore } from './market-store.js'

/**
 * Where a store lives, as its backend parsed it from a URL: plain data (it crosses to worker
 * threads), tagged with the backend's scheme.
 */
export interface StoreLocation {
  readonly scheme: string
}

/** A market store and the key store that goes with it. */
export interface Stores {
  readonly market: MarketStore
  readonly keys: KeyStore
}

export interface StoreBackend<L extends StoreLocation = StoreLocation> {
  /** The location tag, and the URL scheme named in messages (`sqlite`, `clickhouse`). */
  readonly scheme: L['scheme']
  /** The URL forms this backend takes, for help and error messages. */
  readonly urlForms: string
  /** Whether `url` names a store of this backend. */
  accepts(url: string): boolean
  /** The location `url` names; throws an Error whose message is the bare reason (never a secret). */
  parse(url: string): L
  /** The location for messages and logs, secrets left out. */
  display(at: L): string
  /** A URL of this backend for messages, secrets left out, also when it does not parse. */
  redact(url: string): string
  /** Whether a store is there (one that does not exist is refused by commands that only use a store). */
  exists(at: L): Promise<boolean>
  /**
   * Opens the market store and its keys: those `keys` opens when given (`--keys`), else where this backend keeps a store's
   * keys. `create`: make the store (or upgrade its schema) if needed; without it a missing store is
   * a STORE_UNAVAILABLE error naming it.
   */
  open(at: L, options: { readonly create: boolean; readonly keys?: () => Promise<KeyStore> }): Promise<Stores>
  /** The keys of the store at `at`, where this backend keeps them; never creates the market store. */
  openKeysOf(at: L): Promise<KeyStore>
  /** A key store at `at` itself (`--keys`), for the market store at `store`. */
  openKeys(at: L, store: StoreLocation): Promise<KeyStore>
  /**
   * Creates the store, or upgrades its schema, and says what it created: a line per place (a server
   * of a cluster). Absent: `mdq migrate` opens the store with `create` and reports only the outcome.
   */
  migrate?(at: L): Promise<string[]>
  /**
   * Removes what the store keeps on disk that no reader sees (unfinished imports, superseded rows);
   * lines to report. Absent: the backend never leaves anything to remove.
   */
  vacuum?(store: MarketStore, options: { readonly graceMs: number }): Promise<string[]>
  /** The shortest grace `vacuum` takes (a shorter one would take running imports for dead), with why. */
  readonly vacuumGrace?: { readonly minMs: number; readonly why: string }
}
