// import bars --replace over a file larger than one write block, its rows out of order: the
// replaced range is the file's whole range per symbol, however the blocks fall.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { MARKETS } from '../domain/market.js'
import { daysFromCivil, isoWeekday } from '../domain/time-zone.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'
import { tempDir } from '../../test/helpers/store-files.js'
import { importFile } from './import-file.js'
import type { BarImportOptions } from './bars-import.js'

const { dir, cleanup } = tempDir()
after(cleanup)
const minute: BarImportOptions = {
  period: '1m',
  stamp: 'start',
  priceScale: 1,
  outsideSessions: 'abort',
  deriveExFactors: false,
}
const sh = MARKETS.SH

/** The local day numbers of `n` CN trading days from 2016-01-04. */
const days = (() => {
  const out: number[] = []
  for (let d = daysFromCivil(2016, 1, 4); out.length < 400; d++) if (isoWeekday(d) < 5) out.push(d)
  return out
})()
const minutesOf = (day: number) =>
  sh.sessions.flatMap((s) =>
    Array.from({ length: s.close - s.open }, (_, k) => sh.zone.midnightUtc(day) + (s.open + k) * 60_000),
  )
const csv = (name: string, dayIdx: readonly number[], volume: number) => {
  const lines = ['symbol,time,open,high,low,close,volume']
  for (const i of dayIdx) for (const t of minutesOf(days[i])) lines.push(`600000.SH,${t},10,10,10,10,${volume}`)
  writeFileSync(join(dir, name), lines.join('\n') + '\n')
  return join(dir, name)
}
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, k) => a + k)

it('--replace over several blocks in any order replaces exactly [first, last] of the file, gaps between blocks included', async () => {
  const store = SqliteMarketStore.open(join(dir, 'replace.db'))
  try {
    await importFile(store, 'bars', csv('stored.csv', range(0, 399), 1), minute)
    // Days 100..379 (67,200 rows: the first block of 65,536 is written before the rest is read), then
    // days 79 down to 40 without day 60: the second block reaches below the first one's range,
    // leaving days 80..99 between them, which the file's range covers and so replaces with nothing.
    const early = range(40, 79)
      .filter((i) => i !== 60)
      .reverse()
    const file = csv('fix.csv', [...range(100, 379), ...early], 2)
    const summary = await importFile(store, 'bars', file, { ...minute, replace: true })
    assert.equal(summary.rows, (280 + 39) * 240)
    assert.equal(summary.replaced, (379 - 40 + 1) * 240, 'every stored bar of days 40..379, counted once')
    const bars = await store.readBars({ symbol: '600000.SH', period: '1m', limit: 1e7 })
    const expectedDays = [
      ...range(0, 39).map((i) => [i, 1]),
      ...[...early.reverse(), ...range(100, 379)].map((i) => [i, 2]),
      ...range(380, 399).map((i) => [i, 1]),
    ]
    const expected = expectedDays.flatMap(([i, v]) => minutesOf(days[i]).map((t) => [t, v]))
    assert.equal(bars.timestamp.length, expected.length)
    assert.deepEqual(
      Array.from(bars.timestamp, (t, k) => [t, bars.volume[k]]),
      expected,
    )
  } finally {
    await store.close()
  }
})
