/** @module The one factory of stores: a `--store` / `--keys` URL -> the backend that serves it (the only place a backend is named). */
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { MdqError } from '../domain/errors.js'
import type { KeyStore } from '../store/key-store.js'
import type { MarketStore } from '../store/market-store.js'
import { ClickHouseStores } from '../store/clickhouse/clickhouse-stores.js'
import { parseClickHouseUrl, redact, type ClickHouseConfig } from '../store/clickhouse/config.js'
import { SqliteKeyStore, defaultKeysPath } from '../store/sqlite/sqlite-key-store.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'

export type { ClickHouseConfig }

export const DEFAULT_STORE = 'sqlite:./data/mdq.db'

export interface Stores {
  readonly market: MarketStore
  readonly keys: KeyStore
}

export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'clickhouse'; readonly config: ClickHouseConfig }

const badUrl = (flag: string, url: string, why: string) =>
  new MdqError(
    'BAD_PARAM',
    `${flag} '${url}': ${why} (expected sqlite:PATH, a file path, or clickhouse://[user[:password]@]host:port/database[?cluster=NAME])`,
  )

/** `sqlite:PATH` or a bare path, or `clickhouse://...`; `flag` names the option in errors. */
export function parseStoreUrl(url: string, flag = '--store'): StoreLocation {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') // sqlite:///abs/path too
    if (path === '') throw badUrl(flag, url, 'no file path')
    return { kind: 'sqlite', path }
  }
  if (url.startsWith('clickhouse://')) return clickHouseLocation(url, flag)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw badUrl(flag, url, 'unknown scheme')
  if (url === '') throw badUrl(flag, url, 'empty')
  return { kind: 'sqlite', path: url }
}

function clickHouseLocation(url: string, flag: string): StoreLocation {
  try {
    return { kind: 'clickhouse', config: parseClickHouseUrl(url) }
  } catch (err) {
    throw badUrl(flag, redact(url), (err as Error).message)
  }
}

/** Whether a SQLite store file is there (a 0-byte file is not a store: SQLite would silently make it one). */
export function sqliteStoreExists(path: string): boolean {
  return path === ':memory:' || (existsSync(path) && statSync(path).size > 0)
}

/** ClickHouse: one server, or bars sharded over a cluster; it creates its schema on first use (src/store/clickhouse/FORMAT.md). */
const openClickHouse = (config: ClickHouseConfig): Promise<Stores> => ClickHouseStores.open(config) // backend: clickhouse

async function openSqlite(path: string, keysUrl: string | undefined, create: boolean): Promise<Stores> {
  if (!create && !sqliteStoreExists(path))
    throw new MdqError(
      'STORE_UNAVAILABLE',
      `no store at ${path} (${existsSync(path) ? 'an empty file' : 'no such file'}): create it with mdq migrate, mdq demo or mdq import`,
    )
  const keys = await sqliteKeysFor(path, keysUrl)
  try {
    return { market: SqliteMarketStore.open(path), keys }
  } catch (err) {
    await keys.close()
    throw err
  }
}

/** The keys of a SQLite store: `--keys`, else the file beside it; an old store's keys move into a SQLite key file first. */
async function sqliteKeysFor(storePath: string, keysUrl: string | undefined): Promise<KeyStore> {
  const keysAt = keysUrl === undefined ? undefined : parseStoreUrl(keysUrl, '--keys')
  if (keysAt?.kind === 'sqlite' && storePath !== ':memory:' && resolve(keysAt.path) === resolve(storePath))
    throw new MdqError(
      'BAD_PARAM',
      `--keys '${keysUrl}' is the store file itself: keys need a file of their own (the default is ${defaultKeysPath(storePath)})`,
    )
  const keys =
    keysUrl === undefined ? SqliteKeyStore.open(defaultKeysPath(storePath)) : await openKeys(keysUrl, '--keys')
  try {
    if (keys instanceof SqliteKeyStore) keys.adoptLegacyKeys(storePath)
    return keys
  } catch (err) {
    await keys.close()
    throw err
  }
}

async function openKeys(url: string, flag: '--store' | '--keys'): Promise<KeyStore> {
  const at = parseStoreUrl(url, flag)
  if (at.kind === 'sqlite') return SqliteKeyStore.open(at.path)
  const both = await openClickHouse(at.config)
  // Only the keys are wanted: closing them closes the market side opened with them.
  return { ...bind(both.keys), close: async () => void (await Promise.all([both.keys.close(), both.market.close()])) }
}

const bind = (k: KeyStore): KeyStore => ({
  createKey: k.createKey.bind(k),
  listKeys: k.listKeys.bind(k),
  findKey: k.findKey.bind(k),
  revokeKey: k.revokeKey.bind(k),
  setKeyRate: k.setKeyRate.bind(k),
  keysVersion: k.keysVersion.bind(k),
  check: k.check.bind(k),
  close: k.close.bind(k),
})

/**
 * Opens the market store at `store` and the key store at `keys` (default: beside the market data,
 * in the same backend). `create: false` refuses a store that does not exist yet (mdq serve).
 */
export async function openStores(o: { store: string; keys?: string; create: boolean }): Promise<Stores> {
  const at = parseStoreUrl(o.store)
  if (at.kind === 'sqlite') return openSqlite(at.path, o.keys, o.create)
  const both = await openClickHouse(at.config)
  if (o.keys === undefined) return both
  try {
    return { market: both.market, keys: await openKeys(o.keys, '--keys') }
  } finally {
    await both.keys.close()
  }
}

/**
 * Opens only the key store of `store` (or `keys`): `mdq keys` never touches the market data, so a
 * long import cannot hold it up. Creates the keys file if needed, never the market store.
 */
export async function openKeyStore(o: { store: string; keys?: string }): Promise<KeyStore> {
  const at = parseStoreUrl(o.store)
  if (at.kind === 'sqlite') return sqliteKeysFor(at.path, o.keys)
  return openKeys(o.keys ?? o.store, o.keys === undefined ? '--store' : '--keys')
}

/** Runs `fn` with the stores open and closes both after, also on failure. */
export async function withStores<T>(
  o: { store: string; keys?: string; create: boolean },
  fn: (s: Stores) => Promise<T>,
): Promise<T> {
  const stores = await openStores(o)
  try {
    return await fn(stores)
  } finally {
    await Promise.all([stores.market.close(), stores.keys.close()])
  }
}
