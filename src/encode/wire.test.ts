import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { round4 } from '../domain/adjust.js'
import { formatFloat, formatNumber, formatPrice4, wireJson } from './wire.js'

describe('formatNumber', () => {
  it('writes the same number JSON.stringify writes, for any finite double', () => {
    const check = (x: number) => assert.equal(Number(formatNumber(x)), Number(JSON.stringify(x)), String(x))
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), check), { numRuns: 20_000 })
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 4 }), (n, d) => check(n / 10 ** d)),
      { numRuns: 20_000 },
    )
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 53 - 1 }), check), { numRuns: 20_000 })
    for (const x of [0, -0, 0.5, -0.5, 10.0385, 1e-7, 1700000040000, -1700000040000, 99999999999.9999, 123456789.01])
      check(x)
  })
  it('formatPrice4 writes exactly round4(x), for any finite double but a non-zero one that rounds to 0', () => {
    const check = (x: number) => {
      const written = Number(formatPrice4(x))
      if (round4(x) !== 0 || x === 0)
        assert.equal(written, Number(JSON.stringify(round4(x))), String(x)) // JSON has no -0
      else {
        // 4 significant digits instead of 0.0: never a zero price for a non-zero one
        assert.ok(written !== 0 && Math.sign(written) === Math.sign(x), `${x} -> ${written}`)
        assert.ok(Math.abs(written - x) <= Math.abs(x) * 5e-4, `${x} -> ${written}`)
      }
    }
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), check), { numRuns: 20_000 })
    fc.assert(fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), check), { numRuns: 20_000 })
    fc.assert(fc.property(fc.double({ min: -0.0001, max: 0.0001, noNaN: true }), check), { numRuns: 20_000 })
    for (const x of [0, -0, 10.03846153, -1.23456, -0.00004, 0.00005, -0.00005, 1e11, 123.45675, 5e-324]) check(x)
    assert.equal(formatPrice4(0.00002), '0.00002')
    assert.equal(formatPrice4(-0.0000123456), '-0.00001235')
    assert.equal(formatPrice4(1.23456e-9), '1.235e-9')
    assert.equal(formatPrice4(5e-324), '5e-324')
    assert.equal(formatPrice4(0.00005), '0.0001')
  })
  it('is valid JSON text', () => {
    for (const x of [-0, 0.0001, -12.5, 1e21, 5e-324]) assert.doesNotThrow(() => JSON.parse(formatNumber(x)))
  })
})

describe('floats on the wire', () => {
  it('formatFloat and formatPrice4 always write a fraction part, with the same value', () => {
    for (const x of [266, 0, -3, 1e15, 1700000040000, 2.5, -0.0001]) {
      assert.match(formatFloat(x), /\.|e/, String(x))
      assert.equal(Number(formatFloat(x)), x)
    }
    assert.equal(formatFloat(266), '266.0')
    assert.equal(formatPrice4(266.00001), '266.0')
    assert.equal(formatPrice4(-12), '-12.0')
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) =>
        assert.equal(Number(formatFloat(x)), Number(JSON.stringify(x))),
      ),
      { numRuns: 20_000 },
    )
  })
  it('wireJson: numbers under price, amount and ratio keys as floats, everything else as JSON.stringify', () => {
    const value = {
      data: [
        { symbol: 'A', close: 266, volume: 100, ext: { tick_size: 1, total_shares: 5, change_pct: 0, name: null } },
      ],
      count: 1,
      ex: { X: [{ timestamp: 5, ex_factor: 2 }] },
    }
    assert.equal(
      wireJson(value),
      '{"data":[{"symbol":"A","close":266.0,"volume":100,"ext":{"tick_size":1.0,"total_shares":5,"change_pct":0.0,"name":null}}],"count":1,"ex":{"X":[{"timestamp":5,"ex_factor":2.0}]}}',
    )
    assert.deepEqual(JSON.parse(wireJson(value)), value)
  })
})
