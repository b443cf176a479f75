/** @module CRC-32 of two byte runs joined, from their CRCs and the second's length (zlib's crc32_combine), so workers can checksum their own pieces. */

/** The reflected CRC-32 polynomial (IEEE 802.3), as zlib and gzip use it. */
const POLY = 0xedb88320

/** a(x) * b(x) modulo the CRC polynomial, both reflected (zlib's multmodp). */
function multModP(a: number, b: number): number {
  let p = 0
  for (let m = 0x80000000; m !== 0; m >>>= 1) {
    if (a & m) {
      p ^= b
      if ((a & (m - 1)) === 0) break
    }
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1
  }
  return p >>> 0
}

/** x^(2^k) modulo the polynomial for k = 0..31 (zlib's x2n_table): squaring the one before. */
const X2N: readonly number[] = (() => {
  const table = [0x40000000] // x^1
  for (let k = 1; k < 32; k++) table.push(multModP(table[k - 1], table[k - 1]))
  return table
})()

/** x^(8 * bytes) modulo the polynomial: the factor that shifts a CRC past `bytes` zero bytes (zlib's x2nmodp(len, 3)). */
function shiftFactor(bytes: number): number {
  let p = 0x80000000 // x^0
  let k = 3 // 8 bits a byte: start at x^(2^3)
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) p = multModP(X2N[k & 31], p)
  return p
}

/**
 * The CRC-32 of A followed by B, given crc32(A), crc32(B) and B's length in bytes: as `zlib.crc32`
 * of the concatenation, without reading either. O(log length): a few microseconds.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(shiftFactor(lengthB), crcA) ^ crcB) >>> 0
}
