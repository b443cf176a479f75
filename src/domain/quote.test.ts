import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { allocBars } from './bars.js'
import { bareInstrument } from './instrument.js'
import { MARKETS } from './market.js'
import type { QuoteSnapshot } from './minute-bars.js'
import { quoteOfDay, quoteOfSnapshot, quoteSession } from './quote.js'

describe('quoteSession', () => {
  const local = (exchange: 'SH' | 'HK' | 'US', y: number, mo: number, d: number, hh: number, mm: number) =>
    MARKETS[exchange].zone.utcOf(y, mo, d, hh * 60 + mm)
  // A quote stamped now: the exchange's clock alone decides.
  const at = (exchange: 'SH' | 'HK' | 'US', y: number, mo: number, d: number, hh: number, mm: number) =>
    quoteSession(MARKETS[exchange], local(exchange, y, mo, d, hh, mm), local(exchange, y, mo, d, hh, mm))
  it('regular inside a session, closed at the lunch break, after the close and on weekends (exchange-local, DST aware)', () => {
    assert.equal(at('SH', 2026, 11, 18, 9, 30), 'regular')
    assert.equal(at('SH', 2026, 11, 18, 11, 30), 'closed')
    assert.equal(at('SH', 2026, 11, 18, 14, 59), 'regular')
    assert.equal(at('SH', 2026, 11, 18, 15, 0), 'closed')
    assert.equal(at('HK', 2026, 11, 18, 15, 30), 'regular')
    assert.equal(at('SH', 2026, 11, 21, 10, 0), 'closed') // Saturday
    assert.equal(at('US', 2026, 7, 15, 9, 29), 'closed')
    assert.equal(at('US', 2026, 7, 15, 9, 30), 'regular') // EDT
    assert.equal(at('US', 2026, 12, 15, 15, 59), 'regular') // EST
  })
  it('closed after a half day closes early (US 13:00, HK 12:00 without an afternoon session)', () => {
    assert.equal(at('US', 2026, 11, 27, 12, 59), 'regular') // the day after Thanksgiving
    assert.equal(at('US', 2026, 11, 27, 13, 0), 'closed')
    assert.equal(at('US', 2026, 11, 27, 15, 0), 'closed')
    assert.equal(at('US', 2026, 11, 25, 15, 0), 'regular') // the Wednesday before: an ordinary day
    assert.equal(at('HK', 2026, 12, 24, 11, 59), 'regular')
    assert.equal(at('HK', 2026, 12, 24, 13, 30), 'closed')
    assert.equal(at('HK', 2026, 12, 23, 13, 30), 'regular')
  })
  it("regular only for a quote of the session running now: not one of an earlier session or day, nor a daily bar's", () => {
    const now = local('SH', 2025, 12, 31, 14, 59) // Wednesday, the afternoon session
    const session = (quote: number) => quoteSession(MARKETS.SH, quote, now)
    assert.equal(session(local('SH', 2025, 12, 31, 14, 59)), 'regular') // the bar running now
    assert.equal(session(local('SH', 2025, 12, 31, 13, 0)), 'regular') // earlier in the same session
    assert.equal(session(local('SH', 2025, 12, 31, 11, 29)), 'closed') // the morning session
    assert.equal(session(local('SH', 2025, 12, 30, 14, 59)), 'closed') // the day before, at the same time
    assert.equal(session(local('SH', 2025, 12, 31, 0, 0)), 'closed') // a daily bar: stamped at midnight
    assert.equal(session(local('SH', 2026, 1, 5, 14, 0)), 'closed') // a bar after now
    // The exchange open now, the quote's bar a year old: closed.
    assert.equal(
      quoteSession(MARKETS.SH, local('SH', 2025, 12, 31, 14, 59), local('SH', 2026, 11, 18, 10, 0)),
      'closed',
    )
  })
})

describe('quoteOfDay', () => {
  const instrument = bareInstrument('600519.SH', { name: 'Moutai' })
  const minutes = allocBars(3)
  ;[
    minutes.timestamp,
    minutes.open,
    minutes.high,
    minutes.low,
    minutes.close,
    minutes.volume,
    minutes.amount,
    minutes.prevClose,
  ].forEach((col, k) =>
    col.set(
      [
        [1, 2, 3],
        [10, 11, 12],
        [11, 13, 12.5],
        [9.5, 10.5, 11.5],
        [11, 12, 12.2],
        [5, 6, 7],
        [0.1, 0.2, 0.3],
        [9.8, 11, 12],
      ][k],
    ),
  )
  it('from minutes only: open of the first, max high, min low, sums, prev_close of the first, last close', () => {
    const q = quoteOfDay(instrument, MARKETS.SH, allocBars(0), minutes, 0)
    assert.deepEqual(
      [q.timestamp, q.lastPrice, q.open, q.high, q.low, q.volume, q.amount, q.prevClose],
      [3, 12.2, 10, 13, 9.5, 18, 0.6, 9.8],
    )
    // 12.2 - 9.8 is 2.3999999999999986 in doubles: the change is the decimal one, the ratios to 6 decimals.
    assert.equal(q.changeAmount, 2.4)
    assert.equal(q.changePct, 0.244898)
    assert.equal(q.amplitude, 0.357143)
    assert.deepEqual([q.kind, q.name, q.region, q.session], ['cn_equity', 'Moutai', 'CN', 'closed'])
  })
  it('a daily bar gives the day figures; the last minute still gives the last price and timestamp', () => {
    const daily = allocBars(1)
    ;[
      daily.timestamp[0],
      daily.open[0],
      daily.high[0],
      daily.low[0],
      daily.close[0],
      daily.volume[0],
      daily.amount[0],
      daily.prevClose[0],
    ] = [0, 10, 14, 9, 12.3, 100, 50, 10]
    const q = quoteOfDay(instrument, MARKETS.SH, daily, minutes, 0)
    assert.deepEqual(
      [q.timestamp, q.lastPrice, q.open, q.high, q.low, q.volume, q.amount, q.prevClose],
      [3, 12.2, 10, 14, 9, 100, 50, 10],
    )
    const dailyOnly = quoteOfDay(instrument, MARKETS.SH, daily, allocBars(0), 0)
    assert.deepEqual([dailyOnly.timestamp, dailyOnly.lastPrice], [0, 12.3])
  })
})

describe('quoteOfSnapshot: a pushed quote read back later', () => {
  const SH = MARKETS.SH
  const US = MARKETS.US
  const at = (market: typeof SH, y: number, mo: number, d: number, hh: number, mm: number) =>
    market.zone.utcOf(y, mo, d, hh * 60 + mm)
  const pushed = (symbol: string, timestamp: number): QuoteSnapshot => ({
    symbol,
    timestamp,
    lastPrice: 10.52,
    open: 10.3,
    high: 10.6,
    low: 10.21,
    prevClose: 10.44,
    volume: 12_345,
    amount: 12_900_000.5,
  })
  const session = (market: typeof SH, quoteMs: number, nowMs: number) =>
    quoteOfSnapshot(pushed(market === SH ? '600000.SH' : 'AAPL.US', quoteMs), market, null, nowMs).session

  it('is regular only while the session it was stamped in runs; closed after it, at lunch, on another day', () => {
    const morning = at(SH, 2026, 11, 18, 10, 0)
    assert.equal(session(SH, morning, at(SH, 2026, 11, 18, 11, 29)), 'regular')
    assert.equal(session(SH, morning, at(SH, 2026, 11, 18, 11, 30)), 'closed') // lunch break
    assert.equal(session(SH, morning, at(SH, 2026, 11, 18, 13, 5)), 'closed') // the afternoon session is another
    assert.equal(session(SH, at(SH, 2026, 11, 18, 13, 0), at(SH, 2026, 11, 18, 14, 59)), 'regular')
    assert.equal(session(SH, morning, at(SH, 2026, 11, 19, 10, 0)), 'closed') // the next day
    assert.equal(session(SH, at(SH, 2026, 11, 18, 9, 25), at(SH, 2026, 11, 18, 9, 40)), 'closed') // auction print
    // A feed's clock a second ahead of ours; a quote an hour ahead is not of the session running now.
    assert.equal(session(US, at(US, 2026, 7, 15, 15, 0) + 1000, at(US, 2026, 7, 15, 15, 0)), 'regular')
    assert.equal(session(SH, at(SH, 2026, 11, 18, 13, 5), at(SH, 2026, 11, 18, 11, 29)), 'closed')
  })

  it('carries its own day figures and time, the changes rounded, the pushed ext over the computed one', () => {
    const q = quoteOfSnapshot(pushed('600000.SH', at(SH, 2026, 11, 18, 10, 0)), SH, null, at(SH, 2026, 11, 18, 10, 0), {
      name: '浦发银行',
      turnover_rate: 0.0012,
    })
    assert.equal(q.timestamp, at(SH, 2026, 11, 18, 10, 0))
    assert.deepEqual([q.lastPrice, q.open, q.high, q.low, q.prevClose], [10.52, 10.3, 10.6, 10.21, 10.44])
    assert.deepEqual([q.volume, q.amount], [12_345, 12_900_000.5])
    assert.equal(q.changeAmount, 0.08) // 10.52 - 10.44 is 0.08000000000000007 in doubles
    assert.equal(q.changePct, 0.007663)
    assert.equal(q.amplitude, 0.037356)
    assert.equal(q.name, '浦发银行') // no instrument name: the pushed one
    assert.deepEqual(q.pushedExt, { turnover_rate: 0.0012 })
  })

  it("names the quote as its instrument is named, over a pushed ext's name", () => {
    const ms = at(SH, 2026, 11, 18, 10, 0)
    const q = quoteOfSnapshot(pushed('600000.SH', ms), SH, 'SPD Bank', ms, { name: '浦发银行', turnover_rate: 0.0012 })
    assert.equal(q.name, 'SPD Bank')
    assert.deepEqual(q.pushedExt, { turnover_rate: 0.0012 })
  })
})
