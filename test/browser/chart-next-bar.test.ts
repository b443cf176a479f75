// The chart page's live bar logic (nextBar in web/live.js, a pure function, run here as the page runs
// it) against the server's own bars for the same quotes: a day of snapshots made from known 1m bars
// (the opening auction, the lunch break's print, the close, half days) with idle quotes in the gaps,
// a trade in the lunch break and trades after hours goes through the ingest's builder, and, as the
// stream sends each accepted one, through nextBar. After every quote the page holds exactly the
// server's bars of its period: 1m as built, 5m..60m as the server aggregates them.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import vm from 'node:vm'
import fc from 'fast-check'
import { aggregate } from '../../src/domain/aggregate.js'
import { barCount, barsOfRows, rowsOfBars, type BarRow, type Bars } from '../../src/domain/bars.js'
import { dayCloseMinute } from '../../src/domain/early-close.js'
import { MARKETS, type Exchange, type Market } from '../../src/domain/market.js'
import { applySnapshot, type QuoteSnapshot, type SymbolState } from '../../src/domain/minute-bars.js'
import { snapshotsOfDay } from '../../src/domain/quote-snapshots.js'
import { daysFromCivil, isoWeekday, MINUTE_MS } from '../../src/domain/time-zone.js'
import { snapshotsOf } from '../../src/live/feed-snapshots.js'
import { arbSeed, sessionMinutes, walkBars } from '../helpers/arbitraries.js'
import { repoRoot } from '../helpers/shared-data.js'

/** A bar as the page keeps it. */
interface PageBar {
  t: number
  o: number
  h: number
  l: number
  c: number
  v: number
}
type Quote = Record<string, unknown> & { timestamp: number }
type NextBar = (
  period: string,
  last: PageBar,
  q: Quote,
  prev: Quote | null,
  local: (ms: number) => number,
) => PageBar | 'reload' | null

/** nextBar as the page has it: web/live.js run in a context of its own with a `window` to register on. */
function pageNextBar(): NextBar {
  const window: { mdqLive?: { nextBar: NextBar } } = {}
  vm.runInNewContext(readFileSync(join(repoRoot(), 'web', 'live.js'), 'utf8'), { window })
  const nextBar = window.mdqLive!.nextBar
  // A copy made here: objects of the script's context have another Object prototype.
  return (...args) => {
    const bar = nextBar(...args)
    return bar === null || bar === 'reload' ? bar : { ...bar }
  }
}
const nextBar = pageNextBar()

const SYMBOL: Partial<Record<Exchange, string>> = { SH: '600000.SH', HK: '00700.HK', US: 'AAPL.US' }
const MINUTE_PERIODS = ['1m', '5m', '10m', '15m', '30m', '60m'] as const

const pageBars = (bars: Bars): PageBar[] =>
  rowsOfBars(bars).map((r) => ({ t: r.timestamp, o: r.open, h: r.high, l: r.low, c: r.close, v: r.volume }))

/** A day of 1m bars on the session minutes before the day's close, some left out (no trade, no bar). */
function dayBars(exchange: Exchange, day: number, seed: readonly number[], holes: ReadonlySet<number>): Bars {
  const market = MARKETS[exchange]
  const close = dayCloseMinute(market, day)
  const minutes = sessionMinutes(exchange, [market.zone.midnightUtc(day)]).filter(
    (t, i) => market.zone.localMinute(t) < close && !holes.has(i),
  )
  const bars = walkBars(minutes, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 4 + Math.floor((seed[(i * 7) % seed.length] ?? 0.5) * 10_000)
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  return bars
}

/**
 * The snapshots a feed sends that day: those the bars make, plus an idle quote (nothing traded) in
 * every gap of over ten minutes, `traded` more shares at the last price in the middle of the longest
 * gap (the lunch break where there is one), and two trades after hours.
 */
function feedOf(symbol: string, bars: Bars, market: Market, prevClose: number, perMinute: number): QuoteSnapshot[] {
  const made = snapshotsOfDay(symbol, bars, market, prevClose, perMinute)
  const out: QuoteSnapshot[] = []
  let longest = 0
  for (let i = 1; i < made.length; i++)
    if (made[i].timestamp - made[i - 1].timestamp > made[longest + 1].timestamp - made[longest].timestamp)
      longest = i - 1
  let extra = 0 // shares traded by the added quotes so far: every later snapshot's cumulative volume holds them
  const shifted = (q: QuoteSnapshot) => ({ ...q, volume: q.volume + extra, amount: q.amount + extra })
  made.forEach((q, i) => {
    out.push(shifted(q))
    const next = made[i + 1]
    if (next === undefined) return
    const mid = Math.floor((q.timestamp + next.timestamp) / 2)
    if (i === longest && q.volume > 0) {
      extra += 100
      out.push({ ...shifted(q), timestamp: mid })
    } else if (next.timestamp - q.timestamp > 10 * MINUTE_MS) out.push({ ...shifted(q), timestamp: mid })
  })
  const last = out[out.length - 1]
  for (const k of [1, 2])
    out.push({
      ...last,
      timestamp: last.timestamp + (market.closeAuctionMinutes + 5 * k) * MINUTE_MS,
      volume: last.volume + 50 * k,
      amount: last.amount + 50 * k,
    })
  return out
}

/** A stored 1m bar of the weekday before: what the page shows before the day's first quote. */
function barOfDayBefore(exchange: Exchange, day: number): BarRow {
  let before = day - 1
  while (isoWeekday(before) >= 5) before--
  const t = sessionMinutes(exchange, [MARKETS[exchange].zone.midnightUtc(before)]).at(-1)!
  return { timestamp: t, open: 10, high: 10.5, low: 9.5, close: 10, volume: 500, amount: 5000, prevClose: 10 }
}

const US_HALF_DAYS = [daysFromCivil(2024, 7, 3), daysFromCivil(2024, 11, 29), daysFromCivil(2024, 12, 24)]
const HK_HALF_DAYS = [daysFromCivil(2024, 2, 9), daysFromCivil(2024, 12, 24), daysFromCivil(2024, 12, 31)]

describe("chart page: the live candle of minute periods is the server's bar", () => {
  it('holds the bars the server builds and aggregates after every quote of a day, loaded at any point of it', () => {
    const arbCase = fc.record({
      exchange: fc.constantFrom<Exchange>('SH', 'HK', 'US'),
      day: fc.oneof(
        fc.integer({ min: 19_000, max: 20_500 }).filter((d) => isoWeekday(d) < 5),
        fc.constantFrom(...US_HALF_DAYS, ...HK_HALF_DAYS),
      ),
      period: fc.constantFrom(...MINUTE_PERIODS),
      seed: arbSeed,
      holes: fc.array(fc.nat({ max: 400 }), { maxLength: 60 }),
      perMinute: fc.integer({ min: 1, max: 4 }),
      prevClose: fc.integer({ min: 100, max: 100_000 }).map((c) => c / 100),
      /** Where in the day the page loads (a fraction of the quotes seen by then). */
      loadAt: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    fc.assert(
      fc.property(arbCase, (c) => {
        const market = MARKETS[c.exchange]
        const symbol = SYMBOL[c.exchange]!
        const bars = dayBars(c.exchange, c.day, c.seed, new Set(c.holes))
        if (barCount(bars) === 0) return
        const feed = feedOf(symbol, bars, market, c.prevClose, c.perMinute)
        // The server: the builder's state and its 1m bars, from the day before's on.
        let state: SymbolState | undefined
        const minutes = new Map<number, BarRow>()
        const first = barOfDayBefore(c.exchange, c.day)
        minutes.set(first.timestamp, first)
        let answer: PageBar[] | undefined // what /v1/klines answers, until the bars change
        const stored = () => {
          if (answer) return answer
          const built = barsOfRows([...minutes.values()].sort((a, b) => a.timestamp - b.timestamp))
          return (answer = pageBars(c.period === '1m' ? built : aggregate(built, c.period, market)))
        }
        const accept = (q: QuoteSnapshot): Quote | undefined => {
          const r = applySnapshot(state, q, market)
          state = r.state
          for (const bar of [r.closed, r.minute]) if (bar) minutes.set(bar.timestamp, bar)
          if (r.closed || r.minute) answer = undefined
          if (r.outcome !== 'accepted') return undefined
          // As the stream sends it (its session as of its own time).
          const [sent] = snapshotsOf([{ kind: 'quote', quote: { snapshot: q }, name: null }])
          return JSON.parse(sent.json) as Quote
        }
        // The page: loaded after `load` quotes, then given the latest one (a subscribe answers it) and every later one.
        const load = Math.floor(c.loadAt * feed.length)
        const sent = feed.slice(0, load).map(accept)
        let page = stored()
        let prev: Quote | null = null
        const local = (ms: number) => Math.floor((ms + market.zone.offsetMs(ms)) / 1000)
        const show = (q: Quote) => {
          const bar = nextBar(c.period, page[page.length - 1], q, prev, local)
          prev = q
          if (bar === 'reload') {
            // As the page re-reads them: the latest two bars from /v1/klines.
            const tail = stored().slice(-2)
            page = [...page.filter((b) => b.t < tail[0].t), ...tail]
          } else if (bar !== null) page = [...page.filter((b) => b.t !== bar.t), bar]
        }
        if (load > 0) show(sent[load - 1]!)
        for (let i = load; i < feed.length; i++) {
          const q = accept(feed[i])
          assert.ok(q, `quote ${i} accepted`)
          show(q)
          // The latest bars after each quote (where a quote changes them), all of them at the end.
          const at = `after quote ${i} at ${market.zone.isoDate(q.timestamp)} ${q.timestamp}`
          assert.deepEqual(page.slice(-3), stored().slice(-3), at)
        }
        assert.deepEqual(page, stored())
      }),
      { numRuns: 100 },
    )
  })
})
