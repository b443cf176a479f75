/** @module Raw deflate with Huffman codes only (RFC 1951 dynamic blocks of literals, no string matching), written in JS: zlib's Z_HUFFMAN_ONLY without its per-byte symbol buffer. */

/** Bytes per block: each block gets the codes of its own bytes (a column of timestamps, of prices...). */
const BLOCK = 1 << 15
/** Deflate's longest literal/length code, and the longest code-length code. */
const MAX_BITS = 15
const MAX_CL_BITS = 7
const END_OF_BLOCK = 256
/** The order code-length code lengths are sent in (RFC 1951 3.2.7). */
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

/**
 * Huffman code lengths (at most `limit` bits) for `freq`: 0 for symbols that never occur. The tree
 * is built over the symbols sorted by weight (two queues: leaves, and nodes in the order made);
 * codes longer than `limit` are then cut to it and the Kraft sum restored by moving codes down
 * from shorter lengths (as miniz does), lengths going to the symbols by weight, heaviest first.
 */
export function codeLengths(freq: ArrayLike<number>, limit: number): Uint8Array {
  const n = freq.length
  const lengths = new Uint8Array(n)
  // Weight and symbol in one double (symbols < 512), so a native sort orders by weight, then symbol.
  let m = 0
  for (let s = 0; s < n; s++) if (freq[s] > 0) m++
  if (m === 0) return lengths
  const keys = new Float64Array(m)
  for (let s = 0, k = 0; s < n; s++) if (freq[s] > 0) keys[k++] = freq[s] * 512 + s
  keys.sort()
  if (m === 1) {
    lengths[keys[0] % 512] = 1 // a lone code still takes one bit (a decoder reads at least one)
    return lengths
  }
  const weight = new Float64Array(2 * m - 1)
  const parent = new Int32Array(2 * m - 1)
  for (let i = 0; i < m; i++) weight[i] = Math.floor(keys[i] / 512)
  let leaf = 0
  let node = m
  for (let made = m; made < 2 * m - 1; made++) {
    for (let pick = 0; pick < 2; pick++) {
      const child = leaf < m && (node >= made || weight[leaf] <= weight[node]) ? leaf++ : node++
      weight[made] += weight[child]
      parent[child] = made
    }
  }
  // Depths from the root (the last node made) down; the count of leaves per depth, the longest cut to `limit`.
  const depth = new Uint8Array(2 * m - 1)
  const perLength = new Uint32Array(Math.max(limit, 64) + 1)
  for (let i = 2 * m - 3; i >= 0; i--) {
    depth[i] = Math.min(depth[parent[i]] + 1, 255)
    if (i < m) perLength[Math.min(depth[i], limit)]++
  }
  let kraft = 0
  for (let l = 1; l <= limit; l++) kraft += perLength[l] * 2 ** (limit - l)
  for (; kraft > 2 ** limit; kraft--) {
    // One code of the longest length moves down a level: it and a longer sibling replace one shorter code.
    perLength[limit]--
    for (let l = limit - 1; l > 0; l--) {
      if (perLength[l] > 0) {
        perLength[l]--
        perLength[l + 1] += 2
        break
      }
    }
  }
  // Lightest symbols (first in `keys`) take the longest codes.
  let i = 0
  for (let l = limit; l >= 1; l--) for (let c = perLength[l]; c > 0; c--) lengths[keys[i++] % 512] = l
  return lengths
}

/** Canonical codes (RFC 1951 3.2.2) of `lengths`, bit-reversed: deflate sends a code's first bit first, and bits fill bytes from the lowest. */
export function canonicalCodes(lengths: Uint8Array): Uint16Array {
  const count = new Uint16Array(MAX_BITS + 1)
  for (const l of lengths) count[l]++
  count[0] = 0
  const nextCode = new Uint16Array(MAX_BITS + 1)
  for (let bits = 1, code = 0; bits <= MAX_BITS; bits++) {
    code = (code + count[bits - 1]) << 1
    nextCode[bits] = code
  }
  const codes = new Uint16Array(lengths.length)
  for (let s = 0; s < lengths.length; s++) {
    const l = lengths[s]
    if (l === 0) continue
    let c = nextCode[l]++
    let r = 0
    for (let b = 0; b < l; b++) {
      r = (r << 1) | (c & 1)
      c >>= 1
    }
    codes[s] = r
  }
  return codes
}

/** Bits appended from the lowest, flushed as whole bytes into `out` (sized by the caller). */
class BitWriter {
  acc = 0
  bits = 0
  at = 0
  constructor(readonly out: Uint8Array) {}
  /** `n` <= 16 bits of `value`. */
  put(value: number, n: number): void {
    this.acc |= value << this.bits
    this.bits += n
    while (this.bits >= 8) {
      this.out[this.at++] = this.acc & 255
      this.acc >>>= 8
      this.bits -= 8
    }
  }
  /** Pads to a whole byte with zero bits. */
  align(): void {
    if (this.bits > 0) this.put(0, 8 - this.bits)
  }
}

/** The code lengths of both alphabets, run-length coded with symbols 16 (repeat previous 3-6), 17 (3-10 zeros), 18 (11-138 zeros): [symbol, extra bits value] pairs. */
function runLengths(lengths: Uint8Array): number[] {
  const out: number[] = []
  for (let i = 0; i < lengths.length; ) {
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
const EXTRA_BITS: Record<number, number> = { 16: 2, 17: 3, 18: 7 }

/** The header of a dynamic block (not final) whose literal codes are `lengths` (257 entries, 256 = end of block), its distance codes two unused 1-bit codes (as zlib sends). */
function writeHeader(w: BitWriter, lengths: Uint8Array): void {
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

/** The most bytes rawHuffmanDeflate writes for `n` bytes: 15 bits a byte at worst, plus headers and the closing empty stored block. */
const bound = (n: number) => Math.ceil((n * MAX_BITS) / 8) + (Math.ceil(n / BLOCK) + 1) * 320 + 16

const freq = new Uint32Array(257)
/** Where a deflate is written before its exact copy is taken: one per thread, kept up to SCRATCH_KEPT bytes (a one-symbol task of the bulk pull: ~650 KB of room for ~150 KB deflated). */
let scratch: Uint8Array = new Uint8Array(0)
const SCRATCH_KEPT = 64 << 20

/** Byte ranges [from, to) of pieces (pieces[k]), for blocks that span the pieces' boundaries. */
interface Span {
  readonly piece: Uint8Array
  readonly from: number
  readonly to: number
}

/**
 * Counts piece[from, to) into `freq`: every byte when `full`, else a sample of about one byte in 4.5
 * at pseudo-random steps of 1 to 8 (a fixed step would see the same columns of fixed-width numbers:
 * with 8-byte prices and a step of 4, never a comma). `seed` carries the generator across spans.
 */
function count(piece: Uint8Array, from: number, to: number, full: boolean, seed: number): number {
  if (full) {
    for (let i = from; i < to; i++) freq[piece[i]]++
    return seed
  }
  let r = seed
  for (let i = from; i < to; i += 1 + (r >>> 29)) {
    freq[piece[i]]++
    r = (Math.imul(r, 1664525) + 1013904223) | 0
  }
  return r
}

/**
 * The literal codes of one block's bytes: counted on a sample of its bytes (or every byte when
 * `full`). A byte that occurs only between samples may then have no code: printable ASCII gets a
 * long one anyway, anything else makes writeBlock fail, and the block is redone from a full count.
 */
function blockCodes(spans: readonly Span[], full: boolean): { lengths: Uint8Array; codes: Uint16Array } {
  freq.fill(0)
  let seed = 1
  for (const span of spans) seed = count(span.piece, span.from, span.to, full, seed)
  // Printable ASCII the samples missed (a JSON key's letters, a quote) keeps a long code, so text
  // seldom needs the full count.
  if (!full) for (let c = 0x20; c < 0x7f; c++) if (freq[c] === 0) freq[c] = 1
  freq[END_OF_BLOCK] = 1
  const lengths = codeLengths(freq, MAX_BITS)
  return { lengths, codes: canonicalCodes(lengths) }
}

/**
 * The hot loop: codes of piece[from, to) appended to w, or false at a byte without a code (w then
 * partly written: the caller restores it). Fewer than 16 bits wait in `acc` between bytes, so a
 * 15-bit code never reaches its sign bit.
 */
function encode(w: BitWriter, piece: Uint8Array, from: number, to: number, lengths: Uint8Array, codes: Uint16Array): boolean {
  const out = w.out
  let acc = w.acc
  let bits = w.bits
  let at = w.at
  for (let i = from; i < to; i++) {
    const c = piece[i]
    const len = lengths[c]
    if (len === 0) return false
    acc |= codes[c] << bits
    bits += len
    if (bits >= 16) {
      out[at++] = acc & 255
      out[at++] = (acc >>> 8) & 255
      acc >>>= 16
      bits -= 16
    }
  }
  w.acc = acc
  w.bits = bits
  w.at = at
  return true
}

/** One block (header, bytes, end of block); false, with nothing kept, when a byte has no code. */
function writeBlock(w: BitWriter, spans: readonly Span[], lengths: Uint8Array, codes: Uint16Array): boolean {
  const { acc, bits, at } = w
  writeHeader(w, lengths)
  for (const span of spans) {
    if (!encode(w, span.piece, span.from, span.to, lengths, codes)) {
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
 */
export function rawHuffmanDeflate(pieces: Uint8Array | readonly Uint8Array[]): Buffer {
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
    const sampled = blockCodes(spans, false)
    if (!writeBlock(w, spans, sampled.lengths, sampled.codes)) {
      const counted = blockCodes(spans, true)
      writeBlock(w, spans, counted.lengths, counted.codes)
    }
    spans = []
    size = 0
  }
  for (const piece of list) {
    for (let from = 0; from < piece.length; ) {
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
  const out = w.out
  out[w.at++] = 0
  out[w.at++] = 0
  out[w.at++] = 0xff
  out[w.at++] = 0xff
  return Buffer.from(out.subarray(0, w.at)) // a copy: the scratch is written again by the next call
}
