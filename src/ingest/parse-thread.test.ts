import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MdqError } from '../domain/errors.js'
import { MARKETS } from '../domain/market.js'
import { daysFromCivil, isoWeekday } from '../domain/time-zone.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'
import { dumpStore, tempDir, writeCsv } from '../../test/helpers/store-files.js'
import type { BarImportOptions } from './bars-import.js'
import { importFile, type ImportCheckpoint } from './import-file.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const minute: BarImportOptions = {
  period: '1m',
  stamp: 'start',
  priceScale: 1,
  outsideSessions: 'skip',
  deriveExFactors: false,
}

/** 3 symbols interleaved minute by minute (several read chunks, flushes mid-run), one row outside the sessions per day. */
function marketRows(days: number): string[] {
  const rows: string[] = []
  const sh = MARKETS.SH
  for (let d = daysFromCivil(2024, 1, 1), n = 0; n < days; d++) {
    if (isoWeekday(d) >= 5) continue
    n++
    const midnight = sh.zone.midnightUtc(d)
    rows.push(`600000.SH,${midnight + 8 * 3_600_000},1,1,1,1,1,1`)
    for (const s of sh.sessions)
      for (let m = s.open; m < s.close; m++)
        for (const [k, symbol] of ['600000.SH', '600519.SH', '000001.SZ'].entries()) {
          const p = (10 + k + (m % 13) / 100).toFixed(2)
          rows.push(
            `${symbol},${midnight + m * 60_000},${p},${p},${p},${p},${100 + m},${(Number(p) * 100 * (100 + m)).toFixed(2)}`,
          )
        }
  }
  return rows
}

async function importInto(db: string, file: string, parseThread: boolean) {
  const points: string[] = []
  const checkpoint: ImportCheckpoint = (p) => points.push(p)
  const store = SqliteMarketStore.open(db)
  try {
    const summary = await importFile(store, 'bars', file, { ...minute, parseThread }, undefined, checkpoint)
    return { summary, points }
  } finally {
    await store.close()
  }
}

describe('parsing on a worker thread', () => {
  const rows = marketRows(300) // 216,300 rows, about 13 MB: several 4 MiB read chunks
  const file = writeCsv(join(dir, 'market.csv'), 'symbol,time,open,high,low,close,volume,amount', rows)

  it('stores byte for byte what parsing inline stores, through the same writes and counts', async () => {
    const inline = await importInto(join(dir, 'inline.db'), file, false)
    const threaded = await importInto(join(dir, 'thread.db'), file, true)
    assert.equal(threaded.summary.rows, rows.length)
    assert.equal(threaded.summary.skipped, 300)
    assert.deepEqual({ ...threaded.summary, seconds: 0 }, { ...inline.summary, seconds: 0 })
    assert.deepEqual(threaded.points, inline.points)
    assert.ok(inline.points.filter((p) => p.startsWith('bars:')).length > 5, inline.points.join())
    assert.equal(
      dumpStore(join(dir, 'thread.db'), { withMeta: false }),
      dumpStore(join(dir, 'inline.db'), { withMeta: false }),
    )
  })

  it('a bad row deep in the file fails the import naming its line and column, the store as it was', async () => {
    const bad = rows.slice()
    bad[200_000] = bad[200_000].replace(/,([\d.]+),([\d.]+)$/, ',-5,$2')
    const badFile = writeCsv(join(dir, 'bad.csv'), 'symbol,time,open,high,low,close,volume,amount', bad)
    const db = join(dir, 'thread.db')
    const before = dumpStore(db)
    const err = await importInto(db, badFile, true).then(
      () => assert.fail('the import should fail'),
      (e: unknown) => e,
    )
    assert.ok(err instanceof MdqError, String(err))
    assert.equal(err.message, `${badFile}:200002:7: volume -5 is negative`)
    assert.equal(dumpStore(db), before)
  })
})
