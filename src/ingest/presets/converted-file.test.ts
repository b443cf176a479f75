import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { shiftDecimal } from './converted-file.js'

describe('shiftDecimal: a unit change on the text, exact', () => {
  const cases: [string, number, string | undefined][] = [
    ['148099.16', 2, '14809916'], // Tushare lots -> shares (600519.SH 2020-01-02)
    ['2806694.63', 2, '280669463'],
    ['16696837.095', 3, '16696837095'], // thousands of CNY -> CNY
    ['0.5', 3, '500'],
    ['12', 3, '12000'],
    ['.25', 2, '25'],
    ['6448000', -4, '644.8'], // LEAN deci-cents -> USD
    ['136300', -4, '13.63'],
    ['5', -4, '0.0005'],
    ['-1.5', 2, '-150'],
    ['0001.2300', 1, '12.3'],
    ['', 2, ''],
    ['1e3', 2, undefined],
    ['12,5', 2, undefined],
    ['.', 2, undefined],
    ['abc', 2, undefined],
  ]
  for (const [text, k, expected] of cases)
    it(`${JSON.stringify(text)} x 10^${k} = ${JSON.stringify(expected)}`, () =>
      assert.equal(shiftDecimal(text, k), expected))

  it('has no float noise where multiplying does', () => {
    assert.notEqual(4.35 * 100, 435)
    assert.equal(Number(shiftDecimal('4.35', 2)), 435) // 4.35 * 100 = 434.99999999999994
  })
})
