import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { sessionMinutes, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { BAR_FIELDS, allocBars, rowsOfBars } from '../domain/bars.js'
import {
  ChunkCorruptError,
  ColumnKind,
  chunkTimestamps,
  decodeChunk,
  decodeChunkInto,
  encodeChunk,
  exactExponent,
  verifyChunk,
} from './chunk-codec.js'

const sameBits = (a: Float64Array, b: Float64Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))

/** The kind byte of each column (FORMAT.md, "Chunk BLOB"), walking the columns as the decoder does. */
function columnKinds(blob: Uint8Array, n: number): number[] {
  let at = 5
  while (blob[at++] >= 128);
  const kinds: number[] = []
  for (let f = 0; f < BAR_FIELDS.length; f++) {
    const kind = blob[at++]
    kinds.push(kind)
    if (kind === ColumnKind.Float64) at += 8 * n
    else if (kind !== ColumnKind.AllNaN) {
      at++
      for (let i = 0; i < n; i++) while (blob[at++] >= 128);
    }
  }
  assert.equal(at, blob.length)
  return kinds
}

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
  it('round-trips scaled integers of every varint length (1 to 8 bytes), either sign, plain and delta, divided and multiplied', () => {
    // |r| of 0..50 bits, so the zigzag varints take every length; / 100 and * 1000 give exponents 2 and -3.
    const scaledInt = fc
      .tuple(fc.nat({ max: 50 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean())
      .map(([bits, u, neg]) => (neg ? -1 : 1) * Math.floor(u * 2 ** bits))
    fc.assert(
      fc.property(fc.array(scaledInt, { minLength: 1, maxLength: 200 }), fc.boolean(), (ints, sorted) => {
        if (sorted) ints.sort((a, b) => a - b) // ascending: delta coding wins
        const bars = allocBars(ints.length)
        bars.timestamp.set(ints.map((r) => r * 1000))
        bars.open.set(ints.map((r) => r / 100))
        for (const f of BAR_FIELDS.slice(2)) bars[f].set(ints)
        const back = decodeChunk(encodeChunk(bars))
        for (const f of BAR_FIELDS) assert.ok(sameBits(back[f], bars[f]), f)
      }),
      { numRuns: 2_000 },
    )
  })
  it('round-trips realistic bars exactly and stores 1m bars in well under 16 bytes each', () => {
    const bars = walkBars(sessionMinutes('SH', tradingDays('SH', 19000, 5)), [0.1, 0.5, 0.9, 0.3])
    bars.prevClose.fill(NaN)
    const blob = encodeChunk(bars)
    assert.deepEqual(rowsOfBars(decodeChunk(blob)), rowsOfBars(bars))
    assert.ok(blob.length / bars.close.length < 16, `${(blob.length / bars.close.length).toFixed(1)} bytes/bar`)
  })
  it('decodes any range [skip, end) of a chunk into any offset exactly as the whole decode holds it, in every column kind', () => {
    const minutes = walkBars(sessionMinutes('SH', tradingDays('SH', 19000, 2)), [0.1, 0.5, 0.9, 0.3])
    minutes.prevClose.fill(NaN) // AllNaN
    minutes.amount.set(minutes.amount.map((a) => a * Math.PI)) // Float64
    minutes.volume.set(minutes.volume.map((v, i) => (i % 2 ? v : 1))) // Scaled: deltas would be larger
    const blob = encodeChunk(minutes)
    const whole = decodeChunk(blob)
    const n = minutes.close.length
    assert.deepEqual(new Set(columnKinds(blob, n)), new Set(Object.values(ColumnKind)))
    fc.assert(
      fc.property(fc.nat({ max: n }), fc.nat({ max: n }), fc.nat({ max: 7 }), (a, b, offset) => {
        const [skip, end] = a <= b ? [a, b] : [b, a]
        const target = allocBars(offset + end - skip)
        decodeChunkInto(blob, target, offset, skip, n, end)
        for (const f of BAR_FIELDS) assert.ok(sameBits(target[f].subarray(offset), whole[f].subarray(skip, end)), f)
      }),
    )
  })
  it('decodes a range the same when given the chunk timestamps (the column stepped over, scaled or raw doubles)', () => {
    const minutes = walkBars(sessionMinutes('SH', tradingDays('SH', 19000, 2)), [0.1, 0.5, 0.9, 0.3])
    const odd = { ...minutes, timestamp: minutes.timestamp.map((t) => t + Math.PI) } // Float64 timestamps
    for (const bars of [minutes, odd]) {
      const blob = encodeChunk(bars)
      const n = bars.close.length
      const ts = chunkTimestamps(blob)
      assert.ok(sameBits(ts, bars.timestamp))
      fc.assert(
        fc.property(fc.nat({ max: n }), fc.nat({ max: n }), fc.nat({ max: 7 }), (a, b, offset) => {
          const [skip, end] = a <= b ? [a, b] : [b, a]
          const plain = allocBars(offset + end - skip)
          const given = allocBars(offset + end - skip)
          decodeChunkInto(blob, plain, offset, skip, n, end)
          decodeChunkInto(blob, given, offset, skip, n, end, ts)
          for (const f of BAR_FIELDS) assert.ok(sameBits(given[f], plain[f]), f)
        }),
        { numRuns: 300 },
      )
      assert.throws(() => decodeChunkInto(blob, allocBars(n), 0, 0, n, n, ts.subarray(1)), ChunkCorruptError)
    }
  })
  it('writes version 2: the version byte, then the CRC-32 of every later byte (FORMAT.md)', () => {
    const blob = encodeChunk(walkBars(tradingDays('SH', 19000, 30), [0.3]))
    assert.equal(blob[0], 2)
    assert.equal(Buffer.from(blob).readUInt32LE(1), zlib.crc32(blob.subarray(5)))
  })
  it('detects any single damaged byte of a chunk instead of decoding wrong bars', () => {
    const blob = encodeChunk(walkBars(sessionMinutes('SH', tradingDays('SH', 19000, 2)), [0.1, 0.5]))
    fc.assert(
      fc.property(fc.nat({ max: blob.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
        const bad = blob.slice()
        bad[at] ^= flip
        assert.throws(() => decodeChunk(bad), ChunkCorruptError)
        assert.throws(() => verifyChunk(bad), ChunkCorruptError)
      }),
    )
    assert.throws(() => decodeChunk(blob.subarray(0, blob.length - 1)), ChunkCorruptError)
  })
  it('refuses a chunk whose bar count differs from what the index planned', () => {
    const bars = walkBars(tradingDays('SH', 19000, 30), [0.3])
    const blob = encodeChunk(bars)
    assert.throws(
      () => decodeChunkInto(blob, allocBars(10_000), 0, 0, 10_000),
      /holds 30 bars where the index says 10000/,
    )
    assert.throws(() => decodeChunkInto(blob, allocBars(20), 0, 0), ChunkCorruptError)
  })
  it('still reads version 1 chunks (no checksum), as written by mdq 0.1.0, and rejects broken ones', () => {
    // encodeChunk of 0.1.0 for three 1m bars: 2 and 1-decimal prices, integer volumes, one amount of pi, no prev_close.
    const v1 = Buffer.from(
      '010303fca8dec2a2010c0c0302d20f02030302da0f01010302ce0f02030302d40f010102fe18065a0100000000407cc740333333333376a740182d4454fb21094000',
      'hex',
    )
    assert.deepEqual(rowsOfBars(decodeChunk(v1)), [
      {
        timestamp: 1704160200000,
        open: 10.01,
        high: 10.05,
        low: 9.99,
        close: 10.02,
        volume: 1200,
        amount: 12024.5,
        prevClose: NaN,
      },
      {
        timestamp: 1704160260000,
        open: 10.02,
        high: 10.04,
        low: 10,
        close: 10.01,
        volume: 300,
        amount: 3003.1,
        prevClose: NaN,
      },
      {
        timestamp: 1704160320000,
        open: 10,
        high: 10.03,
        low: 9.98,
        close: 10,
        volume: 4500,
        amount: Math.PI,
        prevClose: NaN,
      },
    ])
    verifyChunk(v1)
    assert.throws(() => verifyChunk(v1.subarray(0, v1.length - 3)), ChunkCorruptError)
    const kind = Buffer.from(v1)
    kind[2] = 7 // the timestamp column's kind (after version and n)
    assert.throws(() => decodeChunk(kind), /unknown kind 7/)
  })
  it('picks the smallest exact decimal exponent', () => {
    assert.equal(exactExponent(Float64Array.of(10.01, 9.5)), 2)
    assert.equal(exactExponent(Float64Array.of(1_700_000_040_000, 1_700_000_100_000)), -4)
    assert.equal(exactExponent(Float64Array.of(Math.PI)), undefined)
  })
  it('stores a column of inexact doubles raw (FLOAT64) and a column of minutes as scaled deltas', () => {
    const bars = allocBars(2)
    bars.timestamp.set([1_700_000_040_000, 1_700_000_100_000])
    bars.open.set([Math.PI, Math.E])
    const blob = encodeChunk(bars)
    // version, crc (4), n = 2, then timestamp: kind, e = -4, two varints; then open's kind.
    assert.equal(blob[6], ColumnKind.ScaledDelta)
    assert.equal((blob[7] << 24) >> 24, -4)
    const openKindAt = 8 + 5 + 1 // varint(zigzag(170000004)) takes 5 bytes, the delta of 6 one
    assert.equal(blob[openKindAt], ColumnKind.Float64)
    assert.equal(Buffer.from(blob).readDoubleLE(openKindAt + 1), Math.PI)
  })
  it('rejects a chunk of an unknown version', () => {
    assert.throws(() => decodeChunk(Uint8Array.of(9, 0)), /version 9/)
  })
})
