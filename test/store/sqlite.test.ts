// The store contract on SQLite (a file, and :memory:), plus what is SQLite's own: schema versions, keys moved out of an old store.
import assert from 'node:assert/strict'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { openStores } from '../../src/store/backends.js'
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.js'
import { KEY_MIGRATIONS, MIGRATIONS } from '../../src/store/sqlite/schema.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { builderState } from '../helpers/builder-state.js'
import { tempDir } from '../helpers/store-files.js'
import { runStoreContract } from './store-contract.js'

const { dir, cleanup } = tempDir('mdq-store-')
after(cleanup)

runStoreContract({
  name: 'sqlite file',
  open: () => openStores({ store: `sqlite:${join(dir, 'contract.db')}`, create: true }),
})
runStoreContract({
  name: 'sqlite :memory:',
  open: async () => ({ market: SqliteMarketStore.open(':memory:'), keys: SqliteKeyStore.open(':memory:') }),
  skip: {
    liveImport:
      'a :memory: store is one connection of one process: its readers share the writer transaction, and no other instance can open it',
  },
})

describe('sqlite store specifics', () => {
  it('migrates a new file to the current schema version and refuses a newer one', async () => {
    const path = join(dir, 'schema.db')
    const store = SqliteMarketStore.open(path)
    await store.close()
    const db = new Database(path)
    db.pragma('user_version = 99')
    db.close()
    assert.throws(() => SqliteMarketStore.open(path), /schema version 99 is newer/)
  })

  it("moves an old store's keys into the keys file once, ids kept, and new ids continue after them", async () => {
    const path = join(dir, 'old.db')
    // A store as the previous schema (version 2) left it: keys in its own api_keys table.
    const old = new Database(path)
    old.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO meta VALUES ('generation', 3), ('store_id', 42);
      CREATE TABLE chunks (symbol TEXT NOT NULL, period TEXT NOT NULL, start_ms INTEGER NOT NULL, first_ms INTEGER NOT NULL, last_ms INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (symbol, period, start_ms)) WITHOUT ROWID;
      CREATE TABLE instruments (symbol TEXT PRIMARY KEY, code TEXT NOT NULL, exchange TEXT NOT NULL, name TEXT, type TEXT, listing_date TEXT, tick_size REAL, total_shares REAL, float_shares REAL, limit_up REAL, limit_down REAL) WITHOUT ROWID;
      CREATE TABLE ex_factors (symbol TEXT NOT NULL, ts INTEGER NOT NULL, ex_factor REAL NOT NULL, PRIMARY KEY (symbol, ts)) WITHOUT ROWID;
      CREATE TABLE api_keys (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, created_ms INTEGER NOT NULL, revoked_ms INTEGER, rate_per_min REAL, burst REAL);
      INSERT INTO api_keys VALUES (3, 'old', '${'aa'.repeat(32)}', 1000, NULL, 60, 5), (7, 'gone', '${'bb'.repeat(32)}', 2000, 3000, NULL, NULL);
      PRAGMA user_version = 2;`)
    old.close()
    // Opened directly, the market store refuses to drop keys it has not handed over.
    assert.throws(() => SqliteMarketStore.open(path), /still holds API keys/)
    const first = await openStores({ store: path, create: false })
    assert.deepEqual(
      (await first.keys.listKeys()).map((k) => [k.id, k.name, k.ratePerMin, k.burst, k.revokedMs]),
      [
        [3, 'old', 60, 5, null],
        [7, 'gone', null, null, 3000],
      ],
    )
    assert.equal((await first.keys.createKey({ name: 'new', hash: 'cc'.repeat(32) })).id, 8)
    assert.equal(await first.market.dataVersion(), '42.3.0')
    await Promise.all([first.market.close(), first.keys.close()])
    const raw = new Database(path, { readonly: true })
    assert.deepEqual(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'api_keys'").all(), [])
    assert.equal(raw.pragma('user_version', { simple: true }), MIGRATIONS.length)
    raw.close()
    const again = await openStores({ store: path, create: false })
    assert.deepEqual(
      (await again.keys.listKeys()).map((k) => k.name),
      ['old', 'gone', 'new'],
    )
    await Promise.all([again.market.close(), again.keys.close()])
  })

  it('keys of a keys file from before scopes read only; new keys take the scope given', async () => {
    const path = join(dir, 'scopes.keys.db')
    const db = new Database(path)
    db.exec(KEY_MIGRATIONS[0])
    db.pragma('user_version = 1')
    db.prepare("INSERT INTO api_keys (name, hash, created_ms) VALUES ('old', ?, 1000)").run('ab'.repeat(32))
    db.close()
    const keys = SqliteKeyStore.open(path)
    assert.equal((await keys.findKey('ab'.repeat(32)))?.scope, 'read')
    assert.equal((await keys.createKey({ name: 'feed', hash: 'cd'.repeat(32), scope: 'ingest' })).scope, 'ingest')
    await keys.close()
  })

  it('migration 4 keeps the instruments of an older store, with name_en and lot_size null, and adds universes', async () => {
    const path = join(dir, 'v3.db')
    const db = new Database(path)
    for (const [v, sql] of MIGRATIONS.slice(0, 3).entries()) {
      db.exec(sql)
      db.pragma(`user_version = ${v + 1}`)
    }
    db.prepare(
      "INSERT INTO instruments (symbol, code, exchange, name) VALUES ('600000.SH', '600000', 'SH', 'Pudong')",
    ).run()
    db.close()
    const store = SqliteMarketStore.open(path)
    const [i] = await store.readInstruments(['600000.SH'])
    assert.deepEqual([i.name, i.nameEn, i.lotSize], ['Pudong', null, null])
    assert.deepEqual(await store.readUniverses(), [])
    await store.close()
  })

  it('migrations 8 and 10 keep the live quotes of older stores (objects, JSON arrays) readable as they were; new ones are doubles', async () => {
    const path = join(dir, 'v7.db')
    const db = new Database(path)
    for (const [v, sql] of MIGRATIONS.slice(0, 7).entries()) {
      db.exec(sql)
      db.pragma(`user_version = ${v + 1}`)
    }
    const symbol = '600000.SH'
    const other = '600004.SH'
    const { last, bar } = builderState(symbol)
    const ext = { name: 'Pudong' }
    const put = db.prepare('INSERT INTO live_quotes (symbol, ts, quote) VALUES (?, ?, ?)')
    put.run(symbol, last.timestamp, JSON.stringify({ state: { last, bar }, ext }))
    // The arrays of migration 8, written out by hand (FORMAT.md "Live data").
    put.run(
      other,
      1732699985000,
      '[[1732699985000,10.52,10.31,10.6,10.28,10.3,12345600,129876543.21],[1732699980000,10.5,10.53,10.49,10.52,23400,246012.5,12322200,129630530.71,0],{"name":"Other"}]',
    )
    db.close()
    const store = SqliteMarketStore.open(path)
    assert.deepEqual((await store.readLiveQuotes([symbol])).get(symbol), { symbol, state: { last, bar }, ext })
    assert.deepEqual((await store.readLiveQuotes([other])).get(other), {
      symbol: other,
      state: { last: { ...last, symbol: other }, bar },
      ext: { name: 'Other' },
    })
    const next = { ...last, timestamp: last.timestamp + 3000, lastPrice: 10.53 }
    const w = await store.beginWrite()
    await w.putLiveQuotes([{ symbol, state: { last: next, bar } }])
    await w.commit()
    assert.deepEqual((await store.readLiveQuotes([symbol])).get(symbol), { symbol, state: { last: next, bar } })
    await store.close()
    const raw = new Database(path, { readonly: true })
    assert.equal(raw.pragma('user_version', { simple: true }), MIGRATIONS.length)
    const row = raw.prepare('SELECT quote FROM live_quotes WHERE symbol = ?').pluck().get(symbol) as Buffer
    // Layout 1, a bar and no ext; the snapshot's timestamp and last price; the bar's `closed` last (0).
    assert.deepEqual([row.length, row[0], row[1]], [8 + 18 * 8, 1, 1])
    assert.deepEqual(
      [row.readDoubleLE(8), row.readDoubleLE(16), row.readDoubleLE(8 + 17 * 8)],
      [1732699988000, 10.53, 0],
    )
    raw.close()
  })

  it('opening without create refuses a missing or empty store file and creates nothing', async () => {
    const missing = join(dir, 'missing', 'mdq.db')
    await assert.rejects(openStores({ store: missing, create: false }), /no store at .*missing.*no such file/)
    assert.equal(existsSync(join(dir, 'missing')), false)
    const empty = join(dir, 'empty.db')
    writeFileSync(empty, '')
    await assert.rejects(
      openStores({ store: `sqlite:${empty}`, create: false }),
      /no store at .*empty\.db \(an empty file\)/,
    )
    assert.equal(statSync(empty).size, 0)
    assert.equal(existsSync(join(dir, 'empty.keys.db')), false)
  })
})
