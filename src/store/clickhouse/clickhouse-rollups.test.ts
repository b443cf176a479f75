import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { allocBars, BAR_FIELDS, concatBars, sliceBars } from '../../domain/bars.js'
import { MARKETS } from '../../domain/market.js'
import { ROLLUP_PERIODS, buildAllRollups } from '../../domain/rollups.js'
import { foldPartials, partialRollups, partialRollupsOf } from './clickhouse-rollups.js'
import { RAW_SCALE } from './row-binary.js'

const bits = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

/** Values a pushed or imported bar may hold: exact decimals, inexact doubles, fractions, negatives, NaN. */
const value = fc.oneof(
  fc.integer({ min: 0, max: 1e9 }).map((v) => v / 100),
  fc.double({ min: -1e12, max: 1e12, noNaN: true }),
  fc.constant(NaN),
  fc.constant(-0),
)

describe('partial rollups of a one-bar put', () => {
  it('are, for every period, the rollups the general path builds, to the bit, and flagged alike', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('SH', 'HK', 'US'),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.array(value, { minLength: 7, maxLength: 7 }),
        (exchange, minute, v) => {
          const bar = allocBars(1)
          bar.timestamp[0] = 1_600_000_000_000 + minute * 60_000
          ;[bar.open[0], bar.high[0], bar.low[0], bar.close[0], bar.volume[0], bar.amount[0], bar.prevClose[0]] = v
          const market = MARKETS[exchange as 'SH']
          const fast = partialRollups(bar, market)
          const general = partialRollupsOf(bar, market)
          assert.deepEqual(
            fast.map((r) => r.period),
            general.map((r) => r.period),
          )
          fast.forEach((r, k) => {
            for (const f of BAR_FIELDS) assert.ok(bits(r.bars[f]).equals(bits(general[k].bars[f])), `${r.period} ${f}`)
            assert.deepEqual([...r.rawVolume], [...general[k].rawVolume], `${r.period} rawVolume`)
          })
        },
      ),
      { numRuns: 2000 },
    )
  })
})

describe('partials folded on read', () => {
  it('give, for any split of a history into puts, the rollups of all its bars at once, to the bit', () => {
    const market = MARKETS.SH
    const day0 = market.zone.localDay(Date.UTC(2024, 0, 2, 4))
    const sessionMinutes = market.sessions.flatMap((s) =>
      Array.from({ length: s.close - s.open }, (_, k) => s.open + k),
    )
    fc.assert(
      fc.property(
        // Which session minutes of three days have a bar (gaps make buckets start late), and where puts end.
        fc.array(fc.boolean(), { minLength: 3 * sessionMinutes.length, maxLength: 3 * sessionMinutes.length }),
        fc.array(fc.integer({ min: 1, max: 3 * sessionMinutes.length }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 1e6 }),
        (present, cuts, seed) => {
          const ts = present.flatMap((has, i) => {
            const day = day0 + Math.floor(i / sessionMinutes.length)
            return has ? [market.zone.midnightUtc(day) + sessionMinutes[i % sessionMinutes.length] * 60_000] : []
          })
          if (ts.length === 0) return
          const all = allocBars(ts.length)
          ts.forEach((t, i) => {
            const p = 10 + ((seed * (i + 1)) % 997) / 100
            all.timestamp[i] = t
            all.open[i] = p
            all.high[i] = p + 0.05
            all.low[i] = p - 0.05
            all.close[i] = p + 0.01
            all.volume[i] = 100 * ((seed + i) % 50)
            all.amount[i] = Math.round(p * all.volume[i] * 100) / 100
            all.prevClose[i] = NaN
          })
          const ends = [...new Set(cuts.filter((c) => c < ts.length)), ts.length].sort((a, b) => a - b)
          const puts = ends.map((end, k) => sliceBars(all, k === 0 ? 0 : ends[k - 1], end))
          const whole = buildAllRollups(all, market)
          ROLLUP_PERIODS.forEach((period, k) => {
            const parts = puts.map((put) => partialRollupsOf(put, market)[k])
            const scales = Uint8Array.from(parts.flatMap((p) => [...p.rawVolume].map((raw) => (raw ? RAW_SCALE : 2))))
            const folded = foldPartials(concatBars(parts.map((p) => p.bars)), scales, period, market)
            assert.ok(folded, `${period}: whole volumes and exact amounts always fold`)
            for (const f of BAR_FIELDS) assert.ok(bits(folded[f]).equals(bits(whole[k][f])), `${period} ${f}`)
          })
        },
      ),
      { numRuns: 300 },
    )
  })
})
