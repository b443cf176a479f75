import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { allocBars, BAR_FIELDS, mergeBars, rowsOfBars, type BarRow, type Bars } from './bars.js'

/** Bars of ascending distinct timestamps (a sorted set), every field of a row derived from `tag` and its time, so rows from either side are told apart. */
function barsAt(times: readonly number[], tag: number): Bars {
  const bars = allocBars(times.length)
  times.forEach((t, i) => {
    bars.timestamp[i] = t
    BAR_FIELDS.slice(1).forEach((f, k) => (bars[f][i] = tag * 1000 + k + t / 1e6))
  })
  return bars
}

/** The plain oracle: a map by timestamp, incoming rows set after existing ones, read back in time order. */
function oracle(existing: Bars, incoming: Bars): BarRow[] {
  const byTime = new Map<number, BarRow>()
  for (const r of [...rowsOfBars(existing), ...rowsOfBars(incoming)]) byTime.set(r.timestamp, r)
  return [...byTime.values()].sort((x, y) => x.timestamp - y.timestamp)
}

const times = fc
  .uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 120 })
  .map((ts) => ts.sort((a, b) => a - b).map((t) => t * 60_000))

describe('mergeBars', () => {
  it('equals a map by timestamp where incoming rows win, for any two ascending series (runs long and short, appends, overlaps)', () => {
    fc.assert(
      fc.property(times, times, (a, b) => {
        const existing = barsAt(a, 1)
        const incoming = barsAt(b, 2)
        assert.deepEqual(rowsOfBars(mergeBars(existing, incoming)), oracle(existing, incoming))
      }),
      { numRuns: 500 },
    )
  })

  it('appends a later block after the stored one', () => {
    const merged = mergeBars(barsAt([1, 2, 3], 1), barsAt([4, 5], 2))
    assert.deepEqual([...merged.timestamp], [1, 2, 3, 4, 5])
    assert.deepEqual(
      [...merged.open].map((v) => Math.floor(v / 1000)),
      [1, 1, 1, 2, 2],
    )
  })
})
