import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sessionMinutes, tradingDays, walkBars } from '../../../test/helpers/arbitraries.js'
import { dumpStore, tempDir } from '../../../test/helpers/store-files.js'
import { allocBars, BAR_FIELDS, barCount, sliceBars, type Bars } from '../../domain/bars.js'
import { SqliteMarketStore } from './sqlite-market-store.js'

/** The bars of `ts` (ascending) from a model row per timestamp: later writes replace earlier ones. */
function barsOf(rows: Map<number, number[]>): Bars {
  const ts = [...rows.keys()].sort((a, b) => a - b)
  const out = allocBars(ts.length)
  ts.forEach((t, i) => BAR_FIELDS.forEach((f, k) => (out[f][i] = rows.get(t)![k])))
  return out
}

describe('WrittenChunks (the transaction-kept 1m chunks the rollup rebuild reads)', () => {
  it('a transaction of overlapping puts out of order and a delete, past the rows kept, stores the same bytes as one put of the result', async () => {
    const { dir, cleanup } = tempDir()
    try {
      // Two symbols of 1,150 trading days each: 276,000 1m bars a symbol, more than WrittenChunks keeps.
      const symbols = ['600001.SH', '600002.SH']
      const ts = sessionMinutes('SH', tradingDays('SH', 16_000, 1_150))
      const model = new Map(symbols.map((s) => [s, new Map<number, number[]>()]))
      const piece = (bars: Bars, from: number, to: number) => sliceBars(bars, from, Math.min(to, barCount(bars)))
      const a = SqliteMarketStore.open(join(dir, 'a.db'))
      const w = await a.beginWrite()
      for (const [s, symbol] of symbols.entries()) {
        const first = walkBars(ts, [0.1 + s / 10, 0.7, 0.35])
        const second = walkBars(ts, [0.9 - s / 10, 0.2])
        const rows = model.get(symbol)!
        const put = async (bars: Bars) => {
          await w.putBars(symbol, '1m', bars)
          for (let i = 0; i < barCount(bars); i++)
            rows.set(
              bars.timestamp[i],
              BAR_FIELDS.map((f) => bars[f][i]),
            )
        }
        // Pieces of uneven size, the later half first, then the earlier half, then a second series
        // over parts of both (it wins where it lands), with a delete between.
        for (let at = 140_000; at < ts.length; at += 50_000 + 777 * s)
          await put(piece(first, at, at + 50_000 + 777 * s))
        for (let at = 0; at < 140_000; at += 65_536) await put(piece(first, at, Math.min(at + 65_536, 140_000)))
        const cut = [ts[100_003], ts[190_017]]
        await w.deleteBars({ symbol, period: '1m', fromMs: cut[0], toMs: cut[1] })
        for (const t of rows.keys()) if (t >= cut[0] && t <= cut[1]) rows.delete(t)
        await put(piece(second, 95_000, 105_000))
        await put(piece(second, 270_000, 271_000))
        await put(piece(second, 3, 4))
      }
      await w.commit()
      await a.close()
      const b = SqliteMarketStore.open(join(dir, 'b.db'))
      await b.write({
        bars: symbols.map((symbol) => ({ symbol, period: '1m' as const, bars: barsOf(model.get(symbol)!) })),
      })
      await b.close()
      const dumpA = dumpStore(join(dir, 'a.db'), { withMeta: false })
      assert.ok(dumpA.includes('"60m"') && dumpA.includes('"5m"'), 'rollups were written')
      assert.ok(dumpA === dumpStore(join(dir, 'b.db'), { withMeta: false }), 'the stores differ')
    } finally {
      cleanup()
    }
  })
})
