import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { crc32 } from 'node:zlib'
import fc from 'fast-check'
import { crc32Combine } from './gzip-crc.js'

describe('crc32Combine', () => {
  it('gives zlib.crc32 of the concatenation, for any two byte runs (empty ones included)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        assert.equal(crc32Combine(crc32(a), crc32(b), b.length), crc32(Buffer.concat([a, b])))
      }),
      { numRuns: 500 },
    )
  })

  it('combines many pieces in order, as the gzip writer does: large pieces, one-byte pieces, an empty piece', () => {
    const pieces = [
      randomBytes(700_000),
      Buffer.from(','),
      randomBytes(1),
      Buffer.alloc(0),
      randomBytes(65_537),
      Buffer.from('}}'),
      randomBytes(3_000_001),
    ]
    let crc = 0
    for (const p of pieces) crc = crc32Combine(crc, crc32(p), p.length)
    assert.equal(crc, crc32(Buffer.concat(pieces)))
  })

  it('matches known values: crc32("123456789") = cbf43926 from "12345" and "6789"; a zero-length B leaves A unchanged', () => {
    assert.equal(crc32Combine(crc32('12345'), crc32('6789'), 4), 0xcbf43926)
    assert.equal(crc32Combine(0xcbf43926, 0, 0), 0xcbf43926)
    assert.equal(crc32Combine(0, crc32('123456789'), 9), 0xcbf43926)
  })

  it('handles a B of 2^31 bytes and more (past the 32-bit range of bitwise operators)', () => {
    // zlib.crc32 continues a running CRC: "abc" then 2^31 + 16 MiB zero bytes, fed 16 MiB at a time (about 1 s).
    const zeros = Buffer.alloc(1 << 24)
    const runs = 129
    let whole = crc32('abc')
    let zerosOnly = 0
    for (let i = 0; i < runs; i++) {
      whole = crc32(zeros, whole)
      zerosOnly = crc32(zeros, zerosOnly)
    }
    assert.equal(crc32Combine(crc32('abc'), zerosOnly, runs * zeros.length), whole)
  })
})
