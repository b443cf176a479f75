// One klines answer reads one data version: an import committing between the reads of one answer
// (bars, then the bar before them for prev_close) makes the use case read again, never mix.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { allocBars, rowsOfBars, type Bars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import type { BarQuery, MarketStore } from '../../src/store/market-store.js'
import { tradingDays } from '../helpers/arbitraries.js'
import { tempDir } from '../helpers/store-files.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** 40 daily bars of 600000.SH, every price `price`, prev_close left to the reader to fill. */
function flatBars(price: number): Bars {
  const days = tradingDays('SH', 19000, 40)
  const bars = allocBars(days.length)
  days.forEach((t, i) => {
    bars.timestamp[i] = t
    bars.open[i] = bars.high[i] = bars.low[i] = bars.close[i] = price
    bars.volume[i] = 100
    bars.amount[i] = price * 100
    bars.prevClose[i] = NaN
  })
  return bars
}

/** The store as the use case sees it, where another connection commits `commit` right after the `nth` readBars. */
function committingAfterRead(
  store: SqliteMarketStore,
  nth: number,
  commit: () => Promise<void>,
): MarketStore & { reads: BarQuery[] } {
  const reads: BarQuery[] = []
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'reads') return reads
      if (prop === 'readBars')
        return async (q: BarQuery) => {
          const bars = await target.readBars(q)
          reads.push(q)
          if (reads.length === nth) await commit()
          return bars
        }
      const value = Reflect.get(target, prop, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as unknown as MarketStore & { reads: BarQuery[] }
}

describe('klines read one data version', () => {
  it('an import committed between the bars read and the prev_close read is not mixed into the answer', async () => {
    const path = join(dir, 'snapshot.db')
    const store = SqliteMarketStore.open(path)
    const writer = SqliteMarketStore.open(path) // its commits come from another connection, as an import's do
    try {
      await store.write({
        instruments: [bareInstrument('600000.SH')],
        bars: [{ symbol: '600000.SH', period: '1d', bars: flatBars(10) }],
      })
      const days = tradingDays('SH', 19000, 40)
      // The range starts at the first bar asked, so the bar before it (for prev_close) is a read of its own.
      const q = { symbol: '600000.SH', period: '1d', count: 5, startTime: days[35], adjust: 'none' } as const
      const racing = committingAfterRead(store, 1, () =>
        writer.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: flatBars(20) }] }),
      )
      const answer = await readKlines(racing, new SymbolContexts(racing), q)
      assert.ok(racing.reads.length >= 3, `the use case read again after the commit (${racing.reads.length} reads)`)
      const quiet = await readKlines(store, new SymbolContexts(store), q)
      assert.deepEqual(rowsOfBars(answer), rowsOfBars(quiet))
      assert.deepEqual(Array.from(answer.prevClose), [20, 20, 20, 20, 20], 'prev_close of the same version as the bars')
      assert.deepEqual(Array.from(answer.timestamp), days.slice(35), 'the latest 5 bars of the range')
    } finally {
      await writer.close()
      await store.close()
    }
  })

  it('imports committing during every read give a 503 STORE_UNAVAILABLE after 5 tries, never a mixed answer', async () => {
    const path = join(dir, 'busy.db')
    const store = SqliteMarketStore.open(path)
    const writer = SqliteMarketStore.open(path)
    try {
      await store.write({
        instruments: [bareInstrument('600000.SH')],
        bars: [{ symbol: '600000.SH', period: '1d', bars: flatBars(10) }],
      })
      let price = 10
      const busy = new Proxy(store, {
        get(target, prop) {
          if (prop === 'readBars')
            return async (q: BarQuery) => {
              const bars = await target.readBars(q)
              await writer.write({ bars: [{ symbol: '600000.SH', period: '1d', bars: flatBars(++price) }] })
              return bars
            }
          const value = Reflect.get(target, prop, target) as unknown
          return typeof value === 'function' ? value.bind(target) : value
        },
      }) as unknown as MarketStore
      await assert.rejects(
        readKlines(busy, new SymbolContexts(busy), { symbol: '600000.SH', period: '1d', count: 5, adjust: 'none' }),
        { code: 'STORE_UNAVAILABLE' },
      )
    } finally {
      await writer.close()
      await store.close()
    }
  })
})
