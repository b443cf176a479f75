import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sessionMinutes, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { MARKETS } from './market.js'
import { fillDailyPrevClose, fillMinutePrevClose } from './prev-close.js'

describe('prev_close filling', () => {
  it('daily: stored values stay; missing ones are previous close / ex-factors since; first bar falls back to its open', () => {
    const bars = walkBars(tradingDays('SH', 19000, 5), [0.4, 0.8])
    const pc = Float64Array.from(bars.prevClose)
    pc.fill(NaN, 0, 4)
    const events = [{ timestamp: bars.timestamp[2], exFactor: 1.25 }]
    const out = fillDailyPrevClose({ ...bars, prevClose: pc }, events)
    assert.deepEqual(Array.from(out.prevClose), [bars.open[0], bars.close[0], bars.close[1] / 1.25, bars.close[2], bars.prevClose[4]])
    const paged = fillDailyPrevClose({ ...bars, prevClose: pc }, events, { timestamp: bars.timestamp[0] - 86_400_000, close: 9 })
    assert.equal(paged.prevClose[0], 9)
  })
  it('minute: previous 1m close inside a day; a day start takes the daily prev_close, else close / ex-factor', () => {
    const sh = MARKETS.SH
    const days = tradingDays('SH', 19000, 2)
    const bars = walkBars(sessionMinutes('SH', days), [0.1, 0.9, 0.5])
    const pc = new Float64Array(bars.prevClose.length).fill(NaN)
    const second = 240
    const events = [{ timestamp: days[1], exFactor: 2 }]
    const out = fillMinutePrevClose({ ...bars, prevClose: pc }, events, sh.zone, new Map())
    assert.equal(out.prevClose[1], bars.close[0])
    assert.equal(out.prevClose[second], bars.close[second - 1] / 2)
    const withDaily = fillMinutePrevClose({ ...bars, prevClose: pc }, events, sh.zone, new Map([[sh.zone.localDay(days[1]), 7.77]]))
    assert.equal(withDaily.prevClose[second], 7.77)
    assert.equal(withDaily.prevClose[second + 1], bars.close[second])
  })
})
