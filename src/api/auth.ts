/** @module API-key authentication of every /v1 request: X-API-Key header or api_key parameter (contract "Authentication"). */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hashKey, sameHash } from '../auth/api-keys.js'
import { MdqError } from '../domain/errors.js'
import type { ApiKeyRecord, Store } from '../store/store.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key (set by the auth hook on /v1 routes). */
    apiKey?: ApiKeyRecord
  }
}

/** How long a looked-up key is trusted before asking the store again: revocation lands within this. */
export const KEY_CACHE_MS = 500

const badKey = (message: string) => new MdqError('BAD_KEY', message)

function presentedKey(req: FastifyRequest): string {
  const header = req.headers['x-api-key']
  const query = (req.query as Record<string, unknown> | undefined)?.api_key
  if (Array.isArray(header) || Array.isArray(query)) throw badKey('The API key is given more than once.')
  if (header !== undefined && query !== undefined && header !== query) throw badKey('The X-API-Key header and the api_key parameter hold different keys.')
  const key = header ?? query
  if (typeof key !== 'string' || key === '') throw badKey('Missing API key: send it in the X-API-Key header or the api_key query parameter.')
  return key
}

const auth: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const cache = new Map<string, { key: ApiKeyRecord | undefined; atMs: number }>()
  app.decorateRequest('apiKey', undefined)
  app.addHook('onRequest', async (req) => {
    const hash = hashKey(presentedKey(req))
    const now = Date.now()
    let hit = cache.get(hash)
    if (!hit || now - hit.atMs > KEY_CACHE_MS) {
      if (cache.size > 10_000) cache.clear()
      hit = { key: await store.findKey(hash), atMs: now }
      cache.set(hash, hit)
    }
    const key = hit.key
    if (!key || !sameHash(key.hash, hash)) throw badKey('Unknown API key.')
    if (key.revokedMs !== null) throw badKey('This API key has been revoked.')
    req.apiKey = key
  })
}
/** Hooks apply to the scope that registers the plugin (the /v1 prefix), not beyond it. */
export const authPlugin = fp(auth, { name: 'mdq-auth' })
