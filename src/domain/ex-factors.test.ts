import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { NO_ACTION, actionExFactors, deriveExFactors, exFactorOfAction, referencePrice } from './ex-factors.js'

describe('ex-factors', () => {
  it('10送3派1.6 at P = 13.21: R = (13.21 - 0.16) / 1.3, f = P / R', () => {
    const a = { ...NO_ACTION, cashDividend: 0.16, bonusRatio: 0.3 }
    assert.equal(referencePrice(13.21, a), (13.21 - 0.16) / 1.3)
    assert.equal(exFactorOfAction(13.21, a), 13.21 / ((13.21 - 0.16) / 1.3))
  })
  it('a 4-for-1 split is f = 4; a rights offer 10配3 at 5.0 from 10.0: R = (10 + 1.5) / 1.3', () => {
    assert.equal(exFactorOfAction(500, { ...NO_ACTION, splitRatio: 4 }), 4)
    assert.equal(referencePrice(10, { ...NO_ACTION, rightsRatio: 0.3, rightsPrice: 5 }), 11.5 / 1.3)
  })
  it('derives events only where prev_close differs from the previous close beyond rounding', () => {
    const bars = walkBars(tradingDays('SH', 19000, 6), [0.3, 0.6])
    bars.prevClose[2] = bars.close[1] + 0.00001 // rounding noise
    bars.prevClose[4] = bars.close[3] - 0.5 // a dividend of 0.5
    assert.deepEqual(deriveExFactors(bars), [
      { timestamp: bars.timestamp[4], exFactor: bars.close[3] / (bars.close[3] - 0.5) },
    ])
  })
  it('actions use the last close before the ex-date; no-op actions and actions before any bar give no event', () => {
    const bars = walkBars(tradingDays('SH', 19000, 6), [0.3, 0.6])
    const events = actionExFactors(bars, [
      { timestamp: bars.timestamp[0] - 86_400_000, action: { ...NO_ACTION, cashDividend: 1 } },
      { timestamp: bars.timestamp[2], action: NO_ACTION },
      { timestamp: bars.timestamp[3] + 3_600_000, action: { ...NO_ACTION, cashDividend: 0.1 } }, // ex-date in a gap
    ])
    assert.deepEqual(events, [
      { timestamp: bars.timestamp[3] + 3_600_000, exFactor: bars.close[3] / (bars.close[3] - 0.1) },
    ])
  })
})
