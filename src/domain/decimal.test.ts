import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { exactDifference, exactExponent, scale, unscale } from './decimal.js'

/** The definition, value by value through scale and unscale: the oracle for the inlined loop. */
function byDefinition(values: Float64Array, minExp: number, maxExp: number, maxScaled: number): number | undefined {
  next: for (let e = minExp; e <= maxExp; e++) {
    for (const v of values)
      if (!(Math.abs(scale(v, e)) < maxScaled) || unscale(scale(v, e), e) !== v || Object.is(v, -0)) continue next
    return e
  }
  return undefined
}

describe('exactExponent', () => {
  const decimal = fc.oneof(
    fc.integer({ min: -1e9, max: 1e9 }).chain((r) => fc.integer({ min: 0, max: 6 }).map((k) => r / 10 ** k)),
    fc.integer({ min: 1, max: 1e6 }).map((k) => k * 60_000 + 1_262_304_000_000),
    fc.double({ noNaN: false }),
    fc.constantFrom(0, -0, NaN, Infinity, 43274869311170.02, 2 ** 51, 2 ** 53 + 2),
  )
  it('gives the smallest exponent by its definition, and the scaled integers at it', () => {
    fc.assert(
      fc.property(
        fc.array(decimal, { minLength: 0, maxLength: 8 }),
        fc.constantFrom([-5, 9, 2 ** 51], [0, 9, Number.MAX_SAFE_INTEGER]),
        (list, [lo, hi, max]) => {
          const values = Float64Array.from(list)
          const scaled = new Float64Array(values.length)
          const e = exactExponent(values, lo, hi, max, scaled)
          assert.equal(e, byDefinition(values, lo, hi, max))
          if (e !== undefined)
            assert.deepEqual(
              Array.from(scaled),
              Array.from(values, (v) => scale(v, e)),
            )
        },
      ),
      { numRuns: 20_000 },
    )
  })

  it("past 2^52, where several integers give the same double, scales to the value's shortest text (as printed)", () => {
    // 79350959510230.1 x 100 rounds to 7935095951023009, and both ...009 / 100 and ...010 / 100 give this
    // double (the CI's counterexample summed the ...009 of it); 80897108742891.67 has one such integer.
    assert.equal(7935095951023009 / 100, 79350959510230.1)
    const values = Float64Array.of(79350959510230.1, -79350959510230.1, 80897108742891.67, 76346748779644)
    const scaled = new Float64Array(values.length)
    assert.equal(exactExponent(values, 0, 9, Number.MAX_SAFE_INTEGER, scaled), 2)
    assert.deepEqual(Array.from(scaled), [7935095951023010, -7935095951023010, 8089710874289167, 7634674877964400])
    assert.equal(scale(79350959510230.1, 2), 7935095951023010)
  })
})

describe('exactDifference', () => {
  it('subtracts decimals without float noise, and other doubles as doubles', () => {
    assert.equal(12345.67 - 12000.01, 345.65999999999985)
    assert.equal(exactDifference(12345.67, 12000.01), 345.66)
    assert.equal(exactDifference(1234913.56, 1234567.89), 345.67)
    assert.equal(exactDifference(0.3, 0.1), 0.2)
    assert.equal(exactDifference(100, 100), 0)
    assert.equal(exactDifference(Math.PI, 1), Math.PI - 1)
  })
})
