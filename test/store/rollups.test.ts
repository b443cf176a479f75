// Stored rollups answer exactly (byte for byte) what aggregating 1m bars on read answers: every derived
// minute period, every adjust mode, windows cutting days, count limits and pages; LEAN and generated data.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ADJUSTS, type Adjust } from '../../src/domain/adjust.js'
import { allocBars, BAR_FIELDS, barCount, type Bars } from '../../src/domain/bars.js'
import type { ExFactorEvent } from '../../src/domain/ex-factors.js'
import { MARKETS, type Exchange } from '../../src/domain/market.js'
import { ROLLUP_PERIODS, type RollupPeriod } from '../../src/domain/rollups.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import type { BarQuery, MarketStore } from '../../src/store/market-store.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { arbSeed, sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { data, requires } from '../helpers/requirements.js'
import {
  LEAN,
  LEAN_MINUTE_DAYS,
  dayOfYmd,
  factorFileEvents,
  readFactorFile,
  readLeanBars,
  readLeanMinuteDay,
} from '../reference/lean.js'
import { aggregatingOnRead } from '../helpers/aggregating-on-read.js'

const US = MARKETS.US

/** Counts readBars calls per period, to show which path answered. */
function counting(store: MarketStore, seen: Map<string, number>): MarketStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'readBars')
        return (q: BarQuery) => (seen.set(q.period, (seen.get(q.period) ?? 0) + 1), target.readBars(q))
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

function assertBytesEqual(actual: Bars, expected: Bars, what: string): void {
  assert.equal(barCount(actual), barCount(expected), `${what}: bar count`)
  for (const f of BAR_FIELDS) assert.ok(bytes(actual[f]).equals(bytes(expected[f])), `${what}: ${f} differs`)
}

interface Query {
  symbol: string
  period: RollupPeriod
  adjust: Adjust
  count: number
  startTime?: number
  endTime?: number
}

/** Compares both paths on each query; returns how many answers were non-empty. */
async function compare(store: MarketStore, queries: readonly Query[]): Promise<number> {
  const seen = new Map<string, number>()
  const viaRollups = counting(store, seen)
  const onRead = aggregatingOnRead(store)
  const a = new SymbolContexts(viaRollups)
  const b = new SymbolContexts(onRead)
  let nonEmpty = 0
  for (const q of queries) {
    const ours = await readKlines(viaRollups, a, q)
    const reference = await readKlines(onRead, b, q)
    assertBytesEqual(ours, reference, JSON.stringify(q))
    if (barCount(ours)) nonEmpty++
  }
  assert.ok(
    ROLLUP_PERIODS.some((p) => (seen.get(p) ?? 0) > 0),
    'the rollups were read',
  )
  return nonEmpty
}

function minuteBars(
  rows: readonly { timestamp: number; open: number; high: number; low: number; close: number; volume: number }[],
): Bars {
  const bars = allocBars(rows.length)
  rows.forEach((r, i) => {
    bars.timestamp[i] = r.timestamp
    bars.open[i] = r.open
    bars.high[i] = r.high
    bars.low[i] = r.low
    bars.close[i] = r.close
    bars.volume[i] = r.volume
    bars.amount[i] = Math.round(r.volume * r.close * 100) / 100
    bars.prevClose[i] = NaN
  })
  return bars
}

const needLean = requires(data(LEAN))

describe('stored rollups equal aggregate-on-read', () => {
  needLean.it(
    'LEAN SPY and AAPL minutes (extended hours kept), AAPL daily bars and its 7:1 split, a made-up SPY event: every period, mode, window and page',
    async () => {
      const store = SqliteMarketStore.open(':memory:')
      try {
        const aaplDaily = readLeanBars('daily', 'aapl')
        const dailyDays = [...aaplDaily.timestamp].map((t) => US.zone.localDay(t))
        const aaplEvents = factorFileEvents(readFactorFile('aapl'), dailyDays)
        const spyEvents: ExFactorEvent[] = [{ timestamp: US.zone.midnightUtc(dayOfYmd('20131008')), exFactor: 1.37 }]
        const instrument = (symbol: string, code: string) => ({
          symbol,
          code,
          exchange: 'US' as const,
          region: 'US' as const,
          name: code,
          type: null,
          listingDate: null,
          tickSize: null,
          totalShares: null,
          floatShares: null,
          limitUp: null,
          limitDown: null,
          nameEn: null,
          lotSize: null,
        })
        await store.write({
          instruments: [instrument('SPY.US', 'SPY'), instrument('AAPL.US', 'AAPL')],
          bars: [
            {
              symbol: 'SPY.US',
              period: '1m',
              bars: minuteBars(LEAN_MINUTE_DAYS.spy.flatMap((d) => readLeanMinuteDay('spy', d))),
            },
            {
              symbol: 'AAPL.US',
              period: '1m',
              bars: minuteBars(LEAN_MINUTE_DAYS.aapl.flatMap((d) => readLeanMinuteDay('aapl', d))),
            },
            { symbol: 'AAPL.US', period: '1d', bars: aaplDaily },
          ],
          exFactors: [
            { symbol: 'SPY.US', events: spyEvents },
            { symbol: 'AAPL.US', events: aaplEvents },
          ],
        })
        assert.ok(
          aaplEvents.some((e) => e.timestamp === US.zone.midnightUtc(dayOfYmd('20140609'))),
          'the split falls inside the AAPL minute days',
        )
        const queries: Query[] = []
        for (const [symbol, days] of [
          ['SPY.US', LEAN_MINUTE_DAYS.spy],
          ['AAPL.US', LEAN_MINUTE_DAYS.aapl],
        ] as const) {
          const noon = (ymd: string, minute: number) => US.zone.midnightUtc(dayOfYmd(ymd)) + minute * 60_000
          for (const period of ROLLUP_PERIODS) {
            for (const adjust of ADJUSTS) {
              for (const count of [1, 3, 7, 50, 10_000]) queries.push({ symbol, period, adjust, count })
              // Windows cutting days, starting inside a bucket, ending inside one.
              queries.push({
                symbol,
                period,
                adjust,
                count: 10_000,
                startTime: noon(days[0], 11 * 60 + 7),
                endTime: noon(days[1], 13 * 60 + 31),
              })
              queries.push({
                symbol,
                period,
                adjust,
                count: 5,
                startTime: noon(days[0], 0),
                endTime: noon(days[days.length - 1], 10 * 60 + 2),
              })
              queries.push({ symbol, period, adjust, count: 10_000, endTime: noon(days[1], 4 * 60 + 3) })
              queries.push({
                symbol,
                period,
                adjust,
                count: 10_000,
                startTime: noon(days[days.length - 1], 19 * 60 + 59),
              })
            }
            // Pages backwards by end_time, as a client pages.
            for (const adjust of ['forward', 'backward_additive'] as const) {
              let endTime: number | undefined
              for (let page = 0; page < 6; page++) {
                queries.push({ symbol, period, adjust, count: 37, endTime })
                const viaRollups = await readKlines(store, new SymbolContexts(store), {
                  symbol,
                  period,
                  adjust,
                  count: 37,
                  endTime,
                })
                if (barCount(viaRollups) === 0) break
                endTime = viaRollups.timestamp[0] - 1
              }
            }
          }
        }
        const nonEmpty = await compare(store, queries)
        assert.ok(nonEmpty > queries.length * 0.8, `most answers hold bars (${nonEmpty} of ${queries.length})`)
      } finally {
        await store.close()
      }
    },
  )

  it('generated minutes (SH, HK, US; NaN and given prev_close; daily bars or not; events at midnights), after puts, deletes and replaces', async () => {
    const arbCase = fc.record({
      exchange: fc.constantFrom<Exchange>('SH', 'HK', 'US'),
      firstDay: fc.integer({ min: 16_000, max: 20_000 }),
      days: fc.integer({ min: 1, max: 6 }),
      seed: arbSeed,
      nanPrevClose: fc.boolean(),
      withDaily: fc.boolean(),
      holes: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 40 }),
      events: fc.array(fc.record({ day: fc.nat(), f: fc.double({ min: 0.2, max: 10, noNaN: true }) }), {
        maxLength: 3,
      }),
      del: fc.option(
        fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), len: fc.integer({ min: 1, max: 500 }) }),
      ),
      replace: fc.option(
        fc.record({
          at: fc.double({ min: 0, max: 1, noNaN: true }),
          len: fc.integer({ min: 1, max: 300 }),
          seed: arbSeed,
        }),
      ),
      queries: fc.array(
        fc.record({
          period: fc.constantFrom(...ROLLUP_PERIODS),
          adjust: fc.constantFrom(...ADJUSTS),
          count: fc.integer({ min: 1, max: 400 }),
          start: fc.option(fc.double({ min: -0.1, max: 1.1, noNaN: true })),
          end: fc.option(fc.double({ min: -0.1, max: 1.1, noNaN: true })),
        }),
        { minLength: 1, maxLength: 8 },
      ),
    })
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const market = MARKETS[c.exchange]
        const dayStarts = tradingDays(c.exchange, c.firstDay, c.days)
        const localDays = dayStarts.map((t) => market.zone.localDay(t))
        const drop = new Set(c.holes.map((h) => Math.floor(h * 1000)))
        const ts = sessionMinutes(c.exchange, dayStarts).filter((_, i) => !drop.has(i % 1000))
        const minute = walkBars(ts, c.seed)
        if (c.nanPrevClose) minute.prevClose.fill(NaN)
        const symbol = c.exchange === 'US' ? 'TEST.US' : c.exchange === 'HK' ? '00001.HK' : '600001.SH'
        const code = symbol.split('.')[0]
        const store = SqliteMarketStore.open(':memory:')
        try {
          const events = [...new Map(c.events.map((e) => [localDays[e.day % localDays.length], e.f]))]
            .map(([day, exFactor]) => ({ timestamp: market.zone.midnightUtc(day), exFactor }))
            .sort((a, b) => a.timestamp - b.timestamp)
          const daily = walkBars(dayStarts, c.seed)
          daily.prevClose.fill(NaN)
          await store.write({
            instruments: [
              {
                symbol,
                code,
                exchange: c.exchange,
                region: market.region,
                name: null,
                type: null,
                listingDate: null,
                tickSize: null,
                totalShares: null,
                floatShares: null,
                limitUp: null,
                limitDown: null,
                nameEn: null,
                lotSize: null,
              },
            ],
            bars: [
              { symbol, period: '1m', bars: minute },
              ...(c.withDaily ? [{ symbol, period: '1d' as const, bars: daily }] : []),
            ],
            exFactors: [{ symbol, events }],
          })
          const n = ts.length
          if (c.del && n) {
            const i = Math.min(n - 1, Math.floor(c.del.at * n))
            await store.write({
              deleteBars: [{ symbol, period: '1m', fromMs: ts[i], toMs: ts[Math.min(n - 1, i + c.del.len)] }],
            })
          }
          if (c.replace && n) {
            const i = Math.min(n - 1, Math.floor(c.replace.at * n))
            const part = ts.slice(i, i + c.replace.len)
            await store.write({
              deleteBars: [{ symbol, period: '1m', fromMs: part[0] - 30 * 60_000, toMs: part[part.length - 1] }],
              bars: [{ symbol, period: '1m', bars: walkBars(part, c.replace.seed) }],
            })
          }
          const lo = n ? ts[0] : 0
          const span = n ? ts[n - 1] - ts[0] : 1
          const queries = c.queries.map((q) => ({
            symbol,
            period: q.period,
            adjust: q.adjust,
            count: q.count,
            ...(q.start !== null ? { startTime: Math.round(lo + q.start * span) } : {}),
            ...(q.end !== null ? { endTime: Math.round(lo + q.end * span) } : {}),
          }))
          const seen = new Map<string, number>()
          const viaRollups = counting(store, seen)
          const onRead = aggregatingOnRead(store)
          const a = new SymbolContexts(viaRollups)
          const b = new SymbolContexts(onRead)
          for (const q of queries)
            assertBytesEqual(await readKlines(viaRollups, a, q), await readKlines(onRead, b, q), JSON.stringify(q))
          assert.ok(
            ROLLUP_PERIODS.some((p) => (seen.get(p) ?? 0) > 0),
            'the rollups were read',
          )
        } finally {
          await store.close()
        }
      }),
      { numRuns: 60 },
    )
  })

  it('migration 5 builds the rollups of a store written before it (the mark set, rollup chunks absent)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mdq-rollups-'))
    try {
      const path = join(dir, 'old.db')
      const days = tradingDays('SH', 19_000, 3)
      const ts = sessionMinutes('SH', days)
      let store = SqliteMarketStore.open(path)
      await store.write({
        instruments: [
          {
            symbol: '600001.SH',
            code: '600001',
            exchange: 'SH',
            region: 'CN',
            name: null,
            type: null,
            listingDate: null,
            tickSize: null,
            totalShares: null,
            floatShares: null,
            limitUp: null,
            limitDown: null,
            nameEn: null,
            lotSize: null,
          },
        ],
        bars: [{ symbol: '600001.SH', period: '1m', bars: walkBars(ts, [0.3, 0.7, 0.1]) }],
      })
      await store.close()
      // What a store of schema 4 holds: no rollup chunks; migration 5 sets the mark (the later
      // migrations have run already: the schema version stays).
      const raw = new Database(path)
      raw.exec(
        `DELETE FROM chunks WHERE period <> '1m' AND period <> '1d'; INSERT INTO meta (key, value) VALUES ('rollups_pending', 1);
         DROP TABLE tail; DROP TABLE live_symbols; DROP TABLE live_commits; DROP TABLE live_quotes; DROP TABLE live_depth; DELETE FROM meta WHERE key = 'live_seq';
         DROP TABLE financials; ALTER TABLE universe_members DROP COLUMN in_date; ALTER TABLE universe_members DROP COLUMN out_date;
         DROP INDEX chunk_spans;
         PRAGMA user_version = 5;`,
      )
      assert.equal(raw.prepare("SELECT count(*) FROM chunks WHERE period = '60m'").pluck().get(), 0)
      raw.close()
      store = SqliteMarketStore.open(path)
      try {
        const rollups = await store.readBars({ symbol: '600001.SH', period: '60m', limit: 1000 })
        assert.equal(barCount(rollups), 3 * 4, 'four 60m bars a CN day (two per session)')
        await compare(
          store,
          ADJUSTS.map((adjust) => ({ symbol: '600001.SH', period: '30m' as const, adjust, count: 100 })),
        )
      } finally {
        await store.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
