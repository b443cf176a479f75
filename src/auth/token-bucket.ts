/** @module Token-bucket arithmetic (no I/O, no clock: time is passed in); the Redis script mirrors it. */

export interface Quota {
  /** Sustained rate, requests per minute. */
  readonly ratePerMin: number
  /** Bucket capacity: requests allowed at once. */
  readonly burst: number
}

export interface BucketState {
  readonly tokens: number
  readonly updatedMs: number
}

export interface Decision {
  readonly allowed: boolean
  /** Whole tokens left after this request. */
  readonly remaining: number
  /** When refused: the exact wait until one token is there (ms, rounded up). 0 when allowed. */
  readonly retryAfterMs: number
  /** Until the bucket is full again (ms, rounded up). */
  readonly resetMs: number
  readonly limit: number
}

/**
 * Tokens are doubles: a retry exactly `retryAfterMs` later can find 0.9999999999 of a token. Counting
 * that as one keeps the promise "a retry after retry_after_ms succeeds" (the Lua script does the same).
 */
export const TOKEN_EPSILON = 1e-9

/** Refill since the last update, then take one token if there is one. */
export function takeToken(
  state: BucketState | undefined,
  nowMs: number,
  quota: Quota,
): { decision: Decision; state: BucketState } {
  const perMs = quota.ratePerMin / 60_000
  const elapsed = state ? Math.max(0, nowMs - state.updatedMs) : 0
  let tokens = state ? Math.min(quota.burst, state.tokens + elapsed * perMs) : quota.burst
  const allowed = tokens >= 1 - TOKEN_EPSILON
  if (allowed) tokens = Math.max(0, tokens - 1)
  return {
    state: { tokens, updatedMs: nowMs },
    decision: {
      allowed,
      remaining: Math.floor(tokens),
      retryAfterMs: allowed ? 0 : Math.ceil((1 - tokens) / perMs),
      resetMs: Math.ceil((quota.burst - tokens) / perMs),
      limit: quota.burst,
    },
  }
}
