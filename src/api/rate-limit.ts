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
/**
 * Whether each limiter's backend failed on its last call. An outage is logged when it starts and
 * when it ends, not per request (a request rate of log lines is an outage of its own); the
 * failures in between are counted by `onOutcome` (mdq_rate_limiter_errors_total).
 */
const backendDown = new WeakMap<RateLimiter, boolean>()

export function rateLimitHook(opts: RateLimitOptions, operation: LimitedOperation): onRequestAsyncHookHandler {
  const { limiter } = opts
  return async (req, reply) => {
    const key = req.apiKey
    if (!key) return
    const quota: Quota = { ratePerMin: key.ratePerMin ?? opts.defaults.ratePerMin, burst: key.burst ?? opts.defaults.burst }
    let decision
    try {
      decision = await limiter.take(key.id, operation, quota)
    } catch (err) {
      opts.onOutcome?.('backend_error', operation)
      if (!backendDown.get(limiter)) {
        backendDown.set(limiter, true)
        const mode = opts.failOpen ? 'serving without limit (fail-open)' : 'refusing limited requests with 503 (fail-closed)'
        req.log.error({ limiter: limiter.name, reason: err instanceof Error ? err.message : String(err) }, `rate limiter unreachable: ${mode}; further failures are counted in mdq_rate_limiter_errors_total`)
      }
      if (opts.failOpen) return
      throw new MdqError('LIMITER_UNAVAILABLE', 'Rate limiting is unavailable right now; retry shortly.')
    }
    if (backendDown.get(limiter)) {
      backendDown.set(limiter, false)
      req.log.warn({ limiter: limiter.name }, 'rate limiter reachable again: limiting resumed')
    }
    reply.headers({ 'RateLimit-Limit': decision.limit, 'RateLimit-Remaining': decision.remaining, 'RateLimit-Reset': Math.ceil(decision.resetMs / 1000) })
    if (!decision.allowed) {
      opts.onOutcome?.('limited', operation)
      reply.header('Retry-After', Math.ceil(decision.retryAfterMs / 1000))
      throw new MdqError('RATE_LIMITED', `Rate limit of this API key on ${operation} reached (${quota.ratePerMin}/min, burst ${quota.burst}); retry after ${decision.retryAfterMs} ms.`, decision.retryAfterMs)
    }
  }
}
