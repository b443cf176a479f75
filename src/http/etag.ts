/** @module ETags for the data routes: the store's data version plus the request, given only to successful answers. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { canonicalOrUndefined } from '../query/answer-version.js'
import type { MarketStore } from '../store/market-store.js'
import { compress, type Encoding } from '../encode/compression.js'
import { compressOptions, requestedEncoding } from './compression.js'
import { gzipBeside } from '../encode/gzip-member.js'
import type { Production, ResponseCache } from '../runner/response-cache.js'

/** Digests of recent GET URLs: clients repeat their requests, and hashing is per-request work. Bounded in characters held. */
const digests = new LRUCache<string, string>({
  maxSize: 4 << 20,
  sizeCalculation: (digest, url) => url.length + digest.length,
})

/** The request as far as the answer depends on it: method, path, query without the key, body. */
function requestDigest(req: FastifyRequest): string {
  // HEAD is GET without the body: the same answer, so the same tag.
  const read = req.method === 'GET' || req.method === 'HEAD'
  if (read) {
    const known = digests.get(req.url)
    if (known !== undefined) return known
  }
  const url = req.url.replace(/([?&])api_key=[^&#]*&?/g, '$1')
  const body = req.method === 'POST' ? JSON.stringify(req.body ?? null) : ''
  const digest = createHash('sha1')
    .update(`${read ? 'GET' : req.method} ${url} ${body}`)
    .digest('base64url')
    .slice(0, 22)
  if (read) digests.set(req.url, digest)
  return digest
}

/** A tag without its weakness mark: If-None-Match compares tags weakly (RFC 9110, 13.1.2). */
const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag)

/** Whether If-None-Match holds `tag` (or `*`), weak or not: the full path's test and the fast path's (fast-answers.ts). */
export function matchesTag(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false
  const wanted = opaque(tag)
  return header.split(',').some((t) => {
    const given = t.trim()
    return given === '*' || opaque(given) === wanted
  })
}

/**
 * The headers of a cached answer's 200, as the full path sends them and the fast path repeats them.
 * `compressible`: large enough to be compressed, so its bytes depend on Accept-Encoding (Vary) even
 * when this client took them plain.
 */
export function answerHeaders(
  tag: string,
  encoding: Encoding | undefined,
  compressible: boolean,
): Record<string, string> {
  const headers: Record<string, string> = { etag: tag, 'content-type': JSON_TYPE }
  if (encoding !== undefined) headers['content-encoding'] = encoding
  if (compressible) headers.vary = 'accept-encoding'
  return headers
}

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Answers 304 when If-None-Match holds the current tag (or `*`), else the cached answer of that
 * tag, else runs `produce` and keeps its answer (a stream, for answers too large to hold, is sent as
 * produced and never cached). A 304 stands for a successful answer, so it is given only when that
 * answer is known: held in the cache, or just produced (a failure throws first and goes out as an
 * error, untagged). Weak tags: compression may change the bytes, not the data. Any import changes
 * the data version (and a live append its symbol's), so neither a tag nor a cached answer outlives its data.
 */
export async function sendWithEtag(
  req: FastifyRequest,
  reply: FastifyReply,
  store: MarketStore,
  cache: ResponseCache,
  produce: (how?: Production) => Promise<string | Buffer | Readable>,
  /** The symbol of a one-symbol answer (as the client gave it): the tag takes that symbol's version, which other symbols' live appends leave. */
  symbol?: string,
): Promise<FastifyReply> {
  const canonical = symbol === undefined ? undefined : canonicalOrUndefined(symbol)
  const versions = await store.readVersions()
  const readMs = cache.now() // when `version` was known current: an answer of it is confirmed as of then
  const version = canonical === undefined ? versions.data : versions.of(canonical)
  const request = requestDigest(req)
  const tag = `W/"${version}-${request}"`
  const ifNoneMatch = req.headers['if-none-match']
  const matches = matchesTag(ifNoneMatch, tag)
  if (matches && cache.has(tag)) {
    cache.confirm(request, tag, readMs) // a 304 at the current tag: that answer is current
    return reply.code(304).header('ETag', tag).send()
  }
  // A client that holds the new tag wants the new answer: no stand-in for it.
  const standIn = matches ? undefined : cache.standIn(request, tag, produce)
  if (standIn !== undefined) {
    reply.header('ETag', standIn.tag)
    if (matchesTag(ifNoneMatch, standIn.tag)) return reply.code(304).send()
    cache.hits++
    reply.type(JSON_TYPE)
    return sendCached(req, reply, cache, { tag: standIn.tag }, standIn.body)
  }
  const body = await cache.answer(tag, produce)
  reply.header('ETag', tag)
  if (matches) {
    if (!Buffer.isBuffer(body)) body.destroy() // a streamed answer not needed after all
    return reply.code(304).send()
  }
  reply.type(JSON_TYPE)
  return Buffer.isBuffer(body) && cache.maxBytes > 0
    ? sendCached(req, reply, cache, { tag, current: { version, symbol: canonical, request, readMs } }, body)
    : reply.send(body)
}

/**
 * A cached answer, compressed as the client accepts: the compressed bytes are cached beside the
 * plain ones (under the tag plus the encoding), so a repeated request is never compressed again; a
 * gzip member the runner made with the answer (gzipBeside) is kept rather than made here.
 * The app's fast path (fast-answers.ts) is told of an answer `current` at its data version (not of a
 * stand-in), so it can send the repeats itself.
 */
function sendCached(
  req: FastifyRequest,
  reply: FastifyReply,
  cache: ResponseCache,
  sent: {
    readonly tag: string
    readonly current?: {
      readonly version: string
      readonly symbol: string | undefined
      readonly request: string
      /** When `version` was read (ResponseCache's clock). */
      readonly readMs: number
    }
  },
  body: Buffer,
): FastifyReply {
  const { tag, current } = sent
  const compressible = body.length >= compressOptions.threshold
  const encoding = compressible ? requestedEncoding(req.headers) : undefined
  if (current !== undefined) {
    const { version, symbol, request, readMs } = current
    const latest = cache.confirm(request, tag, readMs)
    req.server.fastAnswers?.remember(req, reply, { version, symbol, tag, latest, encoding, compressible })
  }
  reply.headers(answerHeaders(tag, encoding, compressible))
  if (encoding === undefined) {
    cache.memory.writing(body, reply.raw)
    return reply.send(body)
  }
  const key = `${tag} ${encoding}`
  let compressed = cache.peek(key)
  if (compressed === undefined) {
    compressed = (encoding === 'gzip' && gzipBeside(body)) || compress(encoding, body)
    cache.set(key, compressed)
  }
  cache.memory.writing(compressed, reply.raw)
  return reply.send(compressed)
}

/** A JSON answer already written as text (wire.ts), past Fastify's serializer; no ETag (POST answers). */
export function sendJson(reply: FastifyReply, text: string): FastifyReply {
  return reply.type(JSON_TYPE).send(text)
}
