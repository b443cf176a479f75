/** @module One gzip member from raw deflate pieces made anywhere (worker threads): each piece deflated on its own, joined in order, CRC-32s combined. */
import { Readable } from 'node:stream'
import { constants as zlib, crc32, deflateRawSync } from 'node:zlib'
import { crc32Combine } from './deflate/gzip-crc.js'
import { rawHuffmanDeflate } from './deflate/huffman-deflate.js'

/**
 * Bytes as a raw deflate stream that ends on a sync flush (byte-aligned, no final block), with the
 * CRC-32 and length of the bytes it encodes: such pieces can be joined in any number, in order.
 */
export interface DeflatedPiece {
  readonly deflated: Buffer
  readonly crc: number
  readonly length: number
}

/**
 * How a piece is deflated: by the JS Huffman-only coder (deflate/huffman-deflate.ts, what the workers
 * use), or by zlib at level 1 with its default strategy or Huffman codes only (Z_HUFFMAN_ONLY), which
 * the compression bench runs in the workers beside it; each ends on a sync flush.
 */
export type PieceCoder = 'js-huffman' | 'zlib-1' | 'zlib-huffman'
export const PIECE_CODERS: readonly PieceCoder[] = ['js-huffman', 'zlib-1', 'zlib-huffman']

/** The pieces as one Buffer for zlib: the one piece as it is, or a copy of them joined. */
const joined = (pieces: readonly Uint8Array[]): Uint8Array => (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces))

/**
 * The bytes of `plain` (one Buffer, or pieces in order) deflated on their own, by `coder` (default
 * the JS Huffman-only coder; a piece is about 0.7 MB: starting without a history costs a few hundred
 * bytes). With `borrow`, the JS coder's `deflated` is its scratch memory, good until its next call in
 * this thread (rawHuffmanDeflate): for a caller that copies it at once.
 */
export function deflatePiece(
  plain: Uint8Array | readonly Uint8Array[],
  options: { readonly borrow?: boolean; readonly coder?: PieceCoder } = {},
): DeflatedPiece {
  const { coder = 'js-huffman' } = options
  const pieces = plain instanceof Uint8Array ? [plain] : plain
  let crc = 0
  let length = 0
  for (const p of pieces) {
    crc = crc32(p, crc)
    length += p.length
  }
  const deflated =
    coder === 'js-huffman'
      ? rawHuffmanDeflate(pieces, options)
      : deflateRawSync(joined(pieces), {
          level: 1,
          strategy: coder === 'zlib-huffman' ? zlib.Z_HUFFMAN_ONLY : zlib.Z_DEFAULT_STRATEGY,
          finishFlush: zlib.Z_SYNC_FLUSH,
        })
  return { deflated, crc, length }
}

/** ID1 ID2, CM = deflate, no flags, MTIME 0, XFL 4 (fastest, as zlib marks level 1), OS 3 (Unix). */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x04, 0x03])
/** An empty final block with fixed codes (BFINAL 1, BTYPE 01, end-of-block): ends the deflate stream, as pigz does. */
const LAST_BLOCK = Buffer.from([0x03, 0x00])

/** ASCII text as stored (uncompressed) deflate blocks: the framing between pieces costs 5 bytes a block and no deflate. */
function stored(text: string): DeflatedPiece {
  const plain = Buffer.from(text, 'latin1')
  const blocks: Buffer[] = []
  for (let at = 0; at < plain.length; at += 0xffff) {
    const data = plain.subarray(at, at + 0xffff)
    const head = Buffer.alloc(5) // BFINAL 0, BTYPE 00, padding; LEN and its complement NLEN, little-endian
    head.writeUInt16LE(data.length, 1)
    head.writeUInt16LE(~data.length & 0xffff, 3)
    blocks.push(head, data)
  }
  return { deflated: Buffer.concat(blocks), crc: crc32(plain), length: plain.length }
}

/** The gzip trailer: the empty final block, then the CRC-32 and length (ISIZE, modulo 2^32) of the bytes the member encodes. */
function trailer(crc: number, length: number): Buffer {
  const bytes = Buffer.alloc(10)
  LAST_BLOCK.copy(bytes)
  bytes.writeUInt32LE(crc, 2)
  bytes.writeUInt32LE(length % 2 ** 32, 6)
  return bytes
}

/**
 * One gzip member (RFC 1952) of the pieces in order, text pieces stored as they are: a single member,
 * as clients such as Python's httpx decode only the first member of a multi-member stream.
 */
export async function* gzipMember(pieces: AsyncIterable<DeflatedPiece | string>): AsyncGenerator<Buffer> {
  yield HEADER
  let crc = 0
  let length = 0
  for await (const piece of pieces) {
    const { deflated, crc: pieceCrc, length: pieceLength } = typeof piece === 'string' ? stored(piece) : piece
    crc = crc32Combine(crc, pieceCrc, pieceLength)
    length += pieceLength
    yield deflated
  }
  yield trailer(crc, length)
}

/** The gzip member of one deflated piece (a whole answer), in its three parts: header, the piece, trailer. */
export const gzipParts = (piece: DeflatedPiece): Buffer[] => [HEADER, piece.deflated, trailer(piece.crc, piece.length)]

/**
 * Streams made by gzipStream, and whole answers a runner gzipped (markGzipped): their reply is marked
 * gzip by gzipOnSend (and @fastify/compress leaves them be).
 */
const gzipped = new WeakSet<Readable | Buffer>()

/** An answer's bytes that are one gzip member (a runner gzipped it where it was computed): gzipOnSend labels its reply. */
export function markGzipped(body: Buffer): Buffer {
  gzipped.add(body)
  return body
}

/** Gzip members a runner made beside plain answers it computed (attachGzip), by the plain bytes: the cache keeps them next to the answer. */
const besides = new WeakMap<Buffer, Buffer>()

/** A plain answer with its gzip member attached; returns the plain bytes. */
export function attachGzip(plain: Buffer, member: Buffer): Buffer {
  besides.set(plain, member)
  return plain
}

/** The gzip member attached to a plain answer, if a runner made one. */
export const gzipBeside = (plain: Buffer): Buffer | undefined => besides.get(plain)

/** The gzip member of the pieces, as a stream to send (made by `toStream`, by default Readable.from). */
export function gzipStream(
  pieces: AsyncIterable<DeflatedPiece | string>,
  toStream = (bytes: AsyncIterable<Buffer>): Readable => Readable.from(bytes, { objectMode: false }),
): Readable {
  const stream = toStream(gzipMember(pieces))
  gzipped.add(stream)
  return stream
}

/** Whether these bytes or this stream are one gzip member made by a runner or gzipStream (their reply is labelled gzip). */
export const isGzipped = (payload: unknown): boolean =>
  (payload instanceof Readable || Buffer.isBuffer(payload)) && gzipped.has(payload)
