/** @module An import's memory is bounded by its buffers, not by the file: a market-wide minute file, rows interleaved by time. */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { barCount } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { daysFromCivil, isoWeekday } from '../../src/domain/time-zone.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { runWithPeakRss } from '../helpers/peak-rss.js'
import { MDQ_BIN, tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)

const SYMBOLS = 400
const DAYS = 20
const ROWS = SYMBOLS * DAYS * 240 // 1.92M rows, 123 MB as 8 float64 columns: all held at once by an import that buffers whole symbols
const LIMIT_MB = 300 // this import peaks near 220 MB (SQLite page cache and V8 included); buffering whole symbols would take over 360 MB

/** Every minute of DAYS trading days, each minute for all symbols (how a market-wide feed is sorted). */
async function writeMarketFile(path: string): Promise<void> {
  const out = createWriteStream(path)
  out.write('symbol,time,open,high,low,close,volume,amount\n')
  const sh = MARKETS.SH
  for (let d = daysFromCivil(2024, 1, 1), days = 0; days < DAYS; d++) {
    if (isoWeekday(d) >= 5) continue
    days++
    const midnight = sh.zone.midnightUtc(d)
    for (const session of sh.sessions) {
      for (let m = session.open; m < session.close; m++) {
        const t = midnight + m * 60_000
        let lines = ''
        for (let s = 0; s < SYMBOLS; s++) {
          const p = 10 + s / 100 + (m % 7) / 100
          lines += `${600000 + s}.SH,${t},${p.toFixed(2)},${(p + 0.02).toFixed(2)},${(p - 0.01).toFixed(2)},${(p + 0.01).toFixed(2)},${100 + s},${(100 + s) * p * 100}\n`
        }
        if (!out.write(lines)) await once(out, 'drain')
      }
    }
  }
  out.end()
  await once(out, 'finish')
}

it(`imports ${ROWS.toLocaleString('en-US')} interleaved 1m rows of ${SYMBOLS} symbols under ${LIMIT_MB} MB of peak RSS`, async () => {
  const csv = join(dir, 'market.csv')
  const db = join(dir, 'store.db')
  await writeMarketFile(csv)
  // A small V8 heap: what is left to grow is the import's own buffers (ArrayBuffers live outside it).
  const run = await runWithPeakRss(
    ['--max-old-space-size=64'],
    [MDQ_BIN(), '--db', db, 'import', 'bars', csv, '--period', '1m'],
  )
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, new RegExp(`imported bars: ${ROWS.toLocaleString('en-US')} rows`))
  const peakMb = run.peakRssBytes / 2 ** 20
  assert.ok(peakMb < LIMIT_MB, `peak RSS ${peakMb.toFixed(0)} MB is over ${LIMIT_MB} MB`)
  // Everything arrived, flushed in pieces: every bar of the first and last symbols, values as written.
  const store = SqliteMarketStore.open(db)
  try {
    for (const s of [0, SYMBOLS - 1]) {
      const bars = await store.readBars({ symbol: `${600000 + s}.SH`, period: '1m', limit: ROWS })
      assert.equal(barCount(bars), DAYS * 240)
      const m = MARKETS.SH.zone.localMinute(bars.timestamp[0])
      assert.equal(bars.close[0], Number((10 + s / 100 + (m % 7) / 100 + 0.01).toFixed(2)))
      assert.equal(bars.volume[DAYS * 240 - 1], 100 + s)
    }
  } finally {
    await store.close()
  }
})
