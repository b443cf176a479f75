import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { arbSeed, sessionMinutes, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { BAR_FIELDS, barCount, type Bars } from './bars.js'
import { MARKETS, type Exchange } from './market.js'
import { buildAllRollups, buildRollups, ROLLUP_PERIODS } from './rollups.js'
import { MINUTE_MS } from './time-zone.js'

const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

function assertBitEqual(actual: Bars, expected: Bars, what: string): void {
  assert.equal(barCount(actual), barCount(expected), `${what}: bar count`)
  for (const f of BAR_FIELDS) assert.ok(bytes(actual[f]).equals(bytes(expected[f])), `${what}: ${f} differs`)
}

describe('buildAllRollups', () => {
  it('equals buildRollups of each period bit for bit (SH, HK, US across DST switches; holes, bars outside the sessions, odd amounts, NaN and -0)', () => {
    const arbCase = fc.record({
      exchange: fc.constantFrom<Exchange>('SH', 'HK', 'US'),
      // US days around the March and November switches of several years, among others.
      firstDay: fc.oneof(fc.integer({ min: 16_000, max: 20_000 }), fc.constantFrom(17_960, 18_200, 19_060, 19_300)),
      days: fc.integer({ min: 1, max: 8 }),
      seed: arbSeed,
      holes: fc.array(fc.nat({ max: 2_000 }), { maxLength: 60 }),
      // Bars moved off the sessions (pre/post market, lunch), kept ascending by sorting.
      outside: fc.array(fc.record({ at: fc.nat({ max: 2_000 }), minutes: fc.integer({ min: -600, max: 600 }) }), {
        maxLength: 20,
      }),
      amounts: fc.array(
        fc.record({
          at: fc.nat({ max: 2_000 }),
          v: fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(-0, 0.1, 1e-10, 2 ** 52 + 0.5, 123456789012.345)),
        }),
        { maxLength: 20 },
      ),
    })
    fc.assert(
      fc.property(arbCase, (c) => {
        const market = MARKETS[c.exchange]
        const holes = new Set(c.holes)
        let ts = sessionMinutes(c.exchange, tradingDays(c.exchange, c.firstDay, c.days)).filter((_, i) => !holes.has(i))
        for (const o of c.outside) if (ts.length) ts.push(ts[o.at % ts.length] + o.minutes * MINUTE_MS)
        ts = [...new Set(ts)].sort((a, b) => a - b)
        const minute = walkBars(ts, c.seed)
        for (const a of c.amounts) if (ts.length) minute.amount[a.at % ts.length] = a.v
        const all = buildAllRollups(minute, market)
        assert.equal(all.length, ROLLUP_PERIODS.length)
        ROLLUP_PERIODS.forEach((period, k) => assertBitEqual(all[k], buildRollups(minute, period, market), period))
      }),
      { numRuns: 200 },
    )
  })

  it('equals buildRollups on sparse series: one bar a day at the same minute, each day its own rollup bar', () => {
    for (const exchange of ['SH', 'HK', 'US'] as const) {
      const market = MARKETS[exchange]
      const days = sessionMinutes(exchange, tradingDays(exchange, 19_000, 12))
      const perDay = days.length / 12
      for (const at of [0, 7, perDay - 1]) {
        const minute = walkBars(
          days.filter((_, i) => i % perDay === at),
          [0.3, 0.8],
        )
        const all = buildAllRollups(minute, market)
        ROLLUP_PERIODS.forEach((period, k) => {
          assert.equal(barCount(all[k]), 12, `${exchange} ${period}`)
          assertBitEqual(all[k], buildRollups(minute, period, market), `${exchange} ${period}`)
        })
      }
    }
  })
})
