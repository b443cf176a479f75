/** @module Deflate's bit output (least significant bit first, 16 at a time) and the header of a dynamic block of literals (RFC 1951 3.2.7). */
import { canonicalCodes, codeLengths } from './huffman-codes.js'

/**
 * Bits appended from the lowest, flushed 16 at a time (little endian, at any byte offset) into
 * `out`, which the caller sizes with a byte to spare. Fewer than 16 bits wait in `acc`, so 16 more
 * never reach its sign bit.
 */
export class BitWriter {
  acc = 0
  bits = 0
  /** The next byte of `out` to write. */
  at = 0
  readonly view: DataView
  constructor(readonly out: Uint8Array) {
    this.view = new DataView(out.buffer, out.byteOffset, out.length)
  }
  /** `n` <= 16 bits of `value`. */
  put(value: number, n: number): void {
    this.acc |= value << this.bits
    this.bits += n
    if (this.bits >= 16) {
      this.view.setUint16(this.at, this.acc, true)
      this.at += 2
      this.acc >>>= 16
      this.bits -= 16
    }
  }
  /** Pads to a whole byte with zero bits and writes out the bits waiting. */
  align(): void {
    for (; this.bits > 0; this.bits -= 8) {
      this.out[this.at++] = this.acc & 255
      this.acc >>>= 8
    }
    this.bits = 0
  }
}

/** The longest code-length code. */
const MAX_CL_BITS = 7
/** The order code-length code lengths are sent in (RFC 1951 3.2.7). */
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
const EXTRA_BITS: Record<number, number> = { 16: 2, 17: 3, 18: 7 }

/** The code lengths of both alphabets, run-length coded with symbols 16 (repeat previous 3-6), 17 (3-10 zeros), 18 (11-138 zeros): [symbol, extra bits value] pairs. */
function runLengths(lengths: Uint8Array): number[] {
  const out: number[] = []
  for (let i = 0; i < lengths.length;) {
    const l = lengths[i]
    let run = 1
    while (i + run < lengths.length && lengths[i + run] === l) run++
    i += run
    if (l === 0) {
      while (run >= 11) {
        const r = Math.min(run, 138)
        out.push(18, r - 11)
        run -= r
      }
      if (run >= 3) {
        out.push(17, run - 3)
        run = 0
      }
      for (; run > 0; run--) out.push(0, 0)
      continue
    }
    out.push(l, 0)
    run--
    while (run >= 3) {
      const r = Math.min(run, 6)
      out.push(16, r - 3)
      run -= r
    }
    for (; run > 0; run--) out.push(l, 0)
  }
  return out
}

/** The header of a dynamic block (not final) whose literal codes are `lengths` (257 entries, 256 = end of block), its distance codes two unused 1-bit codes (as zlib sends). */
export function writeHeader(w: BitWriter, lengths: Uint8Array): void {
  const hlit = 257 // literals and end of block: no length codes
  const all = new Uint8Array(hlit + 2)
  all.set(lengths.subarray(0, hlit))
  all[hlit] = 1
  all[hlit + 1] = 1
  const rle = runLengths(all)
  const clFreq = new Uint32Array(19)
  for (let i = 0; i < rle.length; i += 2) clFreq[rle[i]]++
  const clLengths = codeLengths(clFreq, MAX_CL_BITS)
  const clCodes = canonicalCodes(clLengths)
  let hclen = 19
  while (hclen > 4 && clLengths[CL_ORDER[hclen - 1]] === 0) hclen--
  w.put(0b100, 3) // BFINAL 0, BTYPE 10 (dynamic)
  w.put(hlit - 257, 5)
  w.put(2 - 1, 5)
  w.put(hclen - 4, 4)
  for (let i = 0; i < hclen; i++) w.put(clLengths[CL_ORDER[i]], 3)
  for (let i = 0; i < rle.length; i += 2) {
    const sym = rle[i]
    w.put(clCodes[sym], clLengths[sym])
    if (sym >= 16) w.put(rle[i + 1], EXTRA_BITS[sym])
  }
}
