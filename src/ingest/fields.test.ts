import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { parseDecimal } from './fields.js'

describe('parseDecimal', () => {
  it('gives exactly what Number() gives for every plain decimal', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 10 }), (x, d) => {
        const text = Math.abs(x) < 1e15 ? x.toFixed(d) : String(x)
        assert.ok(Object.is(parseDecimal(text), Number(text)) || (Number(text) === 0 && parseDecimal(text) === 0), text)
      }),
      { numRuns: 5000 },
    )
    for (const t of ['10.01', '0.1', '-3.75', '+2', '1e-3', '12345678901234567890', '.5', '5.']) assert.equal(parseDecimal(t), Number(t), t)
  })
  it('rejects what is not a plain decimal', () => {
    for (const t of ['', '-', '.', '0x10', '0b1', 'Infinity', '1,5', '1.2.3', '1e', 'NaN', '--1']) assert.ok(Number.isNaN(parseDecimal(t)), t)
  })
})
