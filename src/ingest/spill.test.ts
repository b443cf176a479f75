import assert from 'node:assert/strict'
import { it } from 'node:test'
import { allocBars, barCount } from '../domain/bars.js'
import { BarSpill } from './spill.js'

const block = (ts: number[], close: number[], prevClose: number[]) => {
  const b = allocBars(ts.length)
  b.timestamp.set(ts)
  b.close.set(close)
  b.prevClose.set(prevClose)
  b.open.fill(99)
  return b
}

it("reads back each symbol's blocks in append order, timestamp, close and prev_close bit for bit (NaN prev_close too)", () => {
  const spill = new BarSpill()
  try {
    spill.append('A.SH', block([3, 4], [10.1, 10.2], [NaN, 10.1]))
    spill.append('B.SH', block([1], [5.5], [5.4]))
    spill.append('A.SH', block([1, 2], [9.9, 0.1 + 0.2], [9.8, 9.9]))
    spill.append('A.SH', allocBars(0))
    const a = spill.blocks('A.SH')
    assert.deepEqual(
      a.map((b) => Array.from(b.timestamp)),
      [
        [3, 4],
        [1, 2],
      ],
    )
    assert.deepEqual(
      a.map((b) => Array.from(b.close)),
      [
        [10.1, 10.2],
        [9.9, 0.1 + 0.2],
      ],
    )
    assert.deepEqual(
      a.map((b) => Array.from(b.prevClose)),
      [
        [NaN, 10.1],
        [9.8, 9.9],
      ],
    )
    assert.deepEqual(Array.from(a[0].open), [0, 0]) // only what ex-factor derivation reads is kept
    assert.deepEqual(Array.from(spill.blocks('B.SH')[0].close), [5.5])
    assert.equal(spill.blocks('C.SH').length, 0)
    assert.equal(barCount(spill.blocks('B.SH')[0]), 1)
  } finally {
    spill.dispose()
  }
})
