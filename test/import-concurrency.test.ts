// Imports against live readers: a reader process sees the old or the new data, never part of a batch;
// an import killed mid-way leaves the store as it was.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { MARKETS } from '../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../src/domain/time-zone.js'
import { dumpStore, runMdq, spawnMdq, tempDir } from './helpers/store-files.js'
import { repoRoot } from './helpers/shared-data.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** A 1m CSV of `days` CN trading days for one symbol, every bar with volume `volume`. */
function minuteCsv(path: string, symbol: string, days: number, volume: number): number {
  const sh = MARKETS.SH
  const lines = ['symbol,time,open,high,low,close,volume']
  let n = 0
  for (let d = daysFromCivil(2015, 1, 5), left = days; left > 0; d++) {
    if (isoWeekday(d) >= 5) continue
    left--
    const midnight = sh.zone.midnightUtc(d)
    for (const s of sh.sessions) for (let m = s.open; m < s.close; m++, n++) lines.push(`${symbol},${midnight + m * 60_000},10,10.02,9.98,10.01,${volume}`)
  }
  writeFileSync(path, lines.join('\n') + '\n')
  return n
}

describe('imports while others read', () => {
  it('a concurrent reader process sees either the old or the new data, never a mix of one batch', async () => {
    const db = join(dir, 'live.db')
    const n = minuteCsv(join(dir, 'v1.csv'), '600000.SH', 800, 1)
    minuteCsv(join(dir, 'v2.csv'), '600000.SH', 800, 2)
    assert.equal(runMdq(['--db', db, 'import', 'bars', join(dir, 'v1.csv'), '--period', '1m']).status, 0)
    // The reader sums the volume of all bars over and over, in its own process.
    const reader = spawn(process.execPath, ['--input-type=module', '-e', `
      const { SqliteMarketStore } = await import(${JSON.stringify(join(repoRoot(), 'dist/src/store/sqlite/sqlite-market-store.js'))})
      const store = SqliteMarketStore.open(${JSON.stringify(db)}, { readonly: true })
      const seen = new Set()
      const until = Date.now() + 20000
      while (Date.now() < until) {
        const bars = await store.readBars({ symbol: '600000.SH', period: '1m', limit: 1e7 })
        let v = 0; for (const x of bars.volume) v += x
        seen.add(bars.volume.length + ':' + v)
        if (seen.has('${n}:${2 * n}')) break
      }
      console.log(JSON.stringify([...seen]))`], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    reader.stdout.on('data', (d) => (out += d))
    await sleep(300)
    const imported = runMdq(['--db', db, 'import', 'bars', join(dir, 'v2.csv'), '--period', '1m'])
    assert.equal(imported.status, 0, imported.stderr)
    await new Promise((resolve) => reader.on('close', resolve))
    const seen = JSON.parse(out) as string[]
    assert.deepEqual(seen.filter((s) => s !== `${n}:${n}` && s !== `${n}:${2 * n}`), [], `only old or new totals: ${out}`)
    assert.ok(seen.includes(`${n}:${2 * n}`), 'the reader saw the new data without reopening')
  })

  it('killing an import mid-way leaves the store exactly as before', async () => {
    const db = join(dir, 'killed.db')
    minuteCsv(join(dir, 'base.csv'), '600519.SH', 20, 5)
    assert.equal(runMdq(['--db', db, 'import', 'bars', join(dir, 'base.csv'), '--period', '1m']).status, 0)
    const before = dumpStore(db)
    minuteCsv(join(dir, 'big.csv'), '600519.SH', 4000, 7)
    const child = spawnMdq(['--db', db, 'import', 'bars', join(dir, 'big.csv'), '--period', '1m'])
    const exited = new Promise((resolve) => child.on('exit', resolve))
    // Wait until the import has written into the WAL, then kill it hard.
    const wal = `${db}-wal`
    const t0 = Date.now()
    while (!(existsSync(wal) && statSync(wal).size > 2_000_000) && Date.now() - t0 < 30_000) await sleep(5)
    assert.ok(statSync(wal).size > 2_000_000, 'the import was writing when killed')
    child.kill('SIGKILL')
    await exited
    assert.equal(child.signalCode, 'SIGKILL')
    assert.equal(dumpStore(db), before)
  })
})
