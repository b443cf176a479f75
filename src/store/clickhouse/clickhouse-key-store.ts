/** @module KeyStore on ClickHouse: each change a new row version of its key (newest wins), polled for the auth cache. */
import { randomInt } from 'node:crypto'
import { isKeyScope, type ApiKeyRecord, type KeyScope, type KeyStore } from '../key-store.js'
import { sql, type Connection, type Health } from './connection.js'
import { encodeRows, type ColumnType } from './row-binary.js'
import { newImportId } from './clickhouse-writer.js'
import { Poller } from './poller.js'
import { POLL_MS } from './clickhouse-market-store.js'

interface KeyRow {
  id: number
  r: [string, string, string, string | null, number | null, number | null, string]
}

const COLUMNS = ['id', 'name', 'hash', 'created_ms', 'revoked_ms', 'rate_per_min', 'burst', 'ver', 'scope']
const TYPES: readonly ColumnType[] = [
  'UInt32',
  'String',
  'String',
  'Int64',
  'Nullable(Int64)',
  'Nullable(Float64)',
  'Nullable(Float64)',
  'UInt64',
  'String',
]

export class ClickHouseKeyStore implements KeyStore {
  readonly #meta: Connection
  readonly #writer: Connection
  readonly #version: Poller<string>
  readonly #health: Health

  private constructor(meta: Connection, writer: Connection, health: Health) {
    this.#meta = meta
    this.#writer = writer
    this.#health = health
    this.#version = new Poller(async () => {
      const [[count, ver]] = await meta.rows('SELECT count(), max(ver) FROM api_keys')
      return `k${count}.${ver}`
    }, POLL_MS)
  }

  /** `meta` and `writer` belong to the caller (the market store's topology) and outlive this store. */
  static async open(meta: Connection, writer: Connection, health: Health): Promise<ClickHouseKeyStore> {
    const store = new ClickHouseKeyStore(meta, writer, health)
    await store.#version.start()
    return store
  }

  async #select(where: string): Promise<ApiKeyRecord[]> {
    const rows = await this.#meta.json<KeyRow>(
      `SELECT id, argMax((name, hash, toString(created_ms), toString(revoked_ms), rate_per_min, burst, scope), ver) AS r FROM api_keys ${where} GROUP BY id ORDER BY id`,
    )
    return rows.map(({ id, r }) => ({
      id: Number(id),
      name: r[0],
      hash: r[1],
      createdMs: Number(r[2]),
      revokedMs: r[3] === null ? null : Number(r[3]),
      ratePerMin: r[4],
      burst: r[5],
      scope: isKeyScope(r[6]) ? r[6] : 'read',
    }))
  }

  async #put(k: ApiKeyRecord): Promise<void> {
    const row = [k.id, k.name, k.hash, k.createdMs, k.revokedMs, k.ratePerMin, k.burst, newImportId(), k.scope]
    await this.#writer.insert('api_keys', COLUMNS, 'RowBinary', encodeRows(TYPES, [row]))
    await this.#version.reload()
  }

  async createKey(key: {
    name: string
    hash: string
    ratePerMin?: number | null
    burst?: number | null
    scope?: KeyScope
  }): Promise<ApiKeyRecord> {
    if (await this.findKey(key.hash)) throw new Error('a key with this hash exists already')
    let id = newKeyId()
    while (await this.#byId(id)) id = newKeyId()
    const record: ApiKeyRecord = {
      id,
      name: key.name,
      hash: key.hash,
      createdMs: Date.now(),
      revokedMs: null,
      ratePerMin: key.ratePerMin ?? null,
      burst: key.burst ?? null,
      scope: key.scope ?? 'read',
    }
    await this.#put(record)
    return record
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return this.#select('')
  }

  async findKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return (await this.#select(`WHERE hash = ${sql.str(hash)}`))[0]
  }

  async #byId(id: number): Promise<ApiKeyRecord | undefined> {
    if (!Number.isSafeInteger(id) || id < 0) return undefined
    return (await this.#select(`WHERE id = ${sql.int(id)}`))[0]
  }

  async revokeKey(id: number): Promise<boolean> {
    const k = await this.#byId(id)
    if (!k) return false
    if (k.revokedMs === null) await this.#put({ ...k, revokedMs: Date.now() })
    return true
  }

  async setKeyRate(id: number, ratePerMin: number | null, burst: number | null): Promise<boolean> {
    const k = await this.#byId(id)
    if (!k) return false
    await this.#put({ ...k, ratePerMin, burst })
    return true
  }

  async keysVersion(): Promise<string> {
    this.#health.signal()
    return this.#version.current()
  }

  async check(): Promise<void> {
    await this.#meta.rows('SELECT count() FROM api_keys')
  }

  async close(): Promise<void> {
    this.#version.stop()
  }
}

/**
 * A random id in [1, 2^32) (the column is UInt32): two processes creating keys at once pick the
 * same one with odds 2^-32 (max(id)+1 always collided), and a taken id is skipped before use.
 */
export function newKeyId(): number {
  return randomInt(1, 2 ** 32)
}
