/** @module Rate limiting of /v1/klines and /v1/klines/ex-factors per API key (contract "Rate limiting"). */
import type { onRequestAsyncHookHandler } from 'fastify'
import type { IncomingMessage } from 'node:http'
import type { LimitedOperation, RateLimiter } from '../auth/rate-limiter.js'
import type { Decision, Quota } from '../auth/token-bucket.js'
import { MdqError } from '../domain/errors.js'
import type { ApiKeyRecord } from '../store/key-store.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation whose token this request took (set by the rate-limit hook; the fast path limits its repeats the same way). */
    limitedAs?: LimitedOperation
  }
}

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

const quotaOf = (opts: RateLimitOptions, key: ApiKeyRecord): Quota => ({
  ratePerMin: key.ratePerMin ?? opts.defaults.ratePerMin,
  burst: key.burst ?? opts.defaults.burst,
})

/** One token taken (or not) for a key: the limiter's decision, or its backend's failure. */
export type Outcome = { readonly keyId: number; readonly operation: LimitedOperation } & (
  { readonly decision: Decision } | { readonly error: unknown }
)

/** Takes one token of the key's bucket for `operation`, with the key's own quota or the defaults. */
export async function takeOutcome(
  opts: RateLimitOptions,
  key: ApiKeyRecord,
  operation: LimitedOperation,
): Promise<Outcome> {
  try {
    return { keyId: key.id, operation, decision: await opts.limiter.take(key.id, operation, quotaOf(opts, key)) }
  } catch (error) {
    return { keyId: key.id, operation, error }
  }
}

/** The outcome at once, when the limiter can give it so (memory); else undefined, nothing taken (call `takeOutcome`). */
export function outcomeNow(
  opts: RateLimitOptions,
  key: ApiKeyRecord,
  operation: LimitedOperation,
): Outcome | undefined {
  const { limiter } = opts
  return (
    limiter.takeNow && { keyId: key.id, operation, decision: limiter.takeNow(key.id, operation, quotaOf(opts, key)) }
  )
}

/** Whether the fast path may answer on this outcome: a plain allow with the backend known up (no outage to log as ended). */
export function plainAllow(
  opts: RateLimitOptions,
  outcome: Outcome,
): outcome is Outcome & { readonly decision: Decision } {
  return 'decision' in outcome && outcome.decision.allowed && !backendDown.get(opts.limiter)
}

/** Outcomes taken by the fast path for requests it then handed to Fastify: the hook answers them, so no token is taken twice. */
const carried = new WeakMap<IncomingMessage, Outcome>()

export function carryOutcome(raw: IncomingMessage, outcome: Outcome): void {
  carried.set(raw, outcome)
}

export function rateLimitHeaders(decision: Decision): Record<string, number> {
  return {
    'ratelimit-limit': decision.limit,
    'ratelimit-remaining': decision.remaining,
    'ratelimit-reset': Math.ceil(decision.resetMs / 1000),
  }
}

export function rateLimitHook(opts: RateLimitOptions, operation: LimitedOperation): onRequestAsyncHookHandler {
  const { limiter } = opts
  return async (req, reply) => {
    req.limitedAs = operation
    const key = req.apiKey
    if (!key) return
    const pre = carried.get(req.raw)
    carried.delete(req.raw)
    const outcome =
      pre !== undefined && pre.keyId === key.id && pre.operation === operation
        ? pre
        : await takeOutcome(opts, key, operation)
    if ('error' in outcome) {
      const err = outcome.error
      opts.onOutcome?.('backend_error', operation)
      if (!backendDown.get(limiter)) {
        backendDown.set(limiter, true)
        const mode = opts.failOpen
          ? 'serving without limit (fail-open)'
          : 'refusing limited requests with 503 (fail-closed)'
        req.log.error(
          { limiter: limiter.name, reason: err instanceof Error ? err.message : String(err) },
          `rate limiter unreachable: ${mode}; further failures are counted in mdq_rate_limiter_errors_total`,
        )
      }
      if (opts.failOpen) return
      throw new MdqError('LIMITER_UNAVAILABLE', 'Rate limiting is unavailable right now; retry shortly.')
    }
    const { decision } = outcome
    if (backendDown.get(limiter)) {
      backendDown.set(limiter, false)
      req.log.warn({ limiter: limiter.name }, 'rate limiter reachable again: limiting resumed')
    }
    reply.headers(rateLimitHeaders(decision))
    if (!decision.allowed) {
      opts.onOutcome?.('limited', operation)
      reply.header('Retry-After', Math.ceil(decision.retryAfterMs / 1000))
      const quota = quotaOf(opts, key)
      throw new MdqError(
        'RATE_LIMITED',
        `Rate limit of this API key on ${operation} reached (${quota.ratePerMin}/min, burst ${quota.burst}); retry after ${decision.retryAfterMs} ms.`,
        decision.retryAfterMs,
      )
    }
  }
}
