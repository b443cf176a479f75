// A damaged store is detected, never served: a flipped byte in a chunk, a wrong count column or a
// damaged page gives a 503 {code, message} for the query that reads it and a 503 on /readyz.
import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { closeSync, copyFileSync, openSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { demoDb, getJson, startServer, type KlinesData, type TestServer } from '../helpers/server.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
let demo: string
before(async () => {
  demo = await demoDb(dir)
})
after(cleanup)

let copies = 0
/** A copy of the demo store, changed by `damage` through a connection of its own, served by mdq. */
async function damagedServer(damage: (db: Database.Database, path: string) => void): Promise<TestServer> {
  const path = join(dir, `copy-${++copies}.db`)
  copyFileSync(demo, path)
  const db = new Database(path)
  try {
    damage(db, path)
  } finally {
    db.close()
  }
  return startServer(path)
}

/** The newest daily chunk of 600519.SH: every query of its latest bars reads it. */
const NEWEST =
  "symbol = '600519.SH' AND period = '1d' AND start_ms = (SELECT max(start_ms) FROM chunks WHERE symbol = '600519.SH' AND period = '1d')"

async function assertDamaged(server: TestServer, path = '/v1/klines?symbol=600519.SH&count=100') {
  const r = await getJson<{ code: number; message: string; data?: KlinesData }>(server.url + path, {
    headers: { 'X-API-Key': server.key },
  })
  assert.equal(r.status, 503, JSON.stringify(r.body).slice(0, 300))
  assert.equal(r.body.code, 503)
  assert.match(r.body.message, /The store is damaged/)
  const ready = await getJson<{ checks: { store: string } }>(`${server.url}/readyz`)
  assert.equal(ready.status, 503)
  assert.equal(ready.body.checks.store, 'unreadable')
}

describe('a damaged store', () => {
  it('a healthy copy serves and is ready (the baseline of the cases below)', async () => {
    const server = await damagedServer(() => {})
    try {
      const r = await getJson<{ data: KlinesData }>(`${server.url}/v1/klines?symbol=600519.SH&count=100`, {
        headers: { 'X-API-Key': server.key },
      })
      assert.equal(r.status, 200)
      assert.equal(r.body.data.close.length, 100)
      assert.equal((await getJson(`${server.url}/readyz`)).status, 200)
    } finally {
      await server.close()
    }
  })

  it('one flipped byte inside a chunk: klines answers 503 instead of wrong prices; /readyz 503', async () => {
    const server = await damagedServer((db) => {
      const { data } = db.prepare<[], { data: Buffer }>(`SELECT data FROM chunks WHERE ${NEWEST}`).get()!
      data[Math.floor(data.length / 2)] ^= 0x04
      db.prepare(`UPDATE chunks SET data = ? WHERE ${NEWEST}`).run(data)
    })
    try {
      await assertDamaged(server)
    } finally {
      await server.close()
    }
  })

  it('a corrupt count column: klines answers 503 instead of thousands of zero bars; /readyz 503', async () => {
    const server = await damagedServer((db) =>
      db.prepare(`UPDATE chunks SET count = count + 9000 WHERE ${NEWEST}`).run(),
    )
    try {
      await assertDamaged(server, '/v1/klines?symbol=600519.SH&count=10000')
    } finally {
      await server.close()
    }
  })

  it('/readyz finds a damaged chunk before any query has read it', async () => {
    const server = await damagedServer((db) => {
      const { data } = db
        .prepare<[], { data: Buffer }>(
          "SELECT data FROM chunks WHERE symbol = 'AAPL.US' AND period = '1d' ORDER BY start_ms LIMIT 1",
        )
        .get()!
      data[data.length - 1] ^= 0x01
      db.prepare(
        "UPDATE chunks SET data = ? WHERE symbol = 'AAPL.US' AND period = '1d' AND start_ms = (SELECT min(start_ms) FROM chunks WHERE symbol = 'AAPL.US' AND period = '1d')",
      ).run(data)
    })
    try {
      assert.equal((await getJson(`${server.url}/readyz`)).status, 503)
      await assertDamaged(server, '/v1/klines?symbol=AAPL.US&count=10000')
    } finally {
      await server.close()
    }
  })

  it('damaged pages of the file: 503 with {code, message} on klines and on /readyz, no crash', async () => {
    const server = await damagedServer((db, path) => {
      db.pragma('wal_checkpoint(TRUNCATE)')
      db.pragma('journal_mode = DELETE')
      const size = statSync(path).size
      const fd = openSync(path, 'r+')
      try {
        // Garbage over the second half of the file, where the chunk pages are (the header stays).
        const junk = Buffer.alloc(Math.floor(size / 2), 0xa5)
        writeSync(fd, junk, 0, junk.length, size - junk.length)
      } finally {
        closeSync(fd)
      }
    })
    try {
      const ready = await getJson<{ code: number; message: string }>(`${server.url}/readyz`)
      assert.equal(ready.status, 503)
      assert.equal(ready.body.code, 503)
      const r = await getJson<{ code: number; message: string }>(
        `${server.url}/v1/klines?symbol=600519.SH&count=10000`,
        { headers: { 'X-API-Key': server.key } },
      )
      assert.ok(
        r.status >= 500 && r.status < 600 && r.body.code === r.status && typeof r.body.message === 'string',
        JSON.stringify(r.body).slice(0, 300),
      )
    } finally {
      await server.close()
    }
  })
})
