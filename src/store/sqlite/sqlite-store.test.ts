import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { SqliteStore } from './sqlite-store.js'

const dir = mkdtempSync(join(tmpdir(), 'mdq-store-'))
after(() => rmSync(dir, { recursive: true, force: true }))

// The Store contract (test/store/store-contract.ts) is written against the MarketStore/KeyStore seam;
// the seam branch runs it on SQLite (this branch adds the ClickHouse backend only).

describe('sqlite store specifics', () => {
  it('migrates a new file to the current schema version and refuses a newer one', async () => {
    const path = join(dir, 'schema.db')
    const store = SqliteStore.open(path)
    await store.close()
    const Database = (await import('better-sqlite3')).default
    const db = new Database(path)
    db.pragma('user_version = 99')
    db.close()
    assert.throws(() => SqliteStore.open(path), /schema version 99 is newer/)
  })
})
