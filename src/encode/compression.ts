/** @module Compression that costs little: fast levels for every compressed answer, and the codecs that use them. */
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib'

export type Encoding = 'br' | 'gzip'
/** In order of preference at an equal q (br compresses JSON columns smaller). */
export const ENCODINGS: readonly Encoding[] = ['br', 'gzip']

/**
 * Levels for every compressed answer: gzip 1 and brotli 1 compress JSON columns to about a fifth
 * (the numbers repeat their digits), at several times the speed of the defaults (gzip 6, brotli 11),
 * which would make a bulk pull CPU-bound on compression.
 */
export const GZIP_LEVEL = 1
export const BROTLI_QUALITY = 1
/** Answers smaller than this are sent plain (compressing them saves less than it costs). */
export const COMPRESS_THRESHOLD_BYTES = 1024

export function compress(encoding: Encoding, body: Buffer): Buffer {
  return encoding === 'gzip'
    ? gzipSync(body, { level: GZIP_LEVEL })
    : brotliCompressSync(body, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
}
