/** @module The embedded KeyStore: API keys in a SQLite file of their own, so a long import never blocks a key change. */
import Database from 'better-sqlite3'
import { existsSync, statSync } from 'node:fs'
import { isKeyScope, type ApiKeyRecord, type KeyScope, type KeyStore } from '../key-store.js'
import { KEY_MIGRATIONS } from './schema.js'
import { guarded, migrate, openDb, openFailure, tableExists, type Db } from './sqlite-db.js'
import { keepReserve, orDiskFull, withReserve } from './disk-room.js'

interface KeyRow {
  id: number
  name: string
  hash: string
  created_ms: number
  revoked_ms: number | null
  rate_per_min: number | null
  burst: number | null
  scope: string
}

const toKey = (r: KeyRow): ApiKeyRecord => ({
  id: r.id,
  name: r.name,
  hash: r.hash,
  createdMs: r.created_ms,
  revokedMs: r.revoked_ms,
  ratePerMin: r.rate_per_min,
  burst: r.burst,
  // A scope this build does not know (a newer mdq wrote it) reads only.
  scope: isKeyScope(r.scope) ? r.scope : 'read',
})

/** The keys file that goes with a store file when none is named: `./data/mdq.db` -> `./data/mdq.keys.db`. */
export function defaultKeysPath(storePath: string): string {
  return storePath === ':memory:' ? ':memory:' : `${storePath.replace(/\.db$/, '')}.keys.db`
}

function statements(db: Db) {
  return {
    insert: db.prepare<[string, string, number, number | null, number | null, KeyScope], KeyRow>(
      'INSERT INTO api_keys (name, hash, created_ms, rate_per_min, burst, scope) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
    ),
    adopt: db.prepare<Omit<KeyRow, 'scope'>>(
      'INSERT OR IGNORE INTO api_keys (id, name, hash, created_ms, revoked_ms, rate_per_min, burst) VALUES (@id, @name, @hash, @created_ms, @revoked_ms, @rate_per_min, @burst)',
    ),
    list: db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY id'),
    find: db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE hash = ?'),
    exists: db.prepare<[number]>('SELECT 1 FROM api_keys WHERE id = ?'),
    revoke: db.prepare<[number, number]>('UPDATE api_keys SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL'),
    setRate: db.prepare<[number | null, number | null, number]>(
      'UPDATE api_keys SET rate_per_min = ?, burst = ? WHERE id = ?',
    ),
    changeCounter: db.prepare('PRAGMA data_version').pluck(),
  }
}

export class SqliteKeyStore implements KeyStore {
  readonly #db: Db
  readonly #path: string
  readonly #st: ReturnType<typeof statements>
  /** Own commits; PRAGMA data_version counts only other connections' (processes') commits. */
  #ownWrites = 0

  private constructor(db: Db, path: string) {
    this.#db = db
    this.#path = path
    this.#st = statements(db)
  }

  /**
   * Opens (creating and migrating if needed) the keys file; ':memory:' for throwaway keys. It opens
   * on a full disk too (disk-room.ts): serving and revoking a key must work there.
   */
  static open(path: string): SqliteKeyStore {
    const store = withReserve(path, 'open the API keys', () => {
      const db = openDb(path)
      try {
        migrate(db, KEY_MIGRATIONS, 'keys')
        return new SqliteKeyStore(db, path)
      } catch (err) {
        db.close()
        throw err
      }
    })
    keepReserve(path)
    return store
  }

  /** A key write, its failure on a full disk said so. */
  #write<T>(what: string, write: () => T): T {
    try {
      return write()
    } catch (err) {
      throw orDiskFull(err, this.#path, what)
    }
  }

  /**
   * Moves the keys of a store file from before keys had their own file (its `api_keys` table) here,
   * once: copied (existing ids kept, copies idempotent), then the old table is dropped.
   */
  adoptLegacyKeys(storePath: string): number {
    if (storePath === ':memory:' || !existsSync(storePath) || statSync(storePath).size === 0) return 0
    let legacy: Db | undefined
    let legacyKeys: boolean
    try {
      legacy = new Database(storePath, { fileMustExist: true, timeout: 10_000 })
      legacyKeys = tableExists(legacy, 'api_keys')
    } catch (err) {
      legacy?.close()
      throw openFailure(storePath, err)
    }
    try {
      if (!legacyKeys) return 0
      const rows = legacy.prepare<[], Omit<KeyRow, 'scope'>>('SELECT * FROM api_keys ORDER BY id').all()
      this.#db.transaction(() => {
        for (const r of rows) this.#st.adopt.run(r)
      })()
      legacy.exec('DROP TABLE api_keys')
      this.#ownWrites++
      return rows.length
    } finally {
      legacy.close()
    }
  }

  async createKey(key: {
    name: string
    hash: string
    ratePerMin?: number | null
    burst?: number | null
    scope?: KeyScope
  }): Promise<ApiKeyRecord> {
    const row = this.#write('create the key', () =>
      this.#st.insert.get(
        key.name,
        key.hash,
        Date.now(),
        key.ratePerMin ?? null,
        key.burst ?? null,
        key.scope ?? 'read',
      ),
    )!
    this.#ownWrites++
    return toKey(row)
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return guarded(() => this.#st.list.all().map(toKey), 'keys store')
  }

  async findKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return guarded(() => {
      const row = this.#st.find.get(hash)
      return row && toKey(row)
    }, 'keys store')
  }

  /** Revoking a leaked key is the one write that must succeed on a full disk: it may use the reserve. */
  async revokeKey(id: number): Promise<boolean> {
    const changed = withReserve(this.#path, `revoke key ${id}`, () => this.#st.revoke.run(Date.now(), id)).changes > 0
    if (changed) this.#ownWrites++
    return changed || this.#st.exists.get(id) !== undefined
  }

  async setKeyRate(id: number, ratePerMin: number | null, burst: number | null): Promise<boolean> {
    const changed = this.#write('change the key', () => this.#st.setRate.run(ratePerMin, burst, id)).changes > 0
    if (changed) this.#ownWrites++
    return changed
  }

  /** Two counters, both in memory: another process's commit moves data_version, ours move #ownWrites. */
  async keysVersion(): Promise<string> {
    return guarded(() => `${this.#st.changeCounter.get() as number}.${this.#ownWrites}`, 'keys store')
  }

  async check(): Promise<void> {
    guarded(() => this.#st.exists.get(0), 'keys store')
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close()
  }
}
