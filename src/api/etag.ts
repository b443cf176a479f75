/** @module ETags for the data routes: the store's data version plus the query, checked before any work. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { createHash } from 'node:crypto'
import type { Store } from '../store/store.js'

/** The request as far as the answer depends on it: method, path, query without the key, body. */
function requestDigest(req: FastifyRequest): string {
  const url = req.url.replace(/([?&])api_key=[^&#]*&?/g, '$1')
  const body = req.method === 'POST' ? JSON.stringify(req.body ?? null) : ''
  return createHash('sha1').update(`${req.method} ${url} ${body}`).digest('base64url').slice(0, 16)
}

/**
 * Answers 304 when If-None-Match holds the current tag; else runs `produce` and tags the answer.
 * Weak tags, as compression may change the bytes but not the data.
 */
export async function sendWithEtag(req: FastifyRequest, reply: FastifyReply, store: Store, produce: () => Promise<string>): Promise<FastifyReply> {
  const tag = `W/"${await store.dataVersion()}-${requestDigest(req)}"`
  reply.header('ETag', tag)
  const match = req.headers['if-none-match']
  if (match && match.split(',').some((t) => t.trim() === tag || t.trim() === '*')) return reply.code(304).send()
  return reply.type('application/json; charset=utf-8').send(await produce())
}
