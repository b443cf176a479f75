import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { arbDailyCase, pickEvents, tradingDays, walkBars } from '../../test/helpers/arbitraries.js'
import { ADJUSTS, adjustBars, round4, type Adjust } from './adjust.js'
import { aggregate } from './aggregate.js'
import { barCount, lowerBound, type Bars } from './bars.js'
import { gapsOf, type ExFactorEvent } from './ex-factors.js'
import { MARKETS } from './market.js'
import { daysFromCivil } from './time-zone.js'
import { fillDailyPrevClose } from './prev-close.js'

/** Bars whose prev_close on each ex-date is the exchange reference price close[i-1] / f. */
function withReferencePrices(bars: Bars, events: readonly ExFactorEvent[]): Bars {
  const raw = { ...bars, prevClose: new Float64Array(barCount(bars)).fill(NaN) }
  return fillDailyPrevClose(raw, events)
}
const gapsFor = (bars: Bars, events: readonly ExFactorEvent[]) =>
  gapsOf(events, (e) => bars.close[lowerBound(bars.timestamp, e.timestamp) - 1])
const close = (a: number, b: number, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b))

/** The contract's table, one bar at a time (the oracle). */
function oracle(p: number, t: number, events: readonly ExFactorEvent[], gaps: Float64Array, mode: Adjust): number {
  let v = p
  events.forEach((e, k) => {
    const after = e.timestamp > t
    if (mode === 'forward' && after) v /= e.exFactor
    if (mode === 'backward' && !after) v *= e.exFactor
    if (mode === 'forward_additive' && after) v -= gaps[k]
    if (mode === 'backward_additive' && !after) v += gaps[k]
  })
  return v
}

describe('price adjustment', () => {
  it('every mode equals the contract formula bar by bar; volume and amount are untouched', () => {
    fc.assert(
      fc.property(arbDailyCase, fc.constantFrom(...ADJUSTS), ({ exchange, firstDay, n, seed, eventPicks }, mode) => {
        const raw = walkBars(tradingDays(exchange, firstDay, n), seed)
        const events = pickEvents(raw.timestamp, eventPicks)
        const bars = withReferencePrices(raw, events)
        const gaps = gapsFor(bars, events)
        const out = adjustBars(bars, events, mode, gaps)
        for (let i = 0; i < n; i++) {
          for (const f of ['open', 'high', 'low', 'close', 'prevClose'] as const)
            assert.ok(close(out[f][i], oracle(bars[f][i], bars.timestamp[i], events, gaps, mode)), `${mode} ${f}[${i}]`)
        }
        assert.equal(out.volume, bars.volume)
        assert.equal(out.amount, bars.amount)
      }),
      { numRuns: 150 },
    )
  })

  it('forward keeps the latest bar raw, backward the earliest; forward/backward is one constant', () => {
    fc.assert(
      fc.property(arbDailyCase, ({ exchange, firstDay, n, seed, eventPicks }) => {
        const bars = walkBars(tradingDays(exchange, firstDay, n), seed)
        const events = pickEvents(bars.timestamp, eventPicks).filter((e) => e.timestamp > bars.timestamp[0])
        const fwd = adjustBars(bars, events, 'forward')
        const bwd = adjustBars(bars, events, 'backward')
        assert.equal(fwd.close[n - 1], bars.close[n - 1])
        assert.equal(bwd.close[0], bars.close[0])
        const k = bwd.close[0] / fwd.close[0]
        for (let i = 0; i < n; i++) assert.ok(close(bwd.close[i] / fwd.close[i], k, 1e-12))
      }),
      { numRuns: 150 },
    )
  })

  it('prev_close[i] == close[i-1] (to rounding) across ex-dates in every mode but none', () => {
    fc.assert(
      fc.property(
        arbDailyCase,
        fc.constantFrom<Adjust>('forward', 'backward', 'forward_additive', 'backward_additive'),
        ({ exchange, firstDay, n, seed, eventPicks }, mode) => {
          const raw = walkBars(tradingDays(exchange, firstDay, n), seed)
          const events = pickEvents(raw.timestamp, eventPicks)
          const bars = withReferencePrices(raw, events)
          const out = adjustBars(bars, events, mode, gapsFor(bars, events))
          for (let i = 1; i < n; i++)
            assert.ok(Math.abs(round4(out.prevClose[i]) - round4(out.close[i - 1])) <= 1e-4 + 1e-12, `${mode} bar ${i}`)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('additive modes shift by exactly the summed gaps', () => {
    const bars = walkBars(tradingDays('SH', 19000, 10), [0.2, 0.7, 0.4])
    const events = [
      { timestamp: bars.timestamp[3], exFactor: 1.5 },
      { timestamp: bars.timestamp[7], exFactor: 2 },
    ]
    const gaps = gapsFor(bars, events)
    assert.equal(gaps[0], bars.close[2] * (1 - 1 / 1.5))
    const fa = adjustBars(bars, events, 'forward_additive', gaps)
    const ba = adjustBars(bars, events, 'backward_additive', gaps)
    for (let i = 0; i < 10; i++) {
      const later = (i < 3 ? gaps[0] : 0) + (i < 7 ? gaps[1] : 0)
      const earlier = (i >= 3 ? gaps[0] : 0) + (i >= 7 ? gaps[1] : 0)
      assert.equal(fa.close[i], bars.close[i] - later)
      assert.equal(ba.close[i], bars.close[i] + earlier)
    }
  })

  it('adjusted aggregates are aggregates of adjusted constituents (an ex-date mid-week)', () => {
    const bars = walkBars(tradingDays('SH', daysFromCivil(2024, 8, 12), 5), [0.9, 0.1, 0.5]) // Mon..Fri of one week
    const events = [{ timestamp: bars.timestamp[2], exFactor: 2 }]
    const weekly = aggregate(adjustBars(bars, events, 'forward'), '1w', MARKETS.SH)
    assert.equal(barCount(weekly), 1)
    const expectedHigh = Math.max(bars.high[0] / 2, bars.high[1] / 2, bars.high[2], bars.high[3], bars.high[4])
    assert.equal(weekly.high[0], expectedHigh)
  })

  it('forward_additive may go negative and is not clamped; none returns the input', () => {
    const bars = walkBars(tradingDays('US', 19000, 4), [0.5])
    const events = [{ timestamp: bars.timestamp[2], exFactor: 1000 }]
    const out = adjustBars(bars, events, 'forward_additive', Float64Array.of(bars.close[1] * 2))
    assert.ok(out.close[0] < 0)
    assert.equal(adjustBars(bars, events, 'none'), bars)
  })

  it('rounds to 4 decimals at the edge', () => {
    assert.equal(round4(10.03846153), 10.0385)
    assert.equal(round4(-1.23456), -1.2346)
  })
})

describe('adjusting into a target', () => {
  it('in place gives the same prices as into fresh arrays, in every mode and price column', () => {
    const bars = walkBars(tradingDays('SH', 19000, 30), [0.2, 0.7, 0.4])
    // Bars before the first event (backward's ratio 1) and after the last (forward's): left as they are.
    const events = [
      { timestamp: bars.timestamp[10], exFactor: 1.1 },
      { timestamp: bars.timestamp[20], exFactor: 1.3 },
    ]
    const gaps = gapsFor(bars, events)
    for (const mode of ADJUSTS.filter((m) => m !== 'none')) {
      const fresh = adjustBars(bars, events, mode, gaps)
      const copy = {
        ...bars,
        open: bars.open.slice(),
        high: bars.high.slice(),
        low: bars.low.slice(),
        close: bars.close.slice(),
        prevClose: bars.prevClose.slice(),
      }
      const inPlace = adjustBars(copy, events, mode, gaps, copy)
      for (const f of ['open', 'high', 'low', 'close', 'prevClose'] as const) {
        assert.deepEqual(Array.from(inPlace[f]), Array.from(fresh[f]), `${mode} ${f}`)
        assert.equal(inPlace[f], copy[f])
        assert.notEqual(fresh[f], bars[f])
      }
      const raw = mode === 'forward' ? [25, 30] : mode === 'backward' ? [0, 10] : undefined
      if (raw)
        assert.deepEqual(
          Array.from(fresh.close.subarray(...raw)),
          Array.from(bars.close.subarray(...raw)),
          `${mode}: the bars with a ratio of 1 are raw`,
        )
      assert.notDeepEqual(
        Array.from(fresh.close.subarray(10, 20)),
        Array.from(bars.close.subarray(10, 20)),
        `${mode}: the bars between the events move`,
      )
    }
  })
})
