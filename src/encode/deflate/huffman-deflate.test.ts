import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { constants, deflateRawSync, gunzipSync, inflateRawSync } from 'node:zlib'
import fc from 'fast-check'
import { deflatePiece, gzipMember } from '../gzip-member.js'
import { canonicalCodes, codeLengths } from './huffman-codes.js'
import { rawHuffmanDeflate } from './huffman-deflate.js'

/** zlib's inflate of a raw stream that ends on a sync flush (not final), as the pieces do. */
const inflate = (deflated: Uint8Array) => inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH })

/** Kraft sum of code lengths: 1 for a complete prefix code, at most 1 for any decodable one. */
const kraft = (lengths: Uint8Array) => lengths.reduce((sum, l) => sum + (l ? 2 ** -l : 0), 0)

/** JSON columns as the klines writer makes them (digits, dots, commas, keys), `n` bars. */
function klinesJson(n: number, seed: number): Buffer {
  let x = seed
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const col = (f: () => string) => `[${Array.from({ length: n }, f).join(',')}]`
  return Buffer.from(
    `"600519.SH":{"timestamp":${col(() => String(1104681600000 + Math.floor(rnd() * 1e9) * 1000))},"open":${col(() => (rnd() * 2000).toFixed(2))},` +
      `"volume":${col(() => String(Math.floor(rnd() * 1e7)))},"amount":${col(() => (rnd() * 1e9).toFixed(1))},"prev_close":${col(() => (rnd() * 20).toFixed(4))}}`,
    'latin1',
  )
}

/** `n` bytes drawn from `alphabet` at pseudo-random. */
function drawn(alphabet: Uint8Array, n: number, seed: number): Buffer {
  let x = seed
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    out[i] = alphabet[x % alphabet.length]
  }
  return out
}

describe('rawHuffmanDeflate', () => {
  it('inflates (zlib) to the same bytes for any input, split into any pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 5000 }), { maxLength: 6 }), (pieces) => {
        assert.deepEqual(inflate(rawHuffmanDeflate(pieces)), Buffer.concat(pieces))
      }),
      { numRuns: 300 },
    )
  })

  it('inflates (zlib) to the same bytes for any bytes in any pieces across 64 KB blocks, borrowed or copied, and joins', () => {
    // Long runs drawn from a few byte values (short codes, pairs, sampled counts) amid any bytes
    // (stray codes, full recounts), cut anywhere (empty pieces, blocks that span pieces).
    const run = fc
      .record({
        alphabet: fc.uint8Array({ minLength: 1, maxLength: 40 }),
        length: fc.nat({ max: 150_000 }),
        seed: fc.integer({ min: 1, max: 2 ** 30 }),
      })
      .map(({ alphabet, length, seed }) => drawn(alphabet, length, seed))
    const input = fc
      .array(fc.oneof(fc.uint8Array({ maxLength: 4000 }), run), { maxLength: 5 })
      .map((parts) => Buffer.concat(parts))
    fc.assert(
      fc.property(input, fc.array(fc.nat({ max: 100_000 }), { maxLength: 8 }), (bytes, cuts) => {
        const pieces: Buffer[] = []
        let at = 0
        for (const n of cuts) {
          pieces.push(bytes.subarray(at, at + n))
          at = Math.min(bytes.length, at + n)
        }
        pieces.push(bytes.subarray(at))
        const copied = rawHuffmanDeflate(pieces)
        assert.deepEqual(inflate(copied), bytes)
        assert.deepEqual(rawHuffmanDeflate(pieces, { borrow: true }), copied, 'the scratch view holds the same bytes')
        const tail = pieces[pieces.length - 1]
        assert.deepEqual(inflate(Buffer.concat([copied, rawHuffmanDeflate(tail)])), Buffer.concat([bytes, tail]))
      }),
      { numRuns: 100 },
    )
  })

  it('round-trips klines JSON across block and piece boundaries, and within 2% of zlib Huffman-only size', () => {
    const json = klinesJson(20_000, 7)
    const pieces: Buffer[] = []
    for (let at = 0; at < json.length; at += 16_384) pieces.push(json.subarray(at, at + 16_384))
    const ours = rawHuffmanDeflate(pieces)
    assert.deepEqual(inflate(ours), json)
    assert.deepEqual(inflate(rawHuffmanDeflate(json)), json)
    const zlib = deflateRawSync(json, { strategy: constants.Z_HUFFMAN_ONLY, finishFlush: constants.Z_SYNC_FLUSH })
    assert.ok(ours.length < json.length * 0.5, `${ours.length} of ${json.length}`)
    assert.ok(ours.length <= zlib.length * 1.02, `${ours.length} vs zlib ${zlib.length}`)
  })

  it('codes bytes the samples miss: one odd byte in a block of digits, random bytes, all 256 values, one value only', () => {
    const digits = Buffer.from('1234567890,'.repeat(6000), 'latin1')
    digits[4097] = 0 // not a sampled position (every 4th), not printable: the block is counted in full
    digits[40_001] = 0x7e // printable: has a code from the floor
    for (const input of [
      digits,
      randomBytes(100_000),
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.alloc(70_000, 48),
      Buffer.alloc(1, 200),
    ])
      assert.deepEqual(inflate(rawHuffmanDeflate(input)), input)
  })

  it('ends every output byte-aligned and not final: outputs join into one stream, also empty ones', () => {
    const parts = [klinesJson(300, 1), Buffer.alloc(0), randomBytes(33_000), Buffer.from(','), klinesJson(10, 2)]
    const joined = Buffer.concat(parts.map((p) => rawHuffmanDeflate(p)))
    assert.deepEqual(inflate(joined), Buffer.concat(parts))
    assert.deepEqual(
      rawHuffmanDeflate(Buffer.alloc(0)),
      Buffer.from([0, 0, 0, 0xff, 0xff]),
      'an empty stored block, as a zlib sync flush',
    )
  })

  it('makes one gzip member that gunzip reads, from pieces deflated on their own and text between them', async () => {
    const a = klinesJson(500, 3)
    const b = klinesJson(800, 4)
    async function* pieces() {
      yield '{"data":{'
      yield deflatePiece([a.subarray(0, 1000), a.subarray(1000)])
      yield ','
      yield deflatePiece(b)
      yield '}}'
    }
    const chunks: Buffer[] = []
    for await (const c of gzipMember(pieces())) chunks.push(c)
    assert.deepEqual(
      gunzipSync(Buffer.concat(chunks)),
      Buffer.concat([Buffer.from('{"data":{'), a, Buffer.from(','), b, Buffer.from('}}')]),
    )
  })
})

describe('codeLengths', () => {
  it('gives every used symbol a code of at most the limit, a complete prefix code, none to unused symbols', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 1e6 }), { minLength: 2, maxLength: 286 }),
        fc.integer({ min: 7, max: 15 }),
        (freq, limit) => {
          const used = freq.filter((f) => f > 0).length
          fc.pre(used >= 2 && used <= 2 ** limit)
          const lengths = codeLengths(freq, limit)
          freq.forEach((f, s) => assert.equal(lengths[s] > 0, f > 0, `symbol ${s}`))
          assert.ok(Math.max(...lengths) <= limit)
          assert.equal(kraft(lengths), 1)
        },
      ),
      { numRuns: 500 },
    )
  })

  it('cuts a Fibonacci histogram (an unlimited tree 30 deep) to 15 bits, and gives a lone symbol one bit', () => {
    const fib = [1, 1]
    while (fib.length < 30) fib.push(fib[fib.length - 1] + fib[fib.length - 2])
    const lengths = codeLengths(fib, 15)
    assert.equal(Math.max(...lengths), 15)
    assert.equal(kraft(lengths), 1)
    assert.deepEqual([...codeLengths([0, 5, 0], 15)], [0, 1, 0])
  })

  it('is optimal where no limit binds: the known lengths of a textbook histogram', () => {
    // a:45 b:13 c:12 d:16 e:9 f:5 (CLRS 16.3): a 1 bit, b c d 3 bits, e f 4 bits
    assert.deepEqual([...codeLengths([45, 13, 12, 16, 9, 5], 15)], [1, 3, 3, 3, 4, 4])
  })
})

describe('canonicalCodes', () => {
  it('assigns RFC 1951 3.2.2 codes (its example: lengths 3 3 3 3 3 2 4 4), bit-reversed for LSB-first output', () => {
    const reverse = (c: number, l: number) => parseInt(c.toString(2).padStart(l, '0').split('').reverse().join(''), 2)
    const lengths = Uint8Array.from([3, 3, 3, 3, 3, 2, 4, 4])
    const expected = [0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111]
    assert.deepEqual(
      [...canonicalCodes(lengths)],
      expected.map((c, i) => reverse(c, lengths[i])),
    )
  })
})
