/** @module Content negotiation of compressed answers: which encoding a request gets, and the reply's labels. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import { constants as zlib } from 'node:zlib'
import {
  BROTLI_QUALITY,
  COMPRESS_THRESHOLD_BYTES,
  ENCODINGS,
  GZIP_LEVEL,
  type Encoding,
} from '../encode/compression.js'
import { isGzipped } from '../encode/gzip-member.js'

/**
 * @fastify/compress's options: the same levels for answers computed per request and for streams
 * (another brotli quality only for the compression bench's variants).
 */
export const fastifyCompressOptions = (brotliQuality = BROTLI_QUALITY) => ({
  threshold: COMPRESS_THRESHOLD_BYTES,
  encodings: [...ENCODINGS],
  zlibOptions: { level: GZIP_LEVEL },
  brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: brotliQuality } },
})
export const compressOptions = fastifyCompressOptions()

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

/**
 * Whether this request's answer should be gzipped here: the encoding @fastify/compress would choose is
 * gzip (it honours x-no-compression too). br and the rest keep @fastify/compress.
 */
export const wantsGzip = (req: FastifyRequest): boolean => requestedEncoding(req.headers) === 'gzip'

/**
 * A route's onSend hook: a gzipStream payload or a markGzipped answer gets Content-Encoding and Vary,
 * so @fastify/compress (which skips a reply that has a Content-Encoding) does not compress it again.
 * Set here and not before sending, so a 304 or an error sent in its place carries neither. (A
 * callback, not an async function: it runs on every answer of the hottest routes.)
 */
export function gzipOnSend(
  _req: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, payload: unknown) => void,
): void {
  if (isGzipped(payload)) reply.header('Content-Encoding', 'gzip').header('Vary', 'accept-encoding')
  done(null, payload)
}
