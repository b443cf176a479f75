/** @module The embedded backend as the CLI sees it: `sqlite:PATH` (or a bare path), keys in a file of their own beside the store. */
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { MdqError } from '../../domain/errors.js'
import type { StoreBackend, StoreLocation } from '../backend.js'
import type { KeyStore } from '../key-store.js'
import { SqliteKeyStore, defaultKeysPath } from './sqlite-key-store.js'
import { SqliteMarketStore } from './sqlite-market-store.js'

export interface SqliteLocation extends StoreLocation {
  readonly scheme: 'sqlite'
  /** The store file, as given (relative paths are the process's), or ':memory:'. */
  readonly path: string
}

/** Whether a store file is there (a 0-byte file is not a store: SQLite would silently make it one). */
const storeFileExists = (path: string): boolean => path === ':memory:' || (existsSync(path) && statSync(path).size > 0)

/** The keys file beside a store, with the keys of a store from before keys had a file of their own moved into it. */
function keysBeside(storePath: string): KeyStore {
  const keys = SqliteKeyStore.open(defaultKeysPath(storePath))
  try {
    keys.adoptLegacyKeys(storePath)
    return keys
  } catch (err) {
    void keys.close()
    throw err
  }
}

export const sqliteBackend: StoreBackend<SqliteLocation> = {
  scheme: 'sqlite',
  urlForms: 'sqlite:PATH or a file path',
  // Any URL without a scheme of its own is a file path.
  accepts: (url) => url.startsWith('sqlite:') || !/^[a-z][a-z0-9+.-]*:\/\//i.test(url),
  parse(url) {
    const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : url // sqlite:///abs/path too
    if (path === '') throw new Error('no file path')
    return { scheme: 'sqlite', path }
  },
  display: (at) => at.path,
  redact: (url) => url,
  exists: async (at) => storeFileExists(at.path),
  async open(at, { create, keys }) {
    if (!create && !storeFileExists(at.path))
      throw new MdqError(
        'STORE_UNAVAILABLE',
        `no store at ${at.path} (${existsSync(at.path) ? 'an empty file' : 'no such file'}): create it with mdq migrate, mdq demo or mdq import`,
      )
    const keyStore = keys ? await keys() : keysBeside(at.path)
    try {
      if (keyStore instanceof SqliteKeyStore) keyStore.adoptLegacyKeys(at.path)
      // Serving (no create) opens on a full disk too (disk-room.ts).
      return { market: SqliteMarketStore.open(at.path, { useReserve: !create }), keys: keyStore }
    } catch (err) {
      await keyStore.close()
      throw err
    }
  },
  openKeysOf: async (at) => keysBeside(at.path),
  async openKeys(at, store) {
    if (store.scheme === 'sqlite') {
      const storePath = (store as SqliteLocation).path
      if (storePath !== ':memory:' && resolve(at.path) === resolve(storePath))
        throw new MdqError(
          'BAD_PARAM',
          `--keys 'sqlite:${at.path}' is the store file itself: keys need a file of their own (the default is ${defaultKeysPath(storePath)})`,
        )
    }
    return SqliteKeyStore.open(at.path)
  },
}
