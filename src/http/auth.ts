/** @module API-key authentication of every /v1 request: X-API-Key header or api_key parameter (contract "Authentication"). */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hashKey, sameHash } from '../auth/api-keys.js'
import { MdqError } from '../domain/errors.js'
import { scopeAllows, type ApiKeyRecord, type KeyScope, type KeyStore } from '../store/key-store.js'
import { perTurn } from '../lib/per-turn.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key (set by the auth hook on /v1 routes). */
    apiKey?: ApiKeyRecord
  }
}

/** Looked-up keys kept at most (unknown hashes included, so a flood of bad keys cannot grow it). */
const KEY_CACHE_SIZE = 10_000

const badKey = (message: string) => new MdqError('BAD_KEY', message)

/** The key a request presents (header or `api_key`, the same if both); BAD_KEY when none or two differ. */
export function presentedKey(req: FastifyRequest): string {
  const header = req.headers['x-api-key']
  const query = (req.query as Record<string, unknown> | undefined)?.api_key
  if (Array.isArray(header) || Array.isArray(query)) throw badKey('The API key is given more than once.')
  if (header !== undefined && query !== undefined && header !== query)
    throw badKey('The X-API-Key header and the api_key parameter hold different keys.')
  const key = header ?? query
  if (typeof key !== 'string' || key === '')
    throw badKey('Missing API key: send it in the X-API-Key header or the api_key query parameter.')
  return key
}

/** Checks of a presented key: its record, or a BAD_KEY error (unknown or revoked). */
export interface KeyAuthenticator {
  readonly check: (presented: string) => Promise<ApiKeyRecord>
  /** The record `check` would give at once, when this turn's keys version is read and the key is held and valid; else undefined (call `check`). */
  readonly known: (presented: string) => ApiKeyRecord | undefined
}

/**
 * Looked-up keys are trusted while the key store's version stands: any change to any key (by any
 * process) empties the cache, so a revocation counts as soon as the store reports it. One per app:
 * the auth hook and the cached-answer fast path (fast-answers.ts) share its cache.
 */
export function keyAuthenticator(keys: KeyStore): KeyAuthenticator {
  // `matches`: the record's hash compared with the presented one (in constant time) once, when looked up.
  const cache = new Map<string, { key: ApiKeyRecord | undefined; matches: boolean }>()
  let cachedVersion = ''
  const keysVersion = perTurn(() => keys.keysVersion())
  return {
    async check(presented) {
      const hash = hashKey(presented)
      const version = await keysVersion()
      if (version !== cachedVersion || cache.size > KEY_CACHE_SIZE) {
        cache.clear()
        cachedVersion = version
      }
      let hit = cache.get(hash)
      if (!hit) {
        const found = await keys.findKey(hash)
        hit = { key: found, matches: found !== undefined && sameHash(found.hash, hash) }
        cache.set(hash, hit)
      }
      const key = hit.key
      if (!key || !hit.matches) throw badKey('Unknown API key.')
      if (key.revokedMs !== null) throw badKey('This API key has been revoked.')
      return key
    },
    known(presented) {
      if (keysVersion.settled() !== cachedVersion) return undefined
      const hit = cache.get(hashKey(presented))
      const key = hit?.matches ? hit.key : undefined
      return key?.revokedMs === null ? key : undefined
    },
  }
}

export interface AuthOptions {
  readonly authenticator: KeyAuthenticator
  /** The scope every route of the scope needs (default `read`: any key); a key without it is a 403 naming both. */
  readonly scope?: KeyScope
}

const auth: FastifyPluginAsync<AuthOptions> = async (app, { authenticator, scope = 'read' }) => {
  app.decorateRequest('apiKey', undefined)
  app.addHook('onRequest', async (req) => {
    const key = await authenticator.check(presentedKey(req))
    req.apiKey = key
    if (!scopeAllows(key.scope, scope))
      throw new MdqError(
        'FORBIDDEN',
        `This API key has scope '${key.scope}'; ${req.method} ${req.url.split('?')[0]} needs scope '${scope}'${scope === 'admin' ? '' : " or 'admin'"} (mdq keys create --scope ${scope}).`,
      )
  })
}
/** Hooks apply to the scope that registers the plugin (the /v1 prefix), not beyond it. */
export const authPlugin = fp(auth, { name: 'mdq-auth' })
