import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { constants, inflateRawSync } from 'node:zlib'
import fc from 'fast-check'
import { rawHuffmanDeflate } from './huffman-deflate.js'

/** zlib's inflate of a raw stream that ends on a sync flush (not final), as the pieces do. */
const inflate = (deflated: Uint8Array) => inflateRawSync(deflated, { finishFlush: constants.Z_SYNC_FLUSH })

/** `n` bytes of `alphabet` at pseudo-random. */
function text(alphabet: string, n: number, seed: number): Buffer {
  let x = seed
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    out[i] = alphabet.charCodeAt(x % alphabet.length)
  }
  return out
}

describe('rawHuffmanDeflate, pairs of short codes (eight bytes a step)', () => {
  it('inflates JSON numbers with stray bytes, cut into pieces of any length', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 30 }),
        fc.array(fc.tuple(fc.nat({ max: 30_000 }), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }),
        (seed, strays, cuts) => {
          const json = text('0123456789,.', 30_000, seed)
          for (const [at, byte] of strays) json[at] = byte // a byte of no pair (or of no code at all) amid pairs
          const pieces: Buffer[] = []
          for (let at = 0, k = 0; at < json.length; k++) {
            const n = k < cuts.length ? cuts[k] : json.length
            pieces.push(json.subarray(at, at + n))
            at += n
          }
          assert.deepEqual(inflate(rawHuffmanDeflate(pieces)), json)
        },
      ),
      { numRuns: 60 },
    )
  })

  it("codes each block with its own pairs: digits, then letters with a few digits (the first block's pairs cleared), then more short codes than get pairs", () => {
    const digits = text('0123456789,', 70_000, 1)
    const letters = text('abcdefghijklmnopqrstuvwxyz', 70_000, 2)
    for (let at = 5; at < letters.length; at += 997) letters.write('05', at, 'latin1') // in the digits' pairs before, long codes now
    const many = text('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 70_000, 3) // 62 codes of 6 bits
    const all = Buffer.concat([digits, letters, many, digits])
    assert.deepEqual(inflate(rawHuffmanDeflate(all)), all)
    assert.deepEqual(inflate(rawHuffmanDeflate([letters, digits])), Buffer.concat([letters, digits]))
  })
})
