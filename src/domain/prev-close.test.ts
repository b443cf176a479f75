import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sessionMinutes, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { MARKETS } from './market.js'
import { factorBetween, fillDailyPrevClose, fillMinutePrevClose } from './prev-close.js'

describe('prev_close filling', () => {
  it('daily: stored values stay; missing ones are previous close / ex-factors since; first bar falls back to its open', () => {
    const bars = walkBars(tradingDays('SH', 19000, 5), [0.4, 0.8])
    const pc = Float64Array.from(bars.prevClose)
    pc.fill(NaN, 0, 4)
    const events = [{ timestamp: bars.timestamp[2], exFactor: 1.25 }]
    const out = fillDailyPrevClose({ ...bars, prevClose: pc }, events)
    assert.deepEqual(Array.from(out.prevClose), [
      bars.open[0],
      bars.close[0],
      bars.close[1] / 1.25,
      bars.close[2],
      bars.prevClose[4],
    ])
    const paged = fillDailyPrevClose({ ...bars, prevClose: pc }, events, {
      timestamp: bars.timestamp[0] - 86_400_000,
      close: 9,
    })
    assert.equal(paged.prevClose[0], 9)
  })
  it('daily: several events between two bars, before the first and after the last, each bar over exactly its own', () => {
    const bars = walkBars(tradingDays('SH', 19000, 40), [0.4, 0.8])
    const ts = bars.timestamp
    const gapped = { ...bars, prevClose: new Float64Array(ts.length).fill(NaN) }
    // Events: before everything, two on days without a bar between bars 9 and 10 (bars 3..8 cut out below), on bars, after the last.
    const day = 86_400_000
    const events = [ts[0] - 5 * day, ts[2], ts[9] + day, ts[9] + 2 * day, ts[20], ts[21], ts[39] + day].map(
      (timestamp, k) => ({ timestamp, exFactor: 1 + (k + 1) / 17 }),
    )
    const keep = [...ts.keys()].filter((i) => i < 3 || i > 8)
    const cut = { ...gapped }
    for (const f of Object.keys(cut) as (keyof typeof cut)[]) cut[f] = Float64Array.from(keep, (i) => gapped[f][i])
    const before = { timestamp: ts[0] - 10 * day, close: 5 }
    const out = fillDailyPrevClose(cut, events, before)
    const expected = Array.from(cut.timestamp, (t, i) =>
      i === 0
        ? before.close / factorBetween(events, before.timestamp, t)
        : cut.close[i - 1] / factorBetween(events, cut.timestamp[i - 1], t),
    )
    assert.deepEqual(Array.from(out.prevClose), expected)
    assert.ok(cut.prevClose.every(Number.isNaN), 'the input column is left as it was')
    const owned = fillDailyPrevClose(cut, events, before, true)
    assert.equal(owned.prevClose, cut.prevClose, "inPlace: the caller's own column, filled")
    assert.deepEqual(Array.from(cut.prevClose), expected)
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
    const withDaily = fillMinutePrevClose(
      { ...bars, prevClose: pc },
      events,
      sh.zone,
      new Map([[sh.zone.localDay(days[1]), 7.77]]),
    )
    assert.equal(withDaily.prevClose[second], 7.77)
    assert.equal(withDaily.prevClose[second + 1], bars.close[second])
  })
})
