import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { allocBars, BAR_FIELDS } from '../../domain/bars.js'
import { MARKETS } from '../../domain/market.js'
import { partialRollups, partialRollupsOf } from './clickhouse-rollups.js'

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
