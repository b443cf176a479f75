import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { sessionMinutes, tradingDays, walkBars } from '../../../test/helpers/arbitraries.js'
import { BAR_FIELDS, allocBars, rowsOfBars } from '../../domain/bars.js'
import { ColumnKind, decodeChunk, encodeChunk, exactExponent } from './chunk-codec.js'

const sameBits = (a: Float64Array, b: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))

describe('chunk codec', () => {
  it('round-trips any doubles bit for bit (NaN, -0, huge, tiny, fractions)', () => {
    fc.assert(
      fc.property(fc.array(fc.double(), { maxLength: 300 }), (values) => {
        const bars = allocBars(values.length)
        for (const f of BAR_FIELDS) bars[f].set(values)
        const back = decodeChunk(encodeChunk(bars))
        for (const f of BAR_FIELDS) assert.ok(sameBits(back[f], bars[f]), f)
      }),
    )
  })
  it('round-trips realistic bars exactly and stores 1m bars in well under 16 bytes each', () => {
    const bars = walkBars(sessionMinutes('SH', tradingDays('SH', 19000, 5)), [0.1, 0.5, 0.9, 0.3])
    bars.prevClose.fill(NaN)
    const blob = encodeChunk(bars)
    assert.deepEqual(rowsOfBars(decodeChunk(blob)), rowsOfBars(bars))
    assert.ok(blob.length / bars.close.length < 16, `${(blob.length / bars.close.length).toFixed(1)} bytes/bar`)
    assert.equal(blob[0], 1)
  })
  it('picks the smallest exact decimal exponent', () => {
    assert.equal(exactExponent(Float64Array.of(10.01, 9.5)), 2)
    assert.equal(exactExponent(Float64Array.of(1_700_000_040_000, 1_700_000_100_000)), -4)
    assert.equal(exactExponent(Float64Array.of(Math.PI)), undefined)
    assert.equal(ColumnKind.Float64, 1)
  })
  it('rejects a chunk of an unknown version', () => {
    assert.throws(() => decodeChunk(Uint8Array.of(9, 0)), /version 9/)
  })
})
