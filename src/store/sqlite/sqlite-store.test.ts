import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { runStoreContract } from '../store.contract.js'
import { MIGRATIONS } from './schema.js'
import { SqliteStore } from './sqlite-store.js'

const dir = mkdtempSync(join(tmpdir(), 'mdq-store-'))
after(() => rmSync(dir, { recursive: true, force: true }))

runStoreContract('sqlite file', async () => SqliteStore.open(join(dir, 'contract.db')))
runStoreContract('sqlite :memory:', async () => SqliteStore.open(':memory:'))

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

  it('migration 3 keeps the instruments of an older store, with name_en and lot_size null', async () => {
    const path = join(dir, 'v2.db')
    const Database = (await import('better-sqlite3')).default
    const db = new Database(path)
    for (const [v, sql] of MIGRATIONS.slice(0, 2).entries()) {
      db.exec(sql)
      db.pragma(`user_version = ${v + 1}`)
    }
    db.prepare("INSERT INTO instruments (symbol, code, exchange, name) VALUES ('600000.SH', '600000', 'SH', 'Pudong')").run()
    db.close()
    const store = SqliteStore.open(path)
    const [i] = await store.readInstruments(['600000.SH'])
    assert.deepEqual([i.name, i.nameEn, i.lotSize], ['Pudong', null, null])
    assert.deepEqual(await store.readUniverses(), [])
    await store.close()
  })
})
