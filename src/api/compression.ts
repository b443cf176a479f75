/** @module Compression that costs little: fast levels, and cached answers kept compressed beside the plain bytes. */
import type { IncomingHttpHeaders } from 'node:http'
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib'

export type Encoding = 'br' | 'gzip'
const ENCODINGS: readonly Encoding[] = ['br', 'gzip']

/**
 * Levels for every compressed answer: gzip 1 and brotli 1 compress JSON columns to about a fifth
 * (the numbers repeat their digits), at several times the speed of the defaults (gzip 6, brotli 11),
 * which would make a bulk pull CPU-bound on compression.
 */
export const GZIP_LEVEL = 1
export const BROTLI_QUALITY = 1
/** @fastify/compress's options: the same levels for answers computed per request and for streams. */
export const compressOptions = {
  threshold: 1024,
  encodings: [...ENCODINGS],
  zlibOptions: { level: GZIP_LEVEL },
  brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
}

/** The encoding @fastify/compress would choose for this Accept-Encoding (highest q, then br before gzip), if any. */
export function acceptedEncoding(header: string | undefined): Encoding | undefined {
  if (!header) return undefined
  let best: Encoding | undefined
  let bestQ = 0
  for (const part of header.toLowerCase().split(',')) {
    const [token, ...params] = part.split(';').map((s) => s.trim())
    const name = token === '*' || token === 'x-gzip' ? 'gzip' : token
    if (name !== 'br' && name !== 'gzip') continue
    const qParam = params.find((p) => p.startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.slice(2))
    if (!(q > 0)) continue
    if (q > bestQ || (q === bestQ && best !== undefined && ENCODINGS.indexOf(name) < ENCODINGS.indexOf(best))) {
      best = name
      bestQ = q
    }
  }
  return best
}

/** Whether the request sends `x-no-compression` (@fastify/compress's opt-out): its answer is plain whatever Accept-Encoding says. */
export const noCompression = (headers: IncomingHttpHeaders): boolean => headers['x-no-compression'] !== undefined

/** The encoding @fastify/compress would give this request's answer: none when it sends `x-no-compression`, else as accepted. */
export function requestedEncoding(headers: IncomingHttpHeaders): Encoding | undefined {
  return noCompression(headers) ? undefined : acceptedEncoding(headers['accept-encoding'])
}

export function compress(encoding: Encoding, body: Buffer): Buffer {
  return encoding === 'gzip'
    ? gzipSync(body, { level: GZIP_LEVEL })
    : brotliCompressSync(body, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
}
