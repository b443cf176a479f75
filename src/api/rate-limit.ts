/** @module Rate limiting of /v1/klines and /v1/klines/ex-factors per API key (contract "Rate limiting"). */
import type { onRequestAsyncHookHandler } from 'fastify'
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

/**
 * The onRequest hook of one limited route (klines, ex-factors; /v1/instruments has none, per the
 * spec). A route-level hook runs after the scope's auth hook: a bad key is a 401 before any token
 * is taken.
 */
export function rateLimitHook(opts: RateLimitOptions, operation: LimitedOperation): onRequestAsyncHookHandler {
  return async (req, reply) => {
    const key = req.apiKey
    if (!key) return
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
    reply.headers({ 'RateLimit-Limit': decision.limit, 'RateLimit-Remaining': decision.remaining, 'RateLimit-Reset': Math.ceil(decision.resetMs / 1000) })
    if (!decision.allowed) {
      opts.onOutcome?.('limited', operation)
      reply.header('Retry-After', Math.ceil(decision.retryAfterMs / 1000))
      throw new MdqError('RATE_LIMITED', `Rate limit of this API key on ${operation} reached (${quota.ratePerMin}/min, burst ${quota.burst}); retry after ${decision.retryAfterMs} ms.`, decision.retryAfterMs)
    }
  }
}
