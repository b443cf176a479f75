/** @module SQLite connections shared by the market and key stores: pragmas, migrations, error mapping. */
import Database from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { MdqError } from '../../domain/errors.js'

export type Db = Database.Database

/** The store file's memory mapping per connection: address space, filled lazily (read-mapping.ts unmaps a reader's under a feed). */
export const MAP_BYTES = 1 << 30

export interface OpenOptions {
  /** Open read-only (fails if the file does not exist). */
  readonly readonly?: boolean
}

export function openDb(path: string, options: OpenOptions = {}): Db {
  if (path !== ':memory:' && !options.readonly) mkdirSync(dirname(path), { recursive: true })
  let db: Db | undefined
  try {
    db = new Database(path, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
      timeout: 10_000,
    })
    if (!options.readonly) {
      // A new file keeps a map of its pages so that the pages rewrites free can be given back to the
      // file system (`PRAGMA incremental_vacuum`); only settable before the first page is written.
      if (db.pragma('page_count', { simple: true }) === 0) db.pragma('auto_vacuum = INCREMENTAL')
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = NORMAL')
    }
    // Chunk BLOBs span overflow-page chains: reading them through mmap instead of one pread per page
    // made a range query 2.6x faster here (95 -> 36 us). The mapping is address space, filled lazily.
    db.pragma(`mmap_size = ${MAP_BYTES}`)
    db.pragma('cache_size = -65536')
    return db
  } catch (err) {
    db?.close()
    throw openFailure(path, err)
  }
}

/**
 * A failure to open `path`: not an SQLite file, or not a file at all (a directory, no permission),
 * worded for the operator and naming the path (the CLI prints it as one line). Its SQLite code stays:
 * an answer to a client names that alone, never a path (backends.ts, openMarketInWorker).
 */
export function openFailure(path: string, err: unknown): unknown {
  if (!(err instanceof Database.SqliteError)) return err
  const reason =
    err.code === 'SQLITE_NOTADB'
      ? 'not an SQLite store file'
      : err.code === 'SQLITE_CANTOPEN'
        ? 'cannot be opened (a directory, or no permission?)'
        : undefined
  return reason === undefined ? err : Object.assign(new Error(`${path}: ${reason}`), { code: err.code })
}

export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number
}

/** Runs the migrations past PRAGMA user_version, each in one transaction; refuses a newer schema. */
export function migrate(db: Db, migrations: readonly string[], what: string): void {
  const version = schemaVersion(db)
  if (version > migrations.length)
    throw new Error(`${what} schema version ${version} is newer than this build (${migrations.length}); upgrade mdq`)
  for (let v = version; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v])
      db.pragma(`user_version = ${v + 1}`)
    }).immediate()
  }
}

/** SQLite failures while reading become STORE_UNAVAILABLE (a 503), other errors pass. */
export function guarded<T>(read: () => T, what = 'store'): T {
  try {
    return read()
  } catch (err) {
    if (err instanceof Database.SqliteError)
      throw new MdqError('STORE_UNAVAILABLE', `The ${what} cannot be read: ${err.code}.`)
    throw err
  }
}

function schemaHas(db: Db, type: 'table' | 'index', name: string): boolean {
  return db.prepare('SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?').get(type, name) !== undefined
}
export const tableExists = (db: Db, name: string): boolean => schemaHas(db, 'table', name)
export const indexExists = (db: Db, name: string): boolean => schemaHas(db, 'index', name)
