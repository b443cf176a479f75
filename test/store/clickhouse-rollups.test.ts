// Stored rollups on a real two-shard ClickHouse cluster answer byte for byte what aggregating the 1m bars
// on read answers, and what SQLite answers after the same writes: 1m bars arriving in several imports
// (so a bucket's rollup is folded from the partials of several puts), the last ones a minute at a time
// as a live ingest appends them, a re-import over part of them, deletes and replaces; every derived
// minute period and adjust mode, windows cutting days and buckets.
import assert from 'node:assert/strict'
import { after, before, describe } from 'node:test'
import fc from 'fast-check'
import { ADJUSTS } from '../../src/domain/adjust.js'
import { BAR_FIELDS, barCount, sliceBars, type Bars } from '../../src/domain/bars.js'
import { bareInstrument } from '../../src/domain/instrument.js'
import { MARKETS, type Exchange } from '../../src/domain/market.js'
import { ROLLUP_PERIODS } from '../../src/domain/rollups.js'
import { readKlines } from '../../src/query/klines.js'
import { SymbolContexts } from '../../src/query/symbol-context.js'
import { ClickHouseStores, parseClickHouseUrl } from '../../src/store/clickhouse/clickhouse-stores.js'
import type { KeyStore } from '../../src/store/key-store.js'
import type { BarQuery, MarketStore, WriteBatch } from '../../src/store/market-store.js'
import { SqliteMarketStore } from '../../src/store/sqlite/sqlite-market-store.js'
import { aggregatingOnRead } from '../helpers/aggregating-on-read.js'
import { arbSeed, sessionMinutes, tradingDays, walkBars } from '../helpers/arbitraries.js'
import { ClickHouseCluster } from '../helpers/clickhouse.js'
import { clickhouseServer, requires } from '../helpers/requirements.js'

const need = requires(clickhouseServer())
const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

function assertBytesEqual(actual: Bars, expected: Bars, what: string): void {
  assert.equal(barCount(actual), barCount(expected), `${what}: bar count`)
  for (const f of BAR_FIELDS) assert.ok(bytes(actual[f]).equals(bytes(expected[f])), `${what}: ${f} differs`)
}

/** Counts the rollup reads, to show the stored rollups answered. */
function counting(store: MarketStore, seen: { rollups: number }): MarketStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'readBars')
        return (q: BarQuery) => {
          if (q.period !== '1m' && q.period !== '1d') seen.rollups++
          return target.readBars(q)
        }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

describe('clickhouse stored rollups on a two-shard cluster', () => {
  let cluster: ClickHouseCluster
  let ch: { market: MarketStore; keys: KeyStore }
  before(async () => {
    if (!need.met) return
    cluster = await ClickHouseCluster.start()
    ch = await ClickHouseStores.open(parseClickHouseUrl(cluster.storeUrl('rollups')))
  })
  after(async () => {
    await Promise.all([ch?.keys.close(), ch?.market.close()])
    await cluster?.destroy()
  })

  need.it(
    'minutes in several imports, appended a minute at a time, re-imported, deleted and replaced: the same answers as aggregating on read and as SQLite',
    async () => {
      let run = 0
      const arbCase = fc.record({
        exchange: fc.constantFrom<Exchange>('SH', 'HK', 'US'),
        firstDay: fc.integer({ min: 16_000, max: 20_000 }),
        days: fc.integer({ min: 1, max: 4 }),
        seed: arbSeed,
        nanPrevClose: fc.boolean(),
        withDaily: fc.boolean(),
        fractional: fc.boolean(),
        cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 2 }),
        appended: fc.integer({ min: 0, max: 6 }),
        // Appended as a live feed puts them (no rollups stored: those days are rolled up from 1m on read).
        live: fc.boolean(),
        // With live appends: the last minute put again with new values, as a feed's next write does.
        reput: fc.option(arbSeed),
        // Half the cases only append: unless live, their rollups are folded from partials, never rolled up from 1m bars.
        corrected: fc.boolean(),
        reimport: fc.option(
          fc.record({
            at: fc.double({ min: 0, max: 1, noNaN: true }),
            len: fc.integer({ min: 1, max: 200 }),
            seed: arbSeed,
          }),
        ),
        del: fc.option(
          fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), len: fc.integer({ min: 1, max: 300 }) }),
        ),
        replace: fc.option(
          fc.record({
            at: fc.double({ min: 0, max: 1, noNaN: true }),
            len: fc.integer({ min: 1, max: 200 }),
            seed: arbSeed,
          }),
        ),
        events: fc.array(fc.record({ day: fc.nat(), f: fc.double({ min: 0.2, max: 10, noNaN: true }) }), {
          maxLength: 2,
        }),
        queries: fc.array(
          fc.record({
            period: fc.constantFrom(...ROLLUP_PERIODS),
            adjust: fc.constantFrom(...ADJUSTS),
            count: fc.integer({ min: 1, max: 400 }),
            start: fc.option(fc.double({ min: -0.1, max: 1.1, noNaN: true })),
            end: fc.option(fc.double({ min: -0.1, max: 1.1, noNaN: true })),
          }),
          { minLength: 1, maxLength: 6 },
        ),
      })
      await fc.assert(
        fc.asyncProperty(arbCase, async (c) => {
          // A symbol of its own per run: the cluster's store keeps every earlier run's data.
          run++
          const symbol =
            c.exchange === 'US'
              ? `T${run}.US`
              : c.exchange === 'HK'
                ? `${String(run).padStart(5, '0')}.HK`
                : `${600000 + run}.SH`
          const market = MARKETS[c.exchange]
          const dayStarts = tradingDays(c.exchange, c.firstDay, c.days)
          const ts = sessionMinutes(c.exchange, dayStarts)
          const n = ts.length
          const minute = walkBars(ts, c.seed)
          if (c.nanPrevClose) minute.prevClose.fill(NaN)
          // Fractional volumes and amounts with many decimals: partials that must not be folded together.
          if (c.fractional)
            for (let i = 0; i < n; i += 7) {
              minute.volume[i] += 0.1
              minute.amount[i] += 1e-7
            }
          const localDays = dayStarts.map((t) => market.zone.localDay(t))
          const events = [...new Map(c.events.map((e) => [localDays[e.day % localDays.length], e.f]))]
            .map(([day, exFactor]) => ({ timestamp: market.zone.midnightUtc(day), exFactor }))
            .sort((a, b) => a.timestamp - b.timestamp)
          const daily = walkBars(dayStarts, c.seed)
          daily.prevClose.fill(NaN)
          // The writes: the bars in pieces (cut points, then the last `appended` minutes one import each).
          const tail = Math.max(0, n - c.appended)
          const cuts = [...new Set([0, ...c.cuts.map((x) => Math.floor(x * tail)), tail])].sort((a, b) => a - b)
          const batches: WriteBatch[] = [
            {
              instruments: [bareInstrument(symbol)],
              exFactors: [{ symbol, events }],
              ...(c.withDaily ? { bars: [{ symbol, period: '1d' as const, bars: daily }] } : {}),
            },
          ]
          for (let k = 1; k < cuts.length; k++)
            if (cuts[k] > cuts[k - 1])
              batches.push({ bars: [{ symbol, period: '1m', bars: sliceBars(minute, cuts[k - 1], cuts[k]) }] })
          for (let i = tail; i < n; i++)
            batches.push({ bars: [{ symbol, period: '1m', bars: sliceBars(minute, i, i + 1), live: c.live }] })
          if (c.live && c.reput && c.appended > 0 && n > 0)
            batches.push({ bars: [{ symbol, period: '1m', bars: walkBars(ts.slice(n - 1), c.reput), live: true }] })
          if (c.corrected && c.reimport && n) {
            const i = Math.min(n - 1, Math.floor(c.reimport.at * n))
            batches.push({
              bars: [{ symbol, period: '1m', bars: walkBars(ts.slice(i, i + c.reimport.len), c.reimport.seed) }],
            })
          }
          if (c.corrected && c.del && n) {
            const i = Math.min(n - 1, Math.floor(c.del.at * n))
            batches.push({
              deleteBars: [{ symbol, period: '1m', fromMs: ts[i], toMs: ts[Math.min(n - 1, i + c.del.len)] }],
            })
          }
          if (c.corrected && c.replace && n) {
            const i = Math.min(n - 1, Math.floor(c.replace.at * n))
            const part = ts.slice(i, i + c.replace.len)
            batches.push({
              deleteBars: [{ symbol, period: '1m', fromMs: part[0] - 30 * 60_000, toMs: part[part.length - 1] }],
              bars: [{ symbol, period: '1m', bars: walkBars(part, c.replace.seed) }],
            })
          }
          const sqlite = SqliteMarketStore.open(':memory:')
          try {
            for (const b of batches) {
              await ch.market.write(b)
              await sqlite.write(b)
            }
            const lo = n ? ts[0] : 0
            const span = n ? ts[n - 1] - ts[0] : 1
            const seen = { rollups: 0 }
            const viaRollups = counting(ch.market, seen)
            const onRead = aggregatingOnRead(ch.market)
            const [a, b, r] = [new SymbolContexts(viaRollups), new SymbolContexts(onRead), new SymbolContexts(sqlite)]
            for (const q of c.queries) {
              const query = {
                symbol,
                period: q.period,
                adjust: q.adjust,
                count: q.count,
                ...(q.start !== null ? { startTime: Math.round(lo + q.start * span) } : {}),
                ...(q.end !== null ? { endTime: Math.round(lo + q.end * span) } : {}),
              }
              const ours = await readKlines(viaRollups, a, query)
              assertBytesEqual(
                ours,
                await readKlines(onRead, b, query),
                `${JSON.stringify(query)} against aggregating on read`,
              )
              assertBytesEqual(ours, await readKlines(sqlite, r, query), `${JSON.stringify(query)} against SQLite`)
            }
            assert.ok(seen.rollups > 0, 'the stored rollups were read')
            // The raw rollups themselves (readKlines would aggregate 1m bars instead of using unfolded partials).
            for (const q of c.queries) {
              const range: BarQuery = {
                symbol,
                period: q.period,
                limit: q.count,
                ...(q.start !== null ? { fromMs: Math.round(lo + q.start * span) } : {}),
                ...(q.end !== null ? { toMs: Math.round(lo + q.end * span) } : {}),
              }
              assertBytesEqual(
                await ch.market.readBars(range),
                await sqlite.readBars(range),
                `raw ${JSON.stringify(range)}`,
              )
            }
          } finally {
            await sqlite.close()
          }
        }),
        { numRuns: 20 },
      )
    },
  )
})
