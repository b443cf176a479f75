/** @module Length-limited Huffman code lengths and deflate's canonical codes (RFC 1951 3.2.2), computed once a block: no allocation on the way. */

/** Deflate's longest literal/length code. */
export const MAX_BITS = 15
/** The most symbols an alphabet has here (literals and end of block: 257; code lengths: 19). */
const MAX_SYMBOLS = 288

// Working memory of codeLengths, sized once: it runs once a block, and fresh typed arrays cost more than the tree.
const order = new Int32Array(MAX_SYMBOLS)
const weight = new Float64Array(2 * MAX_SYMBOLS)
const parent = new Int32Array(2 * MAX_SYMBOLS)
const depth = new Uint8Array(2 * MAX_SYMBOLS)
const perLength = new Int32Array(64)

/**
 * Huffman code lengths (at most `limit` bits) for `freq`: 0 for symbols that never occur. The tree
 * is built over the symbols sorted by weight (two queues: leaves, and nodes in the order made);
 * codes longer than `limit` are then cut to it and the Kraft sum restored by moving codes down
 * from shorter lengths (as miniz does), lengths going to the symbols by weight, heaviest first.
 */
export function codeLengths(freq: ArrayLike<number>, limit: number): Uint8Array {
  const n = freq.length
  if (n > MAX_SYMBOLS) throw new RangeError(`at most ${MAX_SYMBOLS} symbols`)
  const lengths = new Uint8Array(n)
  // The used symbols by weight, then symbol: those of weight 1 first (most blocks have many, the
  // printable floor), in order, then the heavier ones by an insertion sort (a block has a few dozen).
  let m = 0
  for (let s = 0; s < n; s++) if (freq[s] === 1) order[m++] = s
  for (let s = 0; s < n; s++) {
    const f = freq[s]
    if (!(f > 0) || f === 1) continue
    let k = m++
    while (k > 0 && freq[order[k - 1]] > f) {
      order[k] = order[k - 1]
      k--
    }
    order[k] = s
  }
  if (m === 0) return lengths
  if (m === 1) {
    lengths[order[0]] = 1 // a lone code still takes one bit (a decoder reads at least one)
    return lengths
  }
  for (let i = 0; i < m; i++) weight[i] = freq[order[i]]
  let leaf = 0
  let node = m
  for (let made = m; made < 2 * m - 1; made++) {
    weight[made] = 0
    for (let pick = 0; pick < 2; pick++) {
      const child = leaf < m && (node >= made || weight[leaf] <= weight[node]) ? leaf++ : node++
      weight[made] += weight[child]
      parent[child] = made
    }
  }
  // Depths from the root (the last node made) down; the count of leaves per depth, the longest cut to `limit`.
  perLength.fill(0)
  depth[2 * m - 2] = 0
  for (let i = 2 * m - 3; i >= 0; i--) {
    depth[i] = Math.min(depth[parent[i]] + 1, 63)
    if (i < m) perLength[Math.min(depth[i], limit)]++
  }
  let kraft = 0
  for (let l = 1; l <= limit; l++) kraft += perLength[l] << (limit - l)
  for (const most = 1 << limit; kraft > most; kraft--) {
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
  // Lightest symbols (first in `order`) take the longest codes.
  let i = 0
  for (let l = limit; l >= 1; l--) for (let c = perLength[l]; c > 0; c--) lengths[order[i++]] = l
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
