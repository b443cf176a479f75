// A 1m window's prev_close is what filling the whole history gives: the store is read for the window,
// and its days' daily prev_close come from reading just those days' daily bars (plus one before), at
// a data version's first window, or from the symbol's daily history filled once per data version
// (query/daily-prev-close.ts), at the next ones: each window is read twice, so both answer it.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { rowsOfBars, sliceBars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import { MARKETS } from '../../src/domain/market.js'
import { fillDailyPrevClose, fillMinutePrevClose } from '../../src/domain/prev-close.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { arbSeed, sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'

const SYMBOL = '600001.SH'
const zone = MARKETS.SH.zone

describe('1m windows: prev_close', () => {
  it('equals the fill of the whole 1m and daily history (daily bars missing, starting late, or absent; events; across chunks)', async () => {
    const arbCase = fc.record({
      // Day 19,456 starts a 1,024-day daily chunk: many histories straddle it.
      firstDay: fc.integer({ min: 19_380, max: 19_460 }),
      days: fc.integer({ min: 2, max: 40 }),
      seed: arbSeed,
      dailySeed: arbSeed,
      withDaily: fc.boolean(),
      dailyFrom: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
      dailyHoles: fc.array(fc.nat({ max: 39 }), { maxLength: 10 }),
      // Daily bars whose prev_close was imported (kept, never filled).
      dailyImported: fc.array(fc.nat({ max: 39 }), { maxLength: 5 }),
      minuteHoles: fc.array(fc.nat({ max: 999 }), { maxLength: 40 }),
      events: fc.array(fc.record({ day: fc.nat(), f: fc.double({ min: 0.2, max: 10, noNaN: true }) }), {
        maxLength: 3,
      }),
      // Windows starting at a day's first bar (that bar takes the day's daily prev_close) or anywhere.
      windows: fc.array(
        fc.record({
          day: fc.nat(),
          atDayStart: fc.boolean(),
          at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
          count: fc.integer({ min: 1, max: 3000 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    })
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const dayStarts = tradingDays('SH', c.firstDay, c.days)
        const drop = new Set(c.minuteHoles)
        const ts = sessionMinutes('SH', dayStarts).filter((_, i) => !drop.has(i % 1000))
        const minute = walkBars(ts, c.seed)
        minute.prevClose.fill(NaN)
        const dailyDrop = new Set(c.dailyHoles)
        const dailyTs = dayStarts.filter((_, i) => i >= Math.floor(c.dailyFrom * c.days) && !dailyDrop.has(i))
        const daily = walkBars(dailyTs, c.dailySeed)
        const imported = new Set(c.dailyImported)
        for (let i = 0; i < daily.prevClose.length; i++) if (!imported.has(i)) daily.prevClose[i] = NaN
        const events = [...new Map(c.events.map((e) => [dayStarts[e.day % dayStarts.length], e.f]))]
          .map(([timestamp, exFactor]) => ({ timestamp, exFactor }))
          .sort((a, b) => a.timestamp - b.timestamp)
        // The expected answer: the domain's fills over every bar, the daily history from its first bar.
        const dayPrevClose = new Map<number, number>()
        if (c.withDaily && dailyTs.length) {
          const filled = fillDailyPrevClose(daily, events)
          dailyTs.forEach((t, i) => dayPrevClose.set(zone.localDay(t), filled.prevClose[i]))
        }
        const whole = fillMinutePrevClose(minute, events, zone, dayPrevClose)

        const store = SqliteMarketStore.open(':memory:')
        try {
          await store.write({
            instruments: [bareInstrument(SYMBOL, { type: 'stock' })],
            bars: [
              { symbol: SYMBOL, period: '1m', bars: minute },
              ...(c.withDaily && dailyTs.length ? [{ symbol: SYMBOL, period: '1d' as const, bars: daily }] : []),
            ],
            exFactors: [{ symbol: SYMBOL, events }],
          })
          const contexts = new SymbolContexts(store)
          const dayFirst = ts.flatMap((t, i) => (i === 0 || zone.localDay(t) !== zone.localDay(ts[i - 1]) ? [i] : []))
          for (const w of c.windows) {
            const start = w.atDayStart ? dayFirst[w.day % dayFirst.length] : Math.floor(w.at * ts.length)
            const end = Math.min(ts.length - 1, start + w.count - 1)
            for (const read of [1, 2])
              assert.deepEqual(
                rowsOfBars(
                  await readKlines(store, contexts, {
                    symbol: SYMBOL,
                    period: '1m',
                    count: end - start + 1,
                    endTime: ts[end],
                    adjust: 'none',
                  }),
                ),
                rowsOfBars(sliceBars(whole, start, end + 1)),
                `bars ${start}..${end}, read ${read}`,
              )
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: 60 },
    )
  })
})
