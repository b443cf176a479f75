import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { arbSeed, sessionMinutes, walkBars } from '../../test/helpers/arbitraries.js'
import { builderState } from '../../test/helpers/builder-state.js'
import { MARKETS } from '../domain/market.js'
import { applySnapshot, type SymbolState } from '../domain/minute-bars.js'
import { snapshotsOfDay } from '../domain/quote-snapshots.js'
import { liveQuoteBytes, liveQuoteJson, liveQuoteOf } from './live-json.js'
import type { LiveQuote } from './market-store.js'

const SYMBOL = '600000.SH'
const EXT = { name: '浦发银行 "A"\\', change_pct: -0.0123, suspended: false, note: null }

/** Every state the builder keeps over a day of snapshots made from `seed`. */
function statesOfDay(seed: readonly number[]): SymbolState[] {
  const market = MARKETS.SH
  const minutes = sessionMinutes('SH', [market.zone.midnightUtc(20_100)])
  const bars = walkBars(minutes, seed)
  for (let i = 0; i < minutes.length; i++) {
    bars.volume[i] = 100 + Math.floor((seed[i % seed.length] ?? 0.5) * 10_000)
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  const states: SymbolState[] = []
  let state: SymbolState | undefined
  for (const q of snapshotsOfDay(SYMBOL, bars, market, 9.87, 3)) {
    state = applySnapshot(state, q, market).state
    if (state) states.push(state)
  }
  return states
}

/** The row's text by JSON.stringify of its arrays (FORMAT.md "Live data"), the oracle of the field-by-field writer. */
function rowText({ state: { last: l, bar: b }, ext }: LiveQuote): string {
  const last = [l.timestamp, l.lastPrice, l.open, l.high, l.low, l.prevClose, l.volume, l.amount]
  const bar = b && [
    b.start,
    b.open,
    b.high,
    b.low,
    b.close,
    b.volume,
    b.amount,
    b.baseVolume,
    b.baseAmount,
    b.closed ? 1 : 0,
  ]
  return JSON.stringify(ext === undefined ? [last, bar ?? null] : [last, bar ?? null, ext])
}

describe('live quote JSON', () => {
  it('is the arrays JSON.stringify gives for every state of a day, with and without ext, and reads back the same', () => {
    fc.assert(
      fc.property(arbSeed, fc.boolean(), (seed, withExt) => {
        for (const state of statesOfDay(seed)) {
          const q: LiveQuote = { symbol: SYMBOL, state, ...(withExt && { ext: EXT }) }
          const json = liveQuoteJson(q)
          assert.equal(json, rowText(q))
          assert.deepEqual(liveQuoteOf(SYMBOL, json), q)
          if (!withExt) assert.ok(json.length < JSON.stringify({ state }).length / 2, json)
        }
      }),
      { numRuns: 20 },
    )
  })

  it('writes a state field by field in the documented order', () => {
    const q: LiveQuote = { symbol: SYMBOL, state: builderState(SYMBOL) }
    assert.equal(
      liveQuoteJson(q),
      '[[1732699985000,10.52,10.31,10.6,10.28,10.3,12345600,129876543.21],[1732699980000,10.5,10.53,10.49,10.52,23400,246012.5,12322200,129630530.71,0]]',
    )
  })

  it('writes what JSON.stringify writes for numbers it cannot keep (NaN, infinities) and for -0, a state without a bar and one read back', () => {
    const first = statesOfDay([0.4, 0.6]).find((s) => s.bar !== undefined)!
    const odd: SymbolState = {
      last: { ...first.last, prevClose: NaN, volume: Infinity, amount: -0 },
      bar: { ...first.bar!, baseAmount: -Infinity, closed: true },
    }
    const bare: SymbolState = { last: first.last }
    const readBack = liveQuoteOf(SYMBOL, liveQuoteJson({ symbol: SYMBOL, state: first })).state
    for (const state of [odd, bare, readBack]) {
      const q: LiveQuote = { symbol: SYMBOL, state }
      assert.equal(liveQuoteJson(q), rowText(q))
    }
    const odds = liveQuoteOf(SYMBOL, liveQuoteJson({ symbol: SYMBOL, state: odd })).state
    assert.equal(odds.last.prevClose, null)
    assert.equal(odds.bar!.baseAmount, null)
    assert.equal(odds.bar!.closed, true)
    assert.deepEqual(liveQuoteOf(SYMBOL, liveQuoteJson({ symbol: SYMBOL, state: bare })).state, bare)
  })

  it('reads rows written as objects ({ state, ext }, as before the arrays) as they were written', () => {
    fc.assert(
      fc.property(arbSeed, fc.boolean(), (seed, withExt) => {
        for (const state of statesOfDay(seed)) {
          const q: LiveQuote = { symbol: SYMBOL, state, ...(withExt && { ext: EXT }) }
          assert.deepEqual(liveQuoteOf(SYMBOL, JSON.stringify({ state, ext: q.ext })), q)
        }
      }),
      { numRuns: 10 },
    )
  })
})

describe('live quote bytes (SQLite rows)', () => {
  it('reads back every state of a day as it was, with and without ext', () => {
    fc.assert(
      fc.property(arbSeed, fc.boolean(), (seed, withExt) => {
        for (const state of statesOfDay(seed)) {
          const q: LiveQuote = { symbol: SYMBOL, state, ...(withExt && { ext: EXT }) }
          assert.deepEqual(liveQuoteOf(SYMBOL, liveQuoteBytes(q)), q)
        }
      }),
      { numRuns: 20 },
    )
  })

  it('lays a state out as documented: header, the snapshot, the bar, the ext as JSON', () => {
    const state = builderState(SYMBOL)
    const bytes = liveQuoteBytes({ symbol: SYMBOL, state, ext: { name: 'Pudong' } })
    const doubles = Array.from({ length: 18 }, (_, i) => bytes.readDoubleLE(8 + i * 8))
    assert.deepEqual([...bytes.subarray(0, 8)], [1, 3, 0, 0, 0, 0, 0, 0])
    assert.deepEqual(
      doubles,
      [
        1732699985000, 10.52, 10.31, 10.6, 10.28, 10.3, 12345600, 129876543.21, 1732699980000, 10.5, 10.53, 10.49,
        10.52, 23400, 246012.5, 12322200, 129630530.71, 0,
      ],
    )
    assert.equal(bytes.toString('utf8', 8 + 18 * 8), '{"name":"Pudong"}')
    const bare = liveQuoteBytes({ symbol: SYMBOL, state: { last: state.last } })
    assert.deepEqual([bare.length, bare[0], bare[1]], [8 + 8 * 8, 1, 0])
  })

  it('keeps every double bit for bit (NaN, infinities, -0), a closed bar, and a state without a bar', () => {
    const first = statesOfDay([0.4, 0.6]).find((s) => s.bar !== undefined)!
    const odd: SymbolState = {
      last: { ...first.last, prevClose: NaN, volume: Infinity, amount: -0 },
      bar: { ...first.bar!, baseAmount: -Infinity, closed: true },
    }
    for (const state of [odd, { last: first.last }]) {
      const read = liveQuoteOf(SYMBOL, liveQuoteBytes({ symbol: SYMBOL, state })).state
      assert.deepEqual(read, state)
    }
    const read = liveQuoteOf(SYMBOL, liveQuoteBytes({ symbol: SYMBOL, state: odd })).state
    assert.ok(Object.is(read.last.amount, -0) && Number.isNaN(read.last.prevClose))
  })

  it('refuses bytes of a layout it does not know rather than reading them wrongly', () => {
    const bytes = liveQuoteBytes({ symbol: SYMBOL, state: builderState(SYMBOL) })
    bytes[0] = 2
    assert.throws(
      () => liveQuoteOf(SYMBOL, bytes),
      /live quote row of 600000\.SH is not one this mdq reads \(layout 2\)/,
    )
  })
})
