// Keys live apart from the market data: while an import holds the store's write lock, `mdq keys`
// creates and revokes keys at once, and a running `mdq serve` honours them before the import ends.
// The import reads a FIFO the test holds open, so "while it runs" is an ordering, not a stopwatch.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { demoDb } from '../helpers/server.js'
import { spawnServe } from '../helpers/serve-process.js'
import { MDQ_BIN, runMdq, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** Whether another connection holds the store's write lock (an open import transaction). */
function writeLocked(path: string): boolean {
  const db = new Database(path, { timeout: 0 })
  try {
    db.exec('BEGIN IMMEDIATE')
    db.exec('ROLLBACK')
    return false
  } catch (err) {
    if (err instanceof Database.SqliteError && err.code === 'SQLITE_BUSY') return true
    throw err
  } finally {
    db.close()
  }
}

/** CSV lines of 1m bars of one CN symbol, `days` trading days from 2010-01-04. */
function* minuteRows(symbol: string, days: number): Generator<string> {
  const sh = MARKETS.SH
  for (let d = daysFromCivil(2010, 1, 4), left = days; left > 0; d++) {
    if (isoWeekday(d) >= 5) continue
    left--
    const midnight = sh.zone.midnightUtc(d)
    for (const s of sh.sessions)
      for (let m = s.open; m < s.close; m++) yield `${symbol},${midnight + m * 60_000},10,10.02,9.98,10.01,7\n`
  }
}

describe('keys while an import runs', () => {
  it('a key created and one revoked with mdq keys count on a running server before the import into the same store finishes', async () => {
    const db = await demoDb(dir)
    const oldKey = runMdq(['--db', db, 'keys', 'create', '--name', 'to-revoke']).stdout.trim()
    const server = await spawnServe(['--db', db])
    try {
      const klines = (key: string) =>
        fetch(`${server.base}/v1/klines?symbol=600519.SH&count=1`, { headers: { 'X-API-Key': key } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        )
      assert.equal(await klines(oldKey), 200)

      const fifo = join(dir, 'bars.fifo')
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo')
      const importer = spawn(process.execPath, [MDQ_BIN(), '--db', db, 'import', 'bars', fifo, '--period', '1m'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let importOut = ''
      importer.stdout.on('data', (d) => (importOut += d))
      importer.stderr.on('data', (d) => (importOut += d))
      const importExit = new Promise<number | null>((resolve) => importer.once('exit', (code) => resolve(code)))
      const feed = createWriteStream(fifo)
      const write = (s: string) =>
        new Promise<void>((resolve, reject) => feed.write(s, (err) => (err ? reject(err) : resolve())))
      await write('symbol,time,open,high,low,close,volume\n')
      // 144,000 rows: two blocks of 65,536 already written into the open transaction.
      let batch = ''
      for (const row of minuteRows('601988.SH', 600)) {
        batch += row
        if (batch.length > 1 << 20) {
          await write(batch)
          batch = ''
        }
      }
      await write(batch)
      const t0 = Date.now()
      while (!writeLocked(db) && Date.now() - t0 < 60_000) await sleep(20)
      assert.ok(writeLocked(db), `the import holds the store's write lock: ${importOut}`)

      const id = /^(\d+)\tto-revoke/m.exec(runMdq(['--db', db, 'keys', 'list']).stdout)![1]
      const revoked = runMdq(['--db', db, 'keys', 'revoke', id])
      assert.equal(revoked.status, 0, revoked.stderr)
      const created = runMdq(['--db', db, 'keys', 'create', '--name', 'during-import'])
      assert.equal(created.status, 0, created.stderr)
      const newKey = created.stdout.trim()
      assert.equal(await klines(oldKey), 401)
      assert.equal(await klines(newKey), 200)
      assert.equal(importer.exitCode, null, 'the import is still running')
      assert.ok(writeLocked(db), 'and still holds the write lock')

      feed.end()
      assert.equal(await importExit, 0, importOut)
      assert.match(importOut, /imported bars: 144,000 rows/)
      const bars = await fetch(`${server.base}/v1/klines?symbol=601988.SH&period=1m&count=10`, {
        headers: { 'X-API-Key': newKey },
      })
      assert.equal(bars.status, 200)
      assert.equal(((await bars.json()) as { data: { timestamp: number[] } }).data.timestamp.length, 10)
    } finally {
      await server.stop()
    }
  })
})
