import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { encodeRows } from './row-binary.js'

const hex = (b: Buffer) => b.toString('hex')

describe('encodeRows: RowBinary of the small tables', () => {
  it('writes each type as ClickHouse reads it', () => {
    const body = encodeRows(
      ['String', 'Nullable(String)', 'Int64', 'UInt64', 'UInt32', 'Float64', 'Nullable(Float64)', 'Nullable(Int64)'],
      [['é', null, -2, 2n ** 63n, 7, 1.5, 2.25, 5]],
    )
    assert.equal(
      hex(body),
      [
        '02c3a9', // 'é': its UTF-8 length, then its bytes
        '01', // NULL
        'feffffffffffffff', // -2
        '0000000000000080', // 2^63
        '07000000',
        '000000000000f83f', // 1.5
        '00' + '0000000000000240', // not NULL, 2.25
        '00' + '0500000000000000',
      ].join(''),
    )
  })

  it('takes whole numbers as numbers, bigints or digits, past 2^53 too', () => {
    const body = encodeRows(
      ['Int64', 'Int64', 'UInt64', 'Int64'],
      [[2 ** 40 + 3, '-300', 12345678901234567890n, 2 ** 60]],
    )
    assert.equal(hex(body), '0300000000010000' + 'd4feffffffffffff' + 'd20a1feb8ca954ab' + '0000000000000010')
  })

  it('puts a long string behind a varint of its byte length, row after row', () => {
    const long = 'a'.repeat(200)
    const body = encodeRows(
      ['String', 'UInt32'],
      [
        [long, 1],
        ['', 2],
      ],
    )
    assert.equal(hex(body), 'c801' + '61'.repeat(200) + '01000000' + '00' + '02000000')
  })

  it('refuses what the column cannot hold, naming the column', () => {
    assert.throws(() => encodeRows(['String'], [[null]]), /column 0 \(String\) cannot be null/)
    assert.throws(() => encodeRows(['UInt64'], [[-1]]), /column 0 \(UInt64\): -1 is negative/)
    assert.throws(
      () => encodeRows(['UInt32', 'UInt32'], [[1, 2 ** 32]]),
      /column 1 \(UInt32\): 4294967296 is out of range/,
    )
    assert.throws(() => encodeRows(['Int64'], [[1.5]]), RangeError)
  })
})
