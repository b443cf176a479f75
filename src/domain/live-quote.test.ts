import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isTodays, liveSession } from './live-quote.js'
import { MARKETS } from './market.js'

const SH = MARKETS.SH
const US = MARKETS.US
const at = (market: typeof SH, y: number, mo: number, d: number, hh: number, mm: number) =>
  market.zone.utcOf(y, mo, d, hh * 60 + mm)

describe('a pushed quote read back later', () => {
  it('is regular only while the session it was stamped in runs; closed after it, at lunch, on another day', () => {
    const morning = at(SH, 2026, 11, 18, 10, 0)
    assert.equal(liveSession(SH, morning, at(SH, 2026, 11, 18, 11, 29)), 'regular')
    assert.equal(liveSession(SH, morning, at(SH, 2026, 11, 18, 11, 30)), 'closed') // lunch break
    assert.equal(liveSession(SH, morning, at(SH, 2026, 11, 18, 13, 5)), 'closed') // the afternoon session is another
    assert.equal(liveSession(SH, at(SH, 2026, 11, 18, 13, 0), at(SH, 2026, 11, 18, 14, 59)), 'regular')
    assert.equal(liveSession(SH, morning, at(SH, 2026, 11, 19, 10, 0)), 'closed') // the next day
    assert.equal(liveSession(SH, at(SH, 2026, 11, 18, 9, 25), at(SH, 2026, 11, 18, 9, 40)), 'closed') // auction print
    // A feed's clock a second ahead of ours.
    assert.equal(liveSession(US, at(US, 2026, 7, 15, 15, 0) + 1000, at(US, 2026, 7, 15, 15, 0)), 'regular')
  })

  it("is today's by the exchange's local day, not UTC's", () => {
    // 08:00 in New York is 12:00 UTC; 20:00 the same local day is 00:00 UTC the next day.
    assert.ok(isTodays(US, at(US, 2026, 7, 15, 8, 0), at(US, 2026, 7, 15, 20, 0)))
    assert.ok(!isTodays(US, at(US, 2026, 7, 15, 23, 59), at(US, 2026, 7, 16, 0, 1)))
  })
})
