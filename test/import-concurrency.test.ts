// Imports against live readers: a reader process sees the old or the new data, never part of a batch;
// an import killed mid-way leaves the store as it was.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { once } from 'node:events'
import { dumpStore, minuteCsv, runMdq, spawnMdq, tempDir } from './helpers/store-files.js'
import { repoRoot } from './helpers/shared-data.js'

const { dir, cleanup } = tempDir()
after(cleanup)

describe('imports while others read', () => {
  it('a concurrent reader process sees either the old or the new data, never a mix of one batch', async () => {
    const db = join(dir, 'live.db')
    const n = minuteCsv(join(dir, 'v1.csv'), '600000.SH', 800, 1)
    minuteCsv(join(dir, 'v2.csv'), '600000.SH', 800, 2)
    assert.equal(runMdq(['--db', db, 'import', 'bars', join(dir, 'v1.csv'), '--period', '1m']).status, 0)
    // The reader sums the volume of all bars over and over, in its own process, until it sees the
    // new total (the deadline only keeps a broken run from hanging; it decides nothing).
    const reader = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      const { SqliteMarketStore } = await import(${JSON.stringify(join(repoRoot(), 'dist/src/store/sqlite/sqlite-market-store.js'))})
      const store = SqliteMarketStore.open(${JSON.stringify(db)}, { readonly: true })
      const seen = new Set()
      const until = Date.now() + 300000
      while (Date.now() < until) {
        const bars = await store.readBars({ symbol: '600000.SH', period: '1m', limit: 1e7 })
        let v = 0; for (const x of bars.volume) v += x
        if (seen.size === 0) console.log('first read ' + bars.volume.length + ':' + v)
        seen.add(bars.volume.length + ':' + v)
        if (seen.has('${n}:${2 * n}')) break
      }
      console.log(JSON.stringify([...seen]))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    reader.stdout.on('data', (d) => (out += d))
    const closed = once(reader, 'close')
    while (!out.includes('first read') && reader.exitCode === null) await once(reader.stdout, 'data')
    assert.match(out, new RegExp(`first read ${n}:${n}\n`), 'the reader read the old data before the import')
    const imported = runMdq(['--db', db, 'import', 'bars', join(dir, 'v2.csv'), '--period', '1m'])
    assert.equal(imported.status, 0, imported.stderr)
    await closed
    out = out.slice(out.indexOf('\n') + 1)
    const seen = JSON.parse(out) as string[]
    assert.deepEqual(
      seen.filter((s) => s !== `${n}:${n}` && s !== `${n}:${2 * n}`),
      [],
      `only old or new totals: ${out}`,
    )
    assert.ok(seen.includes(`${n}:${2 * n}`), 'the reader saw the new data without reopening')
  })

  // Each a named checkpoint of the import's transaction (ingest/import-file.ts): before any write,
  // after the first and a later block of bars, after the instruments, just before COMMIT.
  for (const point of ['begun', 'bars:1', 'bars:3', 'instruments', 'committing']) {
    it(`killing an import at ${point} leaves the store exactly as before`, async () => {
      const db = join(dir, `killed-${point.replace(':', '-')}.db`)
      minuteCsv(join(dir, 'base.csv'), '600519.SH', 20, 5)
      assert.equal(runMdq(['--db', db, 'import', 'bars', join(dir, 'base.csv'), '--period', '1m']).status, 0)
      const before = dumpStore(db)
      const big = join(dir, 'big.csv')
      if (!existsSync(big)) minuteCsv(big, '600519.SH', 1200, 7) // 288,000 bars: 5 blocks of bars
      const child = spawnMdq(['--db', db, 'import', 'bars', big, '--period', '1m'], { MDQ_IMPORT_PAUSE_AT: point })
      const exited = once(child, 'exit')
      try {
        let err = ''
        child.stderr.on('data', (d) => (err += d))
        // The import says where it stopped, then blocks until killed: no timer decides when.
        while (!err.includes(`import paused at ${point}`) && child.exitCode === null)
          await Promise.race([once(child.stderr, 'data'), exited])
        assert.match(err, new RegExp(`import paused at ${point}`), 'the import reached the checkpoint')
      } finally {
        child.kill('SIGKILL')
        await exited
      }
      assert.equal(child.signalCode, 'SIGKILL')
      assert.equal(dumpStore(db), before)
    })
  }
})
