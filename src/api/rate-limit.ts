/** @module Rate limiting of /v1/klines and /v1/klines/ex-factors per API key (contract "Rate limiting"). */
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { LimitedOperation, RateLimiter } from '../auth/rate-limiter.js'
import type { Quota } from '../auth/token-bucket.js'
import { MdqError } from '../domain/errors.js'

export interface RateLimitOptions {
  readonly limiter: RateLimiter
  /** The quota of keys without their own. */
  readonly defaults: Quota
  /** When the limiter's backend is unreachable: serve unlimited (true, logged) or answer 503. */
  readonly failOpen: boolean
  /** Called on every refusal and every backend failure (metrics). */
  readonly onOutcome?: (outcome: 'limited' | 'backend_error', operation: LimitedOperation) => void
}

/** The spec's limited operations, by route; /v1/instruments is not limited. */
const LIMITED: Record<string, LimitedOperation> = { '/v1/klines': 'klines', '/v1/klines/ex-factors': 'ex-factors' }

const rateLimit: FastifyPluginAsync<RateLimitOptions> = async (app, opts) => {
  // Registered after auth in the same scope, so a bad key is a 401 before any token is taken.
  app.addHook('onRequest', async (req, reply) => {
    const operation = LIMITED[req.routeOptions.url ?? '']
    const key = req.apiKey
    if (!operation || !key) return
    const quota: Quota = { ratePerMin: key.ratePerMin ?? opts.defaults.ratePerMin, burst: key.burst ?? opts.defaults.burst }
    let decision
    try {
      decision = await opts.limiter.take(key.id, operation, quota)
    } catch (err) {
      opts.onOutcome?.('backend_error', operation)
      req.log.error({ err, limiter: opts.limiter.name }, opts.failOpen ? 'rate limiter unreachable: serving without limit (fail-open)' : 'rate limiter unreachable: refusing (fail-closed)')
      if (opts.failOpen) return
      throw new MdqError('LIMITER_UNAVAILABLE', 'Rate limiting is unavailable right now; retry shortly.')
    }
    reply.header('RateLimit-Limit', decision.limit)
    reply.header('RateLimit-Remaining', decision.remaining)
    reply.header('RateLimit-Reset', Math.ceil(decision.resetMs / 1000))
    if (!decision.allowed) {
      opts.onOutcome?.('limited', operation)
      reply.header('Retry-After', Math.ceil(decision.retryAfterMs / 1000))
      throw new MdqError('RATE_LIMITED', `Rate limit of this API key on ${operation} reached (${quota.ratePerMin}/min, burst ${quota.burst}); retry after ${decision.retryAfterMs} ms.`, decision.retryAfterMs)
    }
  })
}

export const rateLimitPlugin = fp(rateLimit, { name: 'mdq-rate-limit', dependencies: ['mdq-auth'] })
