import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { arbSeed, sessionMinutes, walkBars } from '../../test/helpers/arbitraries.js'
import { MARKETS } from '../domain/market.js'
import { applySnapshot, type SymbolState } from '../domain/minute-bars.js'
import { snapshotsOfDay } from '../domain/quote-snapshots.js'
import { liveQuoteJson, liveQuoteOf } from './live-json.js'
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

describe('live quote JSON', () => {
  it('is the text JSON.stringify gives for every state of a day, with and without ext, and reads back the same', () => {
    fc.assert(
      fc.property(arbSeed, fc.boolean(), (seed, withExt) => {
        for (const state of statesOfDay(seed)) {
          const q: LiveQuote = { symbol: SYMBOL, state, ...(withExt && { ext: EXT }) }
          const json = liveQuoteJson(q)
          assert.equal(json, JSON.stringify({ state: q.state, ext: q.ext }))
          assert.deepEqual(liveQuoteOf(SYMBOL, json), q)
        }
      }),
      { numRuns: 20 },
    )
  })

  it('writes what JSON.stringify writes for numbers it cannot keep (NaN, infinities) and for -0, a state without a bar and one read back', () => {
    const first = statesOfDay([0.4, 0.6]).find((s) => s.bar !== undefined)!
    const odd: SymbolState = {
      last: { ...first.last, prevClose: NaN, volume: Infinity, amount: -0 },
      bar: { ...first.bar!, baseAmount: -Infinity, closed: true },
    }
    const bare: SymbolState = { last: first.last }
    const readBack = liveQuoteOf(SYMBOL, JSON.stringify({ state: first })).state
    for (const state of [odd, bare, readBack]) {
      const q: LiveQuote = { symbol: SYMBOL, state }
      assert.equal(liveQuoteJson(q), JSON.stringify({ state, ext: undefined }))
    }
    assert.equal(liveQuoteOf(SYMBOL, liveQuoteJson({ symbol: SYMBOL, state: odd })).state.last.prevClose, null)
  })
})
