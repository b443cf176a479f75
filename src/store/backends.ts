/** @module The backends mdq knows, one line each, and the lookups every command uses: a URL -> its location -> its stores. */
import { MdqError } from '../domain/errors.js'
import { clickhouseBackend } from './clickhouse/clickhouse-backend.js'
import { sqliteBackend } from './sqlite/sqlite-backend.js'
import type { StoreBackend, StoreLocation, Stores } from './backend.js'
import type { KeyStore } from './key-store.js'
import type { MarketStore } from './market-store.js'

export type { StoreLocation, Stores } from './backend.js'

/** Every backend, one line each; the one whose `accepts` takes a URL serves it (SQLite takes any path without a scheme). */
export const BACKENDS: readonly StoreBackend[] = [sqliteBackend, clickhouseBackend]

export const DEFAULT_STORE = 'sqlite:./data/mdq.db'

/** Every URL form a store may take, for help and errors. */
export const URL_FORMS = BACKENDS.map((b) => b.urlForms).join(', or ')

/** The backend of a parsed location. */
export function backendOf(at: StoreLocation): StoreBackend {
  const backend = BACKENDS.find((b) => b.scheme === at.scheme)
  if (!backend) throw new Error(`no backend for scheme '${at.scheme}'`)
  return backend
}

/** Parses a `--store` / `--keys` URL; `flag` names the option in errors. */
export function parseStoreUrl(url: string, flag = '--store'): StoreLocation {
  const bad = (why: string) => new MdqError('BAD_PARAM', `${flag} '${url}': ${why} (expected ${URL_FORMS})`)
  if (url === '') throw bad('empty')
  const backend = BACKENDS.find((b) => b.accepts(url))
  if (!backend) throw bad('unknown scheme')
  try {
    return backend.parse(url)
  } catch (err) {
    throw new MdqError(
      'BAD_PARAM',
      `${flag} '${backend.redact(url)}': ${(err as Error).message} (expected ${URL_FORMS})`,
    )
  }
}

/** The location for messages and logs, secrets left out. */
export const displayLocation = (at: StoreLocation): string => backendOf(at).display(at)

const located = (at: StoreLocation | string, flag?: string): StoreLocation =>
  typeof at === 'string' ? parseStoreUrl(at, flag) : at

export interface OpenStoresOptions {
  readonly store: StoreLocation | string
  readonly keys?: StoreLocation | string
  /** Make the store (or upgrade its schema) if needed; false refuses a store that does not exist. */
  readonly create: boolean
}

/** Opens the market store and its keys (at `keys` when given, else where the store's backend keeps them). */
export async function openStores(o: OpenStoresOptions): Promise<Stores> {
  const store = located(o.store)
  const keysAt = o.keys === undefined ? undefined : located(o.keys, '--keys')
  return backendOf(store).open(store, {
    create: o.create,
    ...(keysAt && { keys: () => backendOf(keysAt).openKeys(keysAt, store) }),
  })
}

/**
 * The market store the main thread has opened already, opened again on a worker thread (its own
 * connection): a failure here is the store unavailable (503), not a bug.
 */
export async function openMarketInWorker(store: StoreLocation, keys?: StoreLocation): Promise<MarketStore> {
  const opened = await openStores({ store, keys, create: false }).catch((err: unknown) => {
    throw err instanceof MdqError
      ? err
      : new MdqError(
          'STORE_UNAVAILABLE',
          `The store cannot be opened: ${(err as { code?: string }).code ?? 'unknown error'}.`,
        )
  })
  await opened.keys.close() // a worker uses market data only
  return opened.market
}

/**
 * Opens only the key store of a store (or `keys`): `mdq keys` never touches the market data, so a
 * long import cannot hold it up. A store that does not exist is refused, as `mdq serve` refuses it.
 */
export async function openKeyStore(o: {
  store: StoreLocation | string
  keys?: StoreLocation | string
}): Promise<KeyStore> {
  const store = located(o.store)
  if (o.keys !== undefined) {
    const at = located(o.keys, '--keys')
    return backendOf(at).openKeys(at, store)
  }
  const backend = backendOf(store)
  if (!(await backend.exists(store)))
    throw new MdqError(
      'STORE_UNAVAILABLE',
      `no store at ${backend.display(store)}: create it with mdq migrate, mdq demo or mdq import`,
    )
  return backend.openKeysOf(store)
}

/** Runs `fn` with the stores open and closes both after, also on failure. */
export async function withStores<T>(o: OpenStoresOptions, fn: (s: Stores) => Promise<T>): Promise<T> {
  const stores = await openStores(o)
  try {
    return await fn(stores)
  } finally {
    await Promise.all([stores.market.close(), stores.keys.close()])
  }
}
