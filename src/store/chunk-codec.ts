/** @module Chunk BLOB encoding of columnar bars (the SQLite store's chunks, the ClickHouse store's blobs); every byte is drawn in sqlite/FORMAT.md. */
import { crc32 } from 'node:zlib'
import { BAR_FIELDS, allocBars, barCount, type Bars } from '../domain/bars.js'
import { exactExponent as exactExponentIn, MAX_SCALED, pow10 } from '../domain/decimal.js'

/** First byte of every chunk BLOB written now: version 2 carries a CRC-32 of its body. */
export const CHUNK_VERSION = 2
/** Versions this build reads: 1 (no checksum, written before 2) stays readable. */
const LEGACY_VERSION = 1
/** Version 2: the version byte, then the CRC-32 (little-endian) of every byte after it. */
const CRC_END = 5

/** A chunk BLOB that fails its checksum or does not parse: the store file is damaged. */
export class ChunkCorruptError extends Error {
  override readonly name = 'ChunkCorruptError'
}
/** Per-column encodings (sqlite/FORMAT.md, "Chunk BLOB"). */
export const ColumnKind = { AllNaN: 0, Float64: 1, Scaled: 2, ScaledDelta: 3 } as const
export type ColumnKind = (typeof ColumnKind)[keyof typeof ColumnKind]

const MIN_EXP = -5
const MAX_EXP = 9

class ByteWriter {
  bytes = new Uint8Array(1024)
  length = 0
  #reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return
    let size = this.bytes.length * 2
    while (size < this.length + n) size *= 2
    const next = new Uint8Array(size)
    next.set(this.bytes.subarray(0, this.length))
    this.bytes = next
  }
  byte(b: number): void {
    this.#reserve(1)
    this.bytes[this.length++] = b
  }
  varint(z: number): void {
    this.#reserve(8)
    while (z >= 128) {
      this.bytes[this.length++] = (z % 128) | 128
      z = Math.floor(z / 128)
    }
    this.bytes[this.length++] = z
  }
  /** The zigzag varints of n integers (of their differences when `delta`), `size` bytes in all. */
  varints(values: Float64Array, n: number, delta: boolean, size: number): void {
    this.#reserve(size)
    const bytes = this.bytes
    let at = this.length
    let prev = 0
    for (let i = 0; i < n; i++) {
      const r = values[i]
      let z = zigzag(delta ? r - prev : r)
      prev = r
      // Below 2^31 with integer ops; above, the same digits by division.
      if (z < 2147483648) {
        while (z >= 128) {
          bytes[at++] = (z & 127) | 128
          z >>>= 7
        }
        bytes[at++] = z
        continue
      }
      while (z >= 128) {
        bytes[at++] = (z % 128) | 128
        z = Math.floor(z / 128)
      }
      bytes[at++] = z
    }
    this.length = at
  }
  float64s(values: Float64Array): void {
    this.#reserve(values.length * 8)
    const view = new DataView(this.bytes.buffer)
    for (let i = 0; i < values.length; i++) view.setFloat64(this.length + i * 8, values[i], true)
    this.length += values.length * 8
  }
}

const zigzag = (v: number) => (v >= 0 ? v * 2 : -v * 2 - 1)
/** Bytes of z's varint: comparisons with 2^(7k), no Math.log2 (scaled timestamps take 4 bytes each). */
const varintSize = (z: number) =>
  z < 128
    ? 1
    : z < 16384
      ? 2
      : z < 2097152
        ? 3
        : z < 268435456
          ? 4
          : z < 34359738368
            ? 5
            : z < 4398046511104
              ? 6
              : z < 562949953421312
                ? 7
                : Math.ceil(Math.log2(z + 1) / 7)

/** The smallest exponent e in -5..9 with every value exactly v = r / 10^e for an integer |r| < 2^51, or undefined. */
export const exactExponent = (values: Float64Array): number | undefined => exactExponentIn(values, MIN_EXP, MAX_EXP)

/** Scaled integers of the column being encoded, computed once for the size estimate and the write. */
let scaled = new Float64Array(1024)

function encodeColumn(w: ByteWriter, values: Float64Array): void {
  const n = values.length
  let allNaN = true
  for (let i = 0; i < n && allNaN; i++) allNaN = values[i] !== values[i]
  if (allNaN) return w.byte(ColumnKind.AllNaN)
  if (scaled.length < n) scaled = new Float64Array(n)
  const e = exactExponentIn(values, MIN_EXP, MAX_EXP, MAX_SCALED, scaled)
  if (e === undefined) {
    w.byte(ColumnKind.Float64)
    return w.float64s(values)
  }
  let plain = 0
  let delta = 0
  let prev = 0
  for (let i = 0; i < n; i++) {
    const r = scaled[i]
    plain += varintSize(zigzag(r))
    delta += varintSize(zigzag(r - prev))
    prev = r
  }
  const useDelta = delta < plain
  w.byte(useDelta ? ColumnKind.ScaledDelta : ColumnKind.Scaled)
  w.byte(e & 0xff)
  w.varints(scaled, n, useDelta, useDelta ? delta : plain)
}

/**
 * One writer for every chunk, emptied per chunk: a fresh one per chunk grew from 1 KB to 64 KB for
 * each week of 1m bars, about 1 GB of short-lived buffers in a 10M-row import (GC threads' time).
 */
const writer = new ByteWriter()

export function encodeChunk(bars: Bars): Uint8Array {
  const w = writer
  w.length = 0
  w.byte(CHUNK_VERSION)
  for (let i = 1; i < CRC_END; i++) w.byte(0)
  w.varint(barCount(bars))
  for (const f of BAR_FIELDS) encodeColumn(w, bars[f])
  const blob = w.bytes.slice(0, w.length)
  new DataView(blob.buffer).setUint32(1, crc32(blob.subarray(CRC_END)), true)
  return blob
}

/**
 * The hot loop of every read: n zigzag varints, optionally delta-summed, scaled by 10^-e, values
 * [skip, end) written (every varint is still walked: they have no fixed width). Returns the offset
 * after the column. The varints are read by `readVarint` (inlined by V8), with one loop per case
 * (plain or delta, divided or multiplied) so no loop tests a flag per value.
 */
function decodeScaled(
  blob: Uint8Array,
  at: number,
  n: number,
  delta: boolean,
  e: number,
  out: Float64Array,
  shift: number,
  skip: number,
  end: number,
): number {
  const p = pow10(e)
  let i = 0
  if (delta) {
    // Values before `skip` are summed only: later ones are differences from them.
    let acc = 0
    for (; i < skip; i++) {
      acc += readVarint(blob, at)
      at = varintEnd
    }
    if (e >= 0)
      for (; i < end; i++) {
        acc += readVarint(blob, at)
        at = varintEnd
        out[i + shift] = acc / p
      }
    else
      for (; i < end; i++) {
        acc += readVarint(blob, at)
        at = varintEnd
        out[i + shift] = acc * p
      }
  } else {
    for (; i < skip; i++) while (blob[at++] >= 128);
    if (e >= 0)
      for (; i < end; i++) {
        out[i + shift] = readVarint(blob, at) / p
        at = varintEnd
      }
    else
      for (; i < end; i++) {
        out[i + shift] = readVarint(blob, at) * p
        at = varintEnd
      }
  }
  // Past `end` only the column's length matters: step over the remaining varints.
  for (; i < n; i++) while (blob[at++] >= 128);
  return at
}

/** Where the last readVarint stopped (a second result without an allocation). */
let varintEnd = 0

/**
 * The zigzag varint at `at`, its end in `varintEnd`. Up to 4 bytes (|v| < 2^27: every price and
 * daily timestamp delta) with int32 ops; longer ones by multiplication, exact to 2^53. Past the
 * BLOB's end a read gives undefined and ends the varint, so a truncated column reads past the end (decodeChunkInto rejects it).
 */
function readVarint(blob: Uint8Array, at: number): number {
  const b0 = blob[at]
  if (b0 < 128) {
    varintEnd = at + 1
    return (b0 >>> 1) ^ -(b0 & 1)
  }
  let z = b0 & 127
  let b = blob[at + 1]
  z |= (b & 127) << 7
  if (b < 128) {
    varintEnd = at + 2
    return (z >>> 1) ^ -(z & 1)
  }
  b = blob[at + 2]
  z |= (b & 127) << 14
  if (b < 128) {
    varintEnd = at + 3
    return (z >>> 1) ^ -(z & 1)
  }
  b = blob[at + 3]
  z |= (b & 127) << 21
  if (b < 128) {
    varintEnd = at + 4
    return (z >>> 1) ^ -(z & 1)
  }
  let mul = 268435456
  at += 4
  do {
    b = blob[at++]
    z += (b & 127) * mul
    mul *= 128
  } while (b >= 128)
  varintEnd = at
  // The sign is the first byte's low bit: `z % 2` on a double is a call to fmod (a tenth of a daily read, in the amounts).
  return b0 & 1 ? -(z + 1) / 2 : z / 2
}

/** Where the bar count starts: after the version byte, and after the checksum from version 2 on. */
function headerEnd(blob: Uint8Array): number {
  if (blob[0] === CHUNK_VERSION) return CRC_END
  if (blob[0] === LEGACY_VERSION) return 1
  throw new ChunkCorruptError(
    `chunk encoding version ${blob[0]} is not supported (this build reads ${LEGACY_VERSION} and ${CHUNK_VERSION})`,
  )
}

/** The number of bars in a chunk, read from its header only (not verified: see verifyChunk). */
export function chunkLength(blob: Uint8Array): number {
  let z = 0
  let mul = 1
  for (let at = headerEnd(blob); at < blob.length; at++) {
    z += (blob[at] & 127) * mul
    if (blob[at] < 128) return z
    mul *= 128
  }
  throw new ChunkCorruptError(`chunk of ${blob.length} bytes ends inside its header`)
}

/**
 * Throws ChunkCorruptError unless the BLOB is whole: its CRC-32 matches (version 2), or, for a
 * version 1 chunk without one, its columns parse to exactly its length.
 */
export function verifyChunk(blob: Uint8Array): void {
  if (headerEnd(blob) === CRC_END) {
    const stored = blob.length >= CRC_END ? new DataView(blob.buffer, blob.byteOffset, CRC_END).getUint32(1, true) : -1
    if (stored !== crc32(blob.subarray(CRC_END)))
      throw new ChunkCorruptError(`chunk of ${blob.length} bytes fails its CRC-32 checksum`)
  } else decodeChunk(blob)
}

export function decodeChunk(blob: Uint8Array): Bars {
  const bars = allocBars(chunkLength(blob))
  decodeChunkInto(blob, bars, 0)
  return bars
}

/** The header's end and bar count of a verified chunk (ChunkCorruptError when it fails its checksum). */
function openChunk(blob: Uint8Array, verify = true): { at: number; n: number } {
  let at = headerEnd(blob)
  if (at === CRC_END && verify) verifyChunk(blob)
  let b = blob[at++]
  let n = b & 127
  for (let mul = 128; b >= 128; mul *= 128) {
    b = blob[at++]
    n += (b & 127) * mul
  }
  return { at, n }
}

/**
 * Decodes one column at `at` (values [skip, end) into `out` from index `shift + skip`); returns the
 * offset after it.
 */
function decodeColumn(
  blob: Uint8Array,
  at: number,
  n: number,
  field: string,
  out: Float64Array,
  shift: number,
  skip: number,
  end: number,
): number {
  const kind = blob[at++] as ColumnKind
  if (kind === ColumnKind.AllNaN) {
    out.fill(NaN, skip + shift, end + shift)
    return at
  }
  if (kind === ColumnKind.Float64) {
    if (at + n * 8 > blob.length)
      throw new ChunkCorruptError(`chunk column ${field}: ${n} doubles do not fit its ${blob.length} bytes`)
    const view = new DataView(blob.buffer, blob.byteOffset + at, n * 8)
    for (let i = skip; i < end; i++) out[i + shift] = view.getFloat64(i * 8, true)
    return at + n * 8
  }
  if (kind === ColumnKind.Scaled || kind === ColumnKind.ScaledDelta) {
    const e = (blob[at++] << 24) >> 24
    if (e < MIN_EXP || e > MAX_EXP) throw new ChunkCorruptError(`chunk column ${field}: exponent ${e} out of range`)
    return decodeScaled(blob, at, n, kind === ColumnKind.ScaledDelta, e, out, shift, skip, end)
  }
  throw new ChunkCorruptError(`chunk column ${field}: unknown kind ${kind}`)
}

/** The offset after the column at `at`, its values not decoded. */
function skipColumn(blob: Uint8Array, at: number, n: number): number {
  const kind = blob[at++] as ColumnKind
  if (kind === ColumnKind.AllNaN) return at
  if (kind === ColumnKind.Float64) return at + n * 8
  at++ // the exponent
  for (let i = 0; i < n; i++) while (blob[at++] >= 128);
  return at
}

/**
 * The timestamps of a chunk alone (the first column): a read cut by its range finds the bars it
 * wants from them, then decodes only those of the other columns.
 */
export function chunkTimestamps(blob: Uint8Array): Float64Array {
  const { at, n } = openChunk(blob)
  const timestamps = new Float64Array(n)
  decodeColumn(blob, at, n, BAR_FIELDS[0], timestamps, 0, 0, n)
  return timestamps
}

/**
 * Decodes bars [skip, end) of a chunk (end: all of them) into `target` from index `at`: range reads
 * fill one allocation chunk by chunk, no concatenation. Delta-coded columns are still summed from
 * their start. The checksum is verified first (unless `timestamps`, the chunk's own from
 * chunkTimestamps, which verified it, are given: they are copied); `expectedCount` (the count the
 * caller planned with) must match.
 */
export function decodeChunkInto(
  blob: Uint8Array,
  target: Bars,
  at0: number,
  skip = 0,
  expectedCount?: number,
  end?: number,
  timestamps?: Float64Array,
): void {
  // With its timestamps from chunkTimestamps the chunk was verified already, and that column is only stepped over.
  const { n, at: columns } = openChunk(blob, timestamps === undefined)
  let at = columns
  if (expectedCount !== undefined && n !== expectedCount)
    throw new ChunkCorruptError(`chunk holds ${n} bars where the index says ${expectedCount}`)
  const stop = Math.min(end ?? n, n)
  if (at0 + stop - skip > barCount(target))
    throw new ChunkCorruptError(`chunk holds ${n} bars, more than the ${barCount(target) - at0 + skip} planned`)
  const shift = at0 - skip
  for (const f of BAR_FIELDS) {
    if (f === 'timestamp' && timestamps) {
      if (timestamps.length !== n)
        throw new ChunkCorruptError(`chunk holds ${n} bars, not the ${timestamps.length} timestamps given`)
      target.timestamp.set(timestamps.subarray(skip, stop), skip + shift)
      at = skipColumn(blob, at, n)
    } else at = decodeColumn(blob, at, n, f, target[f], shift, skip, stop)
  }
  // Past the end, Uint8Array reads give undefined (NaN values): a short or long BLOB is corrupt.
  if (at !== blob.length)
    throw new ChunkCorruptError(`chunk of ${blob.length} bytes ends at byte ${at} after its ${n} bars`)
}
