/** @module ETags for the data routes: the store's data version plus the request, checked before any work. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { MarketStore } from '../store/market-store.js'
import { acceptedEncoding, compress, compressOptions } from './compression.js'
import type { ResponseCache } from './response-cache.js'

/** Digests of recent GET URLs: clients repeat their requests, and hashing is per-request work. */
const digests = new Map<string, string>()

/** The request as far as the answer depends on it: method, path, query without the key, body. */
function requestDigest(req: FastifyRequest): string {
  if (req.method === 'GET') {
    const known = digests.get(req.url)
    if (known !== undefined) return known
  }
  const url = req.url.replace(/([?&])api_key=[^&#]*&?/g, '$1')
  const body = req.method === 'POST' ? JSON.stringify(req.body ?? null) : ''
  const digest = createHash('sha1').update(`${req.method} ${url} ${body}`).digest('base64url').slice(0, 22)
  if (req.method === 'GET') {
    if (digests.size >= 10_000) digests.clear()
    digests.set(req.url, digest)
  }
  return digest
}

/**
 * Answers 304 when If-None-Match holds the current tag, else the cached answer of that tag, else
 * runs `produce` and keeps its answer (a stream, for answers too large to hold, is sent as produced and
 * never cached). Weak tags: compression may change the bytes, not the data.
 * Any import changes the data version, so neither a tag nor a cached answer outlives its data.
 */
export async function sendWithEtag(req: FastifyRequest, reply: FastifyReply, store: MarketStore, cache: ResponseCache, produce: () => Promise<string | Buffer | Readable>): Promise<FastifyReply> {
  const tag = `W/"${await store.dataVersion()}-${requestDigest(req)}"`
  reply.header('ETag', tag)
  const match = req.headers['if-none-match']
  if (match && match.split(',').some((t) => t.trim() === tag || t.trim() === '*')) return reply.code(304).send()
  reply.type('application/json; charset=utf-8')
  const cached = cache.maxBytes > 0 ? cache.get(tag) : undefined
  if (cached !== undefined) return sendCached(req, reply, cache, tag, cached)
  const produced = await produce()
  if (typeof produced !== 'string' && !Buffer.isBuffer(produced)) return reply.send(produced)
  const body = typeof produced === 'string' ? Buffer.from(produced, 'utf8') : produced
  if (cache.maxBytes > 0) {
    cache.set(tag, body)
    return sendCached(req, reply, cache, tag, body)
  }
  return reply.send(body)
}

/**
 * A cached answer, compressed as the client accepts: the compressed bytes are cached beside the
 * plain ones (under the tag plus the encoding), so a repeated request is never compressed again.
 */
function sendCached(req: FastifyRequest, reply: FastifyReply, cache: ResponseCache, tag: string, body: Buffer): FastifyReply {
  const encoding = body.length >= compressOptions.threshold ? acceptedEncoding(req.headers['accept-encoding']) : undefined
  if (encoding === undefined) return reply.send(body)
  const key = `${tag} ${encoding}`
  let compressed = cache.peek(key)
  if (compressed === undefined) {
    compressed = compress(encoding, body)
    cache.set(key, compressed)
  }
  return reply.header('Content-Encoding', encoding).header('Vary', 'accept-encoding').send(compressed)
}

/** A JSON answer already written as text (wire.ts), past Fastify's serializer; no ETag (POST answers). */
export function sendJson(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text)
}
