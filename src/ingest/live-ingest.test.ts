// Group commit: quote pushes that arrive while a write runs go into the next write together, each
// answered with its own outcome and events; a group whose write fails is written push by push.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { barsOfRows, rowsOfBars } from '../domain/bars.js'
import type { PushedQuote } from '../live/live-feed.js'
import type { MarketStore, StoreWriter } from '../store/market-store.js'
import { SqliteMarketStore } from '../store/sqlite/sqlite-market-store.js'
import { tempDir } from '../../test/helpers/store-files.js'
import { LiveIngest } from './live-ingest.js'

const { dir, cleanup } = tempDir()
after(cleanup)

/** 2026-11-25 (a Wednesday) at 09:mm:ss in Shanghai. */
const at = (mm: number, ss: number) => Date.UTC(2026, 10, 25, 1, mm, ss)
const quote = (symbol: string, ts: number, price: number, volume: number, amount: number): PushedQuote => ({
  snapshot: { symbol, timestamp: ts, lastPrice: price, open: 10, high: 10.5, low: 10, prevClose: 9.9, volume, amount },
})

/** `store` with its writes counted, and a writer fault for the symbols in `failing` (a fault no real store gives on demand). */
function counted(store: MarketStore, failing = new Set<string>()) {
  const seen = { writes: 0 }
  const beginWrite = store.beginWrite.bind(store)
  store.beginWrite = async (): Promise<StoreWriter> => {
    seen.writes++
    const w = await beginWrite()
    return {
      ...w,
      putLive: async (writes) => {
        const bad = [...writes.latest.keys()].find((symbol) => failing.has(symbol))
        if (bad) throw new Error(`the store refused ${bad}`)
        return w.putLive(writes)
      },
    }
  }
  return seen
}

it('quote pushes made while a write runs are written together, each answered with its own outcome and events', async () => {
  const store = SqliteMarketStore.open(join(dir, 'group.db'))
  try {
    const seen = counted(store)
    const ingest = new LiveIngest(store)
    const p1 = quote('600000.SH', at(31, 5), 10, 100, 1000)
    const p2 = quote('600000.SH', at(31, 40), 10.5, 300, 3100)
    const p3 = quote('600004.SH', at(31, 20), 20, 50, 1000)
    const stale = quote('600000.SH', at(31, 30), 11, 200, 2100)
    const [a, b, c, d, e] = await Promise.all([
      ingest.writeQuotes([p1]),
      ingest.writeQuotes([p2]),
      ingest.writeQuotes([p3]),
      ingest.writeQuotes([stale]),
      ingest.writeQuotes([p3]),
    ])
    assert.equal(seen.writes, 1, 'five pushes made at once: one write')
    assert.deepEqual(
      [a, b, c, d, e].map((p) => p.outcome),
      [
        { rows: 1, accepted: 1, stale: 0, duplicate: 0 },
        { rows: 1, accepted: 1, stale: 0, duplicate: 0 },
        { rows: 1, accepted: 1, stale: 0, duplicate: 0 },
        { rows: 1, accepted: 0, stale: 1, duplicate: 0 },
        { rows: 1, accepted: 0, stale: 0, duplicate: 1 },
      ],
    )
    const quotesOf = (p: { events: readonly { kind: string; quote?: PushedQuote }[] }) =>
      p.events.filter((ev) => ev.kind === 'quote').map((ev) => ev.quote)
    assert.deepEqual([a, b, c, d, e].map(quotesOf), [[p1], [p2], [p3], [], []], "each push's own events")
    // 600000.SH's minute as its accepted pushes made it in push order: the first snapshot of the day
    // sets the day's figures so far, the second adds its trades (the stale one changed nothing).
    const bars = rowsOfBars(await store.readBars({ symbol: '600000.SH', period: '1m', limit: 10 }))
    assert.deepEqual(
      bars.map((b) => [b.timestamp, b.open, b.close, b.volume, b.amount]),
      [[at(31, 0), 10.5, 10.5, 200, 2100]],
    )
  } finally {
    await store.close()
  }
})

it('a group whose write fails is written push by push: only the push the store refuses fails, and nothing of it is kept', async () => {
  const store = SqliteMarketStore.open(join(dir, 'fail.db'))
  try {
    const seen = counted(store, new Set(['600001.SH']))
    const ingest = new LiveIngest(store)
    const ok1 = [quote('600000.SH', at(32, 5), 10, 100, 1000), quote('600000.SH', at(32, 30), 10.2, 250, 2530)]
    const refused = quote('600001.SH', at(32, 6), 30, 10, 300)
    const ok2 = quote('600004.SH', at(32, 7), 20, 50, 1000)
    const settled = await Promise.allSettled([
      ingest.writeQuotes(ok1),
      ingest.writeQuotes([refused]),
      ingest.writeQuotes([ok2]),
    ])
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    )
    assert.match(String((settled[1] as PromiseRejectedResult).reason), /refused 600001\.SH/)
    assert.equal(seen.writes, 4, 'the group, then each push alone')
    const live = await store.readLiveQuotes(['600000.SH', '600001.SH', '600004.SH'])
    assert.deepEqual([...live.keys()].sort(), ['600000.SH', '600004.SH'])
    assert.equal((await store.readBars({ symbol: '600001.SH', period: '1m', limit: 10 })).timestamp.length, 0)
    // 600000.SH's builder moved on once, by its own push: its minute holds that push alone.
    const bars = rowsOfBars(await store.readBars({ symbol: '600000.SH', period: '1m', limit: 10 }))
    assert.deepEqual(
      bars.map((b) => [b.timestamp, b.close, b.volume, b.amount]),
      [[at(32, 0), 10.2, 150, 1530]],
    )
  } finally {
    await store.close()
  }
})

it('a bars push closes the group before it: a quote push made after it is written after it, and its minute stands', async () => {
  const store = SqliteMarketStore.open(join(dir, 'order.db'))
  try {
    const seen = counted(store)
    const ingest = new LiveIngest(store)
    const minute = at(33, 0)
    const pushedBar = {
      timestamp: minute,
      open: 99,
      high: 99,
      low: 99,
      close: 99,
      volume: 5,
      amount: 495,
      prevClose: NaN,
    }
    await Promise.all([
      ingest.writeQuotes([quote('600000.SH', at(33, 5), 10, 100, 1000)]),
      ingest.writeBars([{ symbol: '600000.SH', period: '1m', bars: barsOfRows([pushedBar]) }]),
      ingest.writeQuotes([quote('600000.SH', at(33, 40), 10.5, 300, 3100)]),
    ])
    assert.equal(seen.writes, 3, 'the first quote push, the bars, then the later quote push')
    const bars = rowsOfBars(await store.readBars({ symbol: '600000.SH', period: '1m', limit: 10 }))
    assert.deepEqual(
      bars.map((b) => [b.timestamp, b.close, b.volume]),
      [[minute, 10.5, 200]],
      'the later push wins the minute',
    )
  } finally {
    await store.close()
  }
})

/** Four pushers, each sending its next push a little after its answer: `rounds` pushes each, `lastRounds` of the last one. */
async function fourPushers(ingest: LiveIngest, rounds: number, lastRounds = rounds) {
  const symbols = ['600000.SH', '600001.SH', '600002.SH', '600003.SH']
  const outcomes = await Promise.all(
    symbols.map(async (symbol, k) => {
      const answered = []
      for (let round = 0; round < (k === 3 ? lastRounds : rounds); round++) {
        const p = quote(symbol, at(31, round * 5 + k), 10 + round, 100 * (round + 1), 1000 * (round + 1))
        answered.push((await ingest.writeQuotes([p])).outcome.accepted)
        await new Promise((resolve) => setTimeout(resolve, 1)) // the next push comes a little after the answer
      }
      return answered
    }),
  )
  return { symbols, outcomes }
}

/** `test` against a LiveIngest with `gatherMs` on a fresh store, its writes counted; the store closed after. */
async function withGather(
  file: string,
  gatherMs: number,
  test: (ingest: LiveIngest, store: SqliteMarketStore, seen: { writes: number }) => Promise<void>,
): Promise<void> {
  const store = SqliteMarketStore.open(join(dir, file))
  try {
    const seen = counted(store)
    await test(new LiveIngest(store, { gatherMs }), store, seen)
  } finally {
    await store.close()
  }
}

it(
  'a group waits for the pushers the write before answered (gatherMs): four pushers keep writing four pushes at a time',
  { timeout: 60_000 },
  // A group that waited for its timer rather than its pushers would hold the test past its timeout.
  () =>
    withGather('gather.db', 3_600_000, async (ingest, store, seen) => {
      const { symbols, outcomes } = await fourPushers(ingest, 5)
      assert.deepEqual(
        outcomes,
        symbols.map(() => [1, 1, 1, 1, 1]),
      )
      assert.equal(seen.writes, 5, 'five rounds of four pushes: five writes')
      const live = await store.readLiveQuotes(symbols)
      assert.deepEqual(
        symbols.map((s) => live.get(s)?.state.last.lastPrice),
        symbols.map(() => 14),
      )
    }),
)

it('a pusher that stops: the groups after it are written without it, every push stored, none lost', () =>
  withGather('gather-stop.db', 20, async (ingest, store) => {
    const { symbols, outcomes } = await fourPushers(ingest, 5, 1)
    assert.deepEqual(outcomes, [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1]])
    const live = await store.readLiveQuotes(symbols)
    assert.deepEqual(
      symbols.map((s) => live.get(s)?.state.last.lastPrice),
      [14, 14, 14, 10],
    )
  }))

it(
  'a bars push made while a group is gathered ends the wait: the group is written, then the bars',
  { timeout: 60_000 },
  // A gather the bars push did not end would hold the test past its timeout.
  () =>
    withGather('gather-bars.db', 3_600_000, async (ingest, _store, seen) => {
      await fourPushers(ingest, 1) // four at once: the next group waits for four
      const quoted = ingest.writeQuotes([quote('600000.SH', at(32, 5), 11, 600, 6600)])
      await new Promise((resolve) => setTimeout(resolve, 1)) // the lone push's group is being gathered
      const bar = {
        timestamp: at(40, 0),
        open: 12,
        high: 12,
        low: 12,
        close: 12,
        volume: 5,
        amount: 60,
        prevClose: NaN,
      }
      const [pushed] = await Promise.all([
        quoted,
        ingest.writeBars([{ symbol: '600001.SH', period: '1m', bars: barsOfRows([bar]) }]),
      ])
      assert.equal(pushed.outcome.accepted, 1)
      assert.equal(seen.writes, 3, 'the four, the lone push, then the bars')
    }),
)
