/** @module Rate limiters: one token bucket per (API key, operation), in memory or shared through Redis. */
import { Redis } from 'ioredis'
import { answeredWithin } from '../lib/deadline.js'
import { takeToken, type BucketState, type Decision, type Quota } from './token-bucket.js'

export type LimitedOperation = 'klines' | 'ex-factors'

export interface RateLimiter {
  readonly name: 'memory' | 'redis'
  /** Takes one token of the bucket (keyId, operation); rejects only when the backend cannot be reached. */
  take(keyId: number, operation: LimitedOperation, quota: Quota): Promise<Decision>
  /** The same, answered at once, by a limiter whose buckets are in this process (the fast path then needs no await). */
  takeNow?(keyId: number, operation: LimitedOperation, quota: Quota): Decision
  /** Whether the backend answers (for /readyz). */
  ready(): Promise<boolean>
  close(): Promise<void>
}

/** One process's buckets; Node runs one request's check at a time, so a Map is exact. */
export class MemoryRateLimiter implements RateLimiter {
  readonly name = 'memory'
  readonly #buckets = new Map<string, BucketState>()
  constructor(private readonly now: () => number = () => performance.timeOrigin + performance.now()) {}

  async take(keyId: number, operation: LimitedOperation, quota: Quota): Promise<Decision> {
    return this.takeNow(keyId, operation, quota)
  }

  takeNow(keyId: number, operation: LimitedOperation, quota: Quota): Decision {
    const id = `${keyId}:${operation}`
    const { decision, state } = takeToken(this.#buckets.get(id), this.now(), quota)
    this.#buckets.set(id, state)
    return decision
  }
  async ready(): Promise<boolean> {
    return true
  }
  async close(): Promise<void> {}
}

/**
 * The same buckets in one Lua script, atomic in Redis, with Redis's own clock (TIME) so instances
 * with skewed clocks still share one exact budget. One call takes one token of each bucket in KEYS,
 * in order (a bucket named twice gives two tokens, the second seeing the first), with its quota in
 * ARGV (rate per minute and burst, two values a key); it returns four numbers a key. State: a hash
 * {tokens, ms} per bucket, expiring once full.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local out = {}
for i, key in ipairs(KEYS) do
  local perMs = tonumber(ARGV[2 * i - 1]) / 60000
  local burst = tonumber(ARGV[2 * i])
  local state = redis.call('HMGET', key, 'tokens', 'ms')
  local tokens = burst
  if state[1] then
    tokens = math.min(burst, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * perMs)
  end
  local allowed = 0
  if tokens >= 1 - 1e-9 then
    tokens = math.max(0, tokens - 1)
    allowed = 1
  end
  redis.call('HSET', key, 'tokens', tostring(tokens), 'ms', tostring(now))
  local fullMs = math.ceil((burst - tokens) / perMs)
  redis.call('PEXPIRE', key, fullMs + 1000)
  local retry = 0
  if allowed == 0 then retry = math.ceil((1 - tokens) / perMs) end
  out[#out + 1] = allowed
  out[#out + 1] = math.floor(tokens)
  out[#out + 1] = retry
  out[#out + 1] = fullMs
end
return out
`

/** A check waiting for its turn's script call. */
interface Waiting {
  readonly bucket: string
  readonly quota: Quota
  readonly resolve: (reply: readonly number[]) => void
  readonly reject: (err: unknown) => void
}

/** How long the first requests wait for the first connection before counting as a failure. */
export const FIRST_CONNECT_MS = 3000

/**
 * How long one Redis command may take before it counts as a failure (then the fail-open/closed
 * policy answers). A stalled Redis (paused, swapping, blocked by a slow script) keeps the TCP
 * connection up, so only a timeout notices it.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 250

export class RedisRateLimiter implements RateLimiter {
  readonly name = 'redis'
  readonly #redis: Redis
  /** Settles at the first connection (or after FIRST_CONNECT_MS): requests at startup are not "Redis down". */
  readonly #firstConnect: Promise<void>
  /**
   * Checks asked during this event-loop turn: they go to Redis as one script call once the turn's
   * other callbacks have run (a busy turn has tens of requests), in the order asked, each answered
   * with its bucket's four numbers, or all failed (and timed out) together.
   */
  #turn: Waiting[] = []

  /**
   * `commandTimeoutMs`: how long a check may wait for Redis before the fail-open/closed policy
   * answers (REDIS_COMMAND_TIMEOUT_MS unless given).
   */
  constructor(
    url: string,
    readonly prefix = 'mdq:rl:',
    readonly commandTimeoutMs = REDIS_COMMAND_TIMEOUT_MS,
  ) {
    // Fail fast while disconnected (no offline queue), and keep reconnecting in the background.
    // Auto-pipelining sends the checks of concurrent requests in one round trip.
    this.#redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: true,
      retryStrategy: (n) => Math.min(n * 100, 1000),
    })
    this.#redis.on('error', () => {}) // reported per request by the caller
    this.#redis.defineCommand('mdqTake', { lua: TAKE_SCRIPT })
    this.#firstConnect = new Promise((resolve) => {
      const timer = setTimeout(resolve, FIRST_CONNECT_MS)
      timer.unref()
      this.#redis.once('ready', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  async take(keyId: number, operation: LimitedOperation, quota: Quota): Promise<Decision> {
    if (this.#redis.status !== 'ready') await this.#firstConnect
    const [allowed, remaining, retryAfterMs, resetMs] = await new Promise<readonly number[]>((resolve, reject) => {
      if (this.#turn.length === 0) setImmediate(() => this.#takeTurn())
      this.#turn.push({ bucket: `${this.prefix}${keyId}:${operation}`, quota, resolve, reject })
    })
    return { allowed: allowed === 1, remaining, retryAfterMs, resetMs, limit: quota.burst }
  }

  #takeTurn(): void {
    const turn = this.#turn
    this.#turn = []
    const take = (this.#redis as unknown as { mdqTake(keys: number, ...args: (string | number)[]): Promise<number[]> })
      .mdqTake
    const call = take.call(
      this.#redis,
      turn.length,
      ...turn.map((w) => w.bucket),
      ...turn.flatMap((w) => [w.quota.ratePerMin, w.quota.burst]),
    )
    answeredWithin(call, this.commandTimeoutMs, 'Redis: a rate-limit check').then(
      (reply) => turn.forEach((w, i) => w.resolve(reply.slice(4 * i, 4 * i + 4))),
      (err: unknown) => turn.forEach((w) => w.reject(err)),
    )
  }

  async ready(): Promise<boolean> {
    try {
      return (await answeredWithin(this.#redis.ping(), this.commandTimeoutMs, 'Redis: PING')) === 'PONG'
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect()
  }
}
