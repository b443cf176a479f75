// `--format lean` on LEAN's Data folder files (../shared/data/us-lean/README.md), zipped as LEAN
// ships them (daily/<t>.zip, minute/<t>/<yyyyMMdd>_trade.zip) and as the CSVs inside: bars against
// the files, factor-file events against Alpha Vantage's dividends and splits.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe } from 'node:test'
import { barCount } from '../../src/domain/bars.js'
import { MARKETS } from '../../src/domain/market.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { data, pythonLibs, requires } from '../helpers/requirements.js'
import { sharedPath } from '../helpers/shared-data.js'
import { dumpStore, runMdq, tempDir } from '../helpers/store-files.js'
import { AV, readAlphaVantage } from '../reference/alphavantage.js'
import { LEAN, LEAN_MINUTE_DAYS, readFactorFile, readLeanBars, readLeanMinuteDay } from '../reference/lean.js'

const NY = MARKETS.US.zone
const { dir, cleanup } = tempDir()
after(cleanup)
const db = join(dir, 'lean.db')
const need = requires(data(LEAN), data(AV), pythonLibs('zipfile'))

/** A zip of one LEAN CSV under LEAN's names, made by Python's zipfile (not by the code under test). */
function leanZip(zipPath: string, csv: string, entry: string): string {
  mkdirSync(join(zipPath, '..'), { recursive: true })
  const py =
    'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[2], sys.argv[3])'
  const r = spawnSync('/usr/bin/python3', ['-c', py, zipPath, csv, entry], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  return zipPath
}

function mdqOk(args: string[]): string {
  const r = runMdq(['--db', db, ...args])
  assert.equal(r.status, 0, r.stderr)
  return r.stdout
}

async function stored<T>(read: (store: SqliteMarketStore) => Promise<T>): Promise<T> {
  const store = SqliteMarketStore.open(db)
  try {
    return await read(store)
  } finally {
    await store.close()
  }
}

describe('--format lean bars', () => {
  for (const ticker of ['aapl', 'spy'] as const) {
    need.it(
      `${ticker.toUpperCase()}.US daily from daily/${ticker}.zip: every bar as the file has it, prices / 10000`,
      async () => {
        const zip = leanZip(
          join(dir, 'Data/equity/usa/daily', `${ticker}.zip`),
          sharedPath(`${LEAN}/daily/${ticker}.csv`),
          `${ticker}.csv`,
        )
        mdqOk(['import', 'bars', zip, '--format', 'lean'])
        const expected = readLeanBars('daily', ticker)
        const bars = await stored((s) =>
          s.readBars({ symbol: `${ticker.toUpperCase()}.US`, period: '1d', limit: 100_000 }),
        )
        assert.equal(barCount(bars), barCount(expected))
        for (const f of ['timestamp', 'open', 'high', 'low', 'close', 'volume'] as const)
          assert.deepEqual(Array.from(bars[f]), Array.from(expected[f]), `${ticker} ${f}`)
      },
    )
  }

  need.it(
    'SPY minutes from minute/spy/<day>_trade.zip: the regular session as the files have it; 2013-10-04 sums to 84,960,871 shares',
    async () => {
      for (const ymd of LEAN_MINUTE_DAYS.spy) {
        const csv = sharedPath(`${LEAN}/minute/spy/${ymd}_spy_minute_trade.csv`)
        const zip = leanZip(
          join(dir, 'Data/equity/usa/minute/spy', `${ymd}_trade.zip`),
          csv,
          `${ymd}_spy_minute_trade.csv`,
        )
        const day = readLeanMinuteDay('spy', ymd)
        const regular = day.filter((r) => r.minute >= 570 && r.minute < 960)
        assert.match(
          mdqOk(['import', 'bars', zip, '--format', 'lean', '--outside-sessions', 'skip']),
          new RegExp(`\\(${day.length - regular.length} skipped outside sessions\\)`),
        )
        const from = regular[0].timestamp
        const bars = await stored((s) =>
          s.readBars({ symbol: 'SPY.US', period: '1m', fromMs: from, toMs: from + 86_400_000, limit: 1000 }),
        )
        assert.deepEqual(
          Array.from(bars.timestamp),
          regular.map((r) => r.timestamp),
          ymd,
        )
        for (const f of ['open', 'high', 'low', 'close', 'volume'] as const)
          assert.deepEqual(
            Array.from(bars[f]),
            regular.map((r) => r[f]),
            `${ymd} ${f}`,
          )
        if (ymd === '20131004')
          assert.equal(
            bars.volume.reduce((a, b) => a + b, 0),
            84_960_871,
          )
      }
    },
  )

  need.it('AAPL minutes from the plain CSV, named as in LEAN, give the same bars as its zip', async () => {
    const ymd = LEAN_MINUTE_DAYS.aapl[0]
    mdqOk([
      'import',
      'bars',
      sharedPath(`${LEAN}/minute/aapl/${ymd}_aapl_minute_trade.csv`),
      '--format',
      'lean',
      '--outside-sessions',
      'skip',
    ])
    const regular = readLeanMinuteDay('aapl', ymd).filter((r) => r.minute >= 570 && r.minute < 960)
    const bars = await stored((s) => s.readBars({ symbol: 'AAPL.US', period: '1m', limit: 1000 }))
    assert.deepEqual(
      Array.from(bars.close),
      regular.map((r) => r.close),
    )
    assert.deepEqual(
      Array.from(bars.volume),
      regular.map((r) => r.volume),
    )
  })
})

describe('--format lean factor files', () => {
  for (const ticker of ['AAPL', 'SPY'] as const) {
    need.it(
      `${ticker}: one event on each of Alpha Vantage's dividend and split ex-dates, dividends as the README derives them`,
      async () => {
        const lower = ticker.toLowerCase()
        mdqOk(['import', 'ex-factors', sharedPath(`${LEAN}/factor_files/${lower}.csv`), '--format', 'lean'])
        const events = await stored(async (s) => (await s.readExFactors([`${ticker}.US`])).get(`${ticker}.US`) ?? [])
        const av = readAlphaVantage(ticker)
        const [first, last] = [av[0].day, av[av.length - 1].day]
        const actions = av.filter((r) => r.dividend > 0 || r.split !== 1)
        const inRange = events.filter((e) => NY.localDay(e.timestamp) > first && NY.localDay(e.timestamp) <= last)
        assert.deepEqual(
          inRange.map((e) => NY.isoDate(e.timestamp)),
          actions.map((r) => r.date),
        )
        assert.equal(actions.length, ticker === 'AAPL' ? 38 : 85) // the README's counts
        // The factor row before an ex-date carries the reference price: dividend = ref x (1 - 1/f) (README).
        const factors = readFactorFile(lower)
        inRange.forEach((e, i) => {
          const action = actions[i]
          if (action.split !== 1) {
            assert.ok(
              Math.abs(e.exFactor / action.split - 1) < 3e-6, // measured 2.2e-6 (2000-06-21): LEAN's factors carry 7 digits
              `${action.date} split ${action.split}: ${e.exFactor}`,
            )
            return
          }
          const row = factors.filter((r) => r.day < NY.localDay(e.timestamp)).at(-1)!
          // Measured: AAPL within 3.8e-5 of Alpha Vantage's amount, SPY within 1.0e-2 (2013-12-20: 0.99 vs 0.9802).
          const dividend = row.referencePrice * (1 - 1 / e.exFactor)
          const tolerance = ticker === 'AAPL' ? 5e-5 : 1.1e-2
          assert.ok(
            Math.abs(dividend / action.dividend - 1) <= tolerance,
            `${action.date}: ${dividend} vs ${action.dividend}`,
          )
        })
        if (ticker === 'AAPL') assert.equal(events.find((e) => NY.isoDate(e.timestamp) === '2020-08-31')?.exFactor, 4)
      },
    )
  }
})

describe('--format lean refusals (nothing stored)', () => {
  const refused = (args: string[], message: RegExp) => {
    const before = dumpStore(db)
    const r = runMdq(['--db', db, ...args])
    assert.equal(r.status, 1)
    assert.match(r.stderr, message)
    assert.equal(dumpStore(db), before)
  }
  need.it('hour bars', () =>
    refused(
      ['import', 'bars', sharedPath(`${LEAN}/hour/spy.csv`), '--format', 'lean'],
      /spy\.csv:1:1: a bar at 09:00: LEAN hour bars/,
    ),
  )
  need.it('a daily file given --period 1m', () =>
    refused(
      ['import', 'bars', sharedPath(`${LEAN}/daily/spy.csv`), '--format', 'lean', '--period', '1m'],
      /this LEAN file holds daily bars, not --period 1m/,
    ),
  )
  need.it("another vendor's file names LEAN's row", () =>
    refused(
      ['import', 'bars', sharedPath('cn/baostock_raw_daily/sh.600000.csv'), '--format', 'lean'],
      /sh\.600000\.csv:1:1: a LEAN daily row has 6 fields, yyyyMMdd HH:mm,open,high,low,close,volume \(prices in deci-cents\); this one has 19/,
    ),
  )
})
