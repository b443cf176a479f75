/** @module Raw deflate with Huffman codes only (RFC 1951 dynamic blocks of literals, no string matching), written in JS: zlib's Z_HUFFMAN_ONLY without its per-byte symbol buffer. */
import { BitWriter, writeHeader } from './deflate-bits.js'
import { canonicalCodes, codeLengths, MAX_BITS } from './huffman-codes.js'

/**
 * Bytes per block: each block gets the codes of its own bytes (a column of timestamps, of prices...).
 * 64 KB: half the blocks of 32 KB for 0.2% more bytes on the bulk pull's JSON; 128 KB would mix columns (2% more).
 */
const BLOCK = 1 << 16
const END_OF_BLOCK = 256

/** The most bytes rawHuffmanDeflate writes for `n` bytes: 15 bits a byte at worst, plus headers and the closing empty stored block. */
const bound = (n: number) => Math.ceil((n * MAX_BITS) / 8) + (Math.ceil(n / BLOCK) + 1) * 320 + 16

const freq = new Uint32Array(257)
/** Where a deflate is written before its exact copy is taken: one per thread, kept up to SCRATCH_KEPT bytes (a one-symbol task of the bulk pull: ~1.3 MB of room for ~300 KB deflated). */
let scratch = Buffer.alloc(0)
const SCRATCH_KEPT = 64 << 20

/** Byte ranges [from, to) of pieces (pieces[k]), for blocks that span the pieces' boundaries. */
interface Span {
  readonly piece: Uint8Array
  readonly from: number
  readonly to: number
}

/**
 * Counts piece[from, to) into `freq`: every byte when `full`, else samples of 4 bytes (one 32-bit
 * read) at pseudo-random steps of 4 to 67 bytes, about one byte in 9 (a fixed step would see the
 * same columns of fixed-width numbers: with 8-byte prices and a step of 4, never a comma). `seed`
 * carries the generator across spans.
 */
function count(piece: Uint8Array, from: number, to: number, full: boolean, seed: number): number {
  if (full) {
    for (let i = from; i < to; i++) freq[piece[i]]++
    return seed
  }
  const input = new DataView(piece.buffer, piece.byteOffset, piece.length)
  let r = seed
  for (let i = from; i < to - 3; i += 4 + (r >>> 26)) {
    const word = input.getInt32(i, true)
    freq[word & 255]++
    freq[(word >>> 8) & 255]++
    freq[(word >>> 16) & 255]++
    freq[word >>> 24]++
    r = (Math.imul(r, 1664525) + 1013904223) | 0
  }
  return r
}

/**
 * The literal codes of one block's bytes: counted on a sample of its bytes (or every byte when
 * `full`). A byte that occurs only between samples may then have no code: printable ASCII gets a
 * long one anyway, anything else makes writeBlock fail, and the block is redone from a full count.
 */
function blockCodes(spans: readonly Span[], full: boolean): Uint8Array {
  freq.fill(0)
  let seed = 1
  for (const span of spans) seed = count(span.piece, span.from, span.to, full, seed)
  // Printable ASCII the samples missed (a JSON key's letters, a quote) keeps a long code, so text
  // seldom needs the full count.
  if (!full) for (let c = 0x20; c < 0x7f; c++) if (freq[c] === 0) freq[c] = 1
  freq[END_OF_BLOCK] = 1
  return codeLengths(freq, MAX_BITS)
}

/** A byte value's code in the current block: its length in the low 4 bits, the code (bit-reversed) above them; NO_CODE when it has none. */
const single = new Int32Array(256)
const NO_CODE = 1 << 30
/**
 * Two bytes' codes in one, by the first byte | the second << 8, for the bytes of codes of 8 bits or
 * less (the digits, commas and dots of JSON numbers): the length in the low 5 bits, the two codes
 * above them; 0 for pairs coded a byte at a time.
 */
const pairs = new Int32Array(1 << 16)
/** At most so many bytes get pairs (the first of codes <= 8 bits): the table is filled anew each block. */
const PAIRED = 32
/** The entries of `pairs` set for the current block, to clear for the next. */
const paired = new Int32Array(PAIRED * PAIRED)
let pairedCount = 0

/** `single` and `pairs` for a block whose literal codes are `codes`, of `lengths`. */
function setCodes(lengths: Uint8Array, codes: Uint16Array): void {
  for (let c = 0; c < 256; c++) single[c] = lengths[c] === 0 ? NO_CODE : lengths[c] | (codes[c] << 4)
  for (let k = 0; k < pairedCount; k++) pairs[paired[k]] = 0
  const short: number[] = []
  for (let c = 0; c < 256 && short.length < PAIRED; c++) if (lengths[c] > 0 && lengths[c] <= 8) short.push(c)
  pairedCount = 0
  for (const a of short) {
    for (const b of short) {
      const k = a | (b << 8)
      pairs[k] = ((codes[a] | (codes[b] << lengths[a])) << 5) | (lengths[a] + lengths[b])
      paired[pairedCount++] = k
    }
  }
}

/**
 * The hot loop: codes of piece[from, to) appended to w, or false if a byte had no code (w then
 * holds garbage: the caller restores it). Eight bytes are read at once and coded as four pairs
 * when all four have an entry, else one byte is coded alone and the next eight read. Fewer than 16
 * bits wait in `acc` between steps, so a pair's 16 never reach its sign bit; the next two bytes of
 * output are written every step and kept (`at` moved on) when 16 bits are full: no branch the data decides.
 */
function encode(w: BitWriter, piece: Uint8Array, from: number, to: number): boolean {
  const input = new DataView(piece.buffer, piece.byteOffset, piece.length)
  const out = w.view
  let acc = w.acc
  let bits = w.bits
  let at = w.at
  let seen = 0
  let i = from
  for (;;) {
    for (const end = to - 7; i < end; i += 8) {
      const low = input.getInt32(i, true)
      const high = input.getInt32(i + 4, true)
      const e0 = pairs[low & 0xffff]
      const e1 = pairs[low >>> 16]
      const e2 = pairs[high & 0xffff]
      const e3 = pairs[high >>> 16]
      if (e0 === 0 || e1 === 0 || e2 === 0 || e3 === 0) break
      acc |= (e0 >>> 5) << bits
      bits += e0 & 31
      out.setUint16(at, acc, true)
      let full = bits >>> 4 // 0 or 1: bits < 32
      at += full << 1
      acc >>>= full << 4
      bits &= 15
      acc |= (e1 >>> 5) << bits
      bits += e1 & 31
      out.setUint16(at, acc, true)
      full = bits >>> 4
      at += full << 1
      acc >>>= full << 4
      bits &= 15
      acc |= (e2 >>> 5) << bits
      bits += e2 & 31
      out.setUint16(at, acc, true)
      full = bits >>> 4
      at += full << 1
      acc >>>= full << 4
      bits &= 15
      acc |= (e3 >>> 5) << bits
      bits += e3 & 31
      out.setUint16(at, acc, true)
      full = bits >>> 4
      at += full << 1
      acc >>>= full << 4
      bits &= 15
    }
    if (i >= to) break
    const e = single[piece[i++]]
    seen |= e
    acc |= (e >>> 4) << bits
    bits += e & 15
    out.setUint16(at, acc, true)
    const full = bits >>> 4
    at += full << 1
    acc >>>= full << 4
    bits &= 15
  }
  w.acc = acc
  w.bits = bits
  w.at = at
  return (seen & NO_CODE) === 0
}

/** One block (header, bytes, end of block); false, with nothing kept, when a byte has no code. */
function writeBlock(w: BitWriter, spans: readonly Span[], lengths: Uint8Array): boolean {
  const { acc, bits, at } = w
  const codes = canonicalCodes(lengths)
  setCodes(lengths, codes)
  writeHeader(w, lengths)
  for (const span of spans) {
    if (!encode(w, span.piece, span.from, span.to)) {
      w.acc = acc
      w.bits = bits
      w.at = at
      return false
    }
  }
  w.put(codes[END_OF_BLOCK], lengths[END_OF_BLOCK])
  return true
}

/**
 * The bytes of `pieces`, in order, as raw deflate: dynamic-Huffman blocks of about BLOCK literals
 * (no string matching, as zlib's Z_HUFFMAN_ONLY), ending on an empty stored block (as zlib's
 * Z_SYNC_FLUSH: byte-aligned and not final), so that such outputs can be joined in order.
 * A copy of its own, or with `borrow` a view of this thread's scratch memory, good until the next
 * call: for a caller that copies it at once (a worker, into the memory it moves), one copy fewer.
 */
export function rawHuffmanDeflate(pieces: Uint8Array | readonly Uint8Array[], { borrow = false } = {}): Buffer {
  const list = pieces instanceof Uint8Array ? [pieces] : pieces
  let total = 0
  for (const p of list) total += p.length
  const most = bound(total)
  const target = most <= scratch.length ? scratch : Buffer.allocUnsafe(most)
  if (most <= SCRATCH_KEPT) scratch = target
  const w = new BitWriter(target)
  let spans: Span[] = []
  let size = 0 // bytes in spans
  const flush = () => {
    if (!writeBlock(w, spans, blockCodes(spans, false))) writeBlock(w, spans, blockCodes(spans, true))
    spans = []
    size = 0
  }
  for (const piece of list) {
    for (let from = 0; from < piece.length;) {
      const to = Math.min(piece.length, from + BLOCK - size)
      spans.push({ piece, from, to })
      size += to - from
      from = to
      if (size === BLOCK) flush()
    }
  }
  if (size > 0) flush()
  // An empty stored block: BFINAL 0, BTYPE 00, padding, LEN 0, NLEN 0xffff.
  w.put(0, 3)
  w.align()
  target[w.at++] = 0
  target[w.at++] = 0
  target[w.at++] = 0xff
  target[w.at++] = 0xff
  const deflated = target.subarray(0, w.at)
  return borrow ? deflated : Buffer.from(deflated) // a copy: the scratch is written again by the next call
}
