import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { gunzipSync } from 'node:zlib'
import fc from 'fast-check'
import { deflatePiece, gzipMember, PIECE_CODERS, type DeflatedPiece } from './gzip-member.js'

async function member(pieces: (DeflatedPiece | string)[]): Promise<Buffer> {
  async function* each() {
    yield* pieces
  }
  const out: Buffer[] = []
  for await (const bytes of gzipMember(each())) out.push(bytes)
  return Buffer.concat(out)
}

describe('gzipMember', () => {
  it("joins pieces deflated by any coder (the workers' and the compression bench's) and text into one member gunzip reads", async () => {
    const coder = fc.constantFrom(...PIECE_CODERS)
    const piece = fc.tuple(fc.array(fc.uint8Array({ maxLength: 3000 }), { maxLength: 3 }), coder)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(piece, fc.string({ maxLength: 20 })), { maxLength: 6 }), async (parts) => {
        const text = (s: string) => s.replace(/[^\x20-\x7e]/g, '') // Latin-1 framing, as the routes yield
        const deflated = parts.map((p) => (typeof p === 'string' ? text(p) : deflatePiece(p[0], { coder: p[1] })))
        const plain = Buffer.concat(
          parts.map((p) => (typeof p === 'string' ? Buffer.from(text(p), 'latin1') : Buffer.concat(p[0]))),
        )
        assert.deepEqual(gunzipSync(await member(deflated)), plain)
      }),
      { numRuns: 200 },
    )
  })
})
