import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { takeToken, type BucketState } from './token-bucket.js'

describe('token bucket', () => {
  const quota = { ratePerMin: 60, burst: 3 } // one token a second
  it('starts full, refuses when empty with the exact wait, refills at the rate', () => {
    let state: BucketState | undefined
    const take = (now: number) => {
      const r = takeToken(state, now, quota)
      state = r.state
      return r.decision
    }
    assert.deepEqual([take(0).allowed, take(0).allowed, take(0).allowed], [true, true, true])
    const refused = take(250)
    assert.equal(refused.allowed, false)
    assert.equal(refused.retryAfterMs, 750)
    assert.equal(take(999).allowed, false)
    assert.equal(take(1000).allowed, true)
    assert.equal(take(1000).remaining, 0)
    assert.equal(take(100_000).remaining, 2) // capped at burst, minus the one taken
  })
  it('a retry after retryAfterMs always succeeds; just before it always fails', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 40 }),
        (rate, burst, gaps) => {
          const q = { ratePerMin: rate, burst }
          let state: BucketState | undefined
          let now = 0
          for (const gap of gaps) {
            now += gap
            const r = takeToken(state, now, q)
            state = r.state
            if (!r.decision.allowed) {
              assert.equal(takeToken(state, now + r.decision.retryAfterMs, q).decision.allowed, true)
              if (r.decision.retryAfterMs > 1)
                assert.equal(takeToken(state, now + r.decision.retryAfterMs - 1.5, q).decision.allowed, false)
            }
          }
        },
      ),
      { numRuns: 2000 },
    )
    // The counterexample fast-check found once: a retry at exactly retryAfterMs.
    const first = takeToken(undefined, 0, { ratePerMin: 10, burst: 1 })
    const refused = takeToken(first.state, 14, { ratePerMin: 10, burst: 1 })
    assert.equal(
      takeToken(refused.state, 14 + refused.decision.retryAfterMs, { ratePerMin: 10, burst: 1 }).decision.allowed,
      true,
    )
  })
})
