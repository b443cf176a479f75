import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { arbSeed, sessionMinutes, walkBars } from '../../test/helpers/arbitraries.js'
import { barCount, rowsOfBars, type BarRow, type Bars } from './bars.js'
import { dayCloseMinute } from './early-close.js'
import { MARKETS, type Exchange, type Market } from './market.js'
import { applySnapshot, barMinuteOf, type QuoteSnapshot, type SymbolState } from './minute-bars.js'
import { snapshotsOfDay } from './quote-snapshots.js'
import { daysFromCivil, isoWeekday } from './time-zone.js'

const SYMBOL: Record<Exchange, string> = {
  SH: '600000.SH',
  SZ: '000001.SZ',
  BJ: '430047.BJ',
  HK: '00700.HK',
  US: 'AAPL.US',
}

/** Feeds snapshots through the builder: the last version of every minute bar, the last day bar, the outcome counts. */
function build(snapshots: readonly QuoteSnapshot[], market: Market, state?: SymbolState) {
  const minutes = new Map<number, BarRow>()
  let day: BarRow | undefined
  const counts = { accepted: 0, stale: 0, duplicate: 0 }
  for (const q of snapshots) {
    const r = applySnapshot(state, q, market)
    counts[r.outcome]++
    state = r.state
    if (r.minute) minutes.set(r.minute.timestamp, r.minute)
    if (r.day) day = r.day
  }
  return { minutes: [...minutes.values()].sort((a, b) => a.timestamp - b.timestamp), day, counts, state }
}

/** The expected 1m bars: as given, with prev_close NaN (the builder leaves it to be filled on read, as for imports). */
const expectedRows = (bars: Bars): BarRow[] => rowsOfBars(bars).map((r) => ({ ...r, prevClose: NaN }))

/** The close of a day as the exchanges published it (the test's own table, apart from the code's rules). */
function publishedClose(exchange: Exchange, day: number): number {
  if (exchange === 'US') return US_HALF_DAYS.includes(day) ? 13 * 60 : 16 * 60
  if (exchange === 'HK') return HK_HALF_DAYS.includes(day) ? 12 * 60 : 16 * 60
  return 15 * 60
}

/** Bars on some of a day's session minutes (before its close: a half day ends early), each traded enough for its prices. */
function dayBars(exchange: Exchange, day: number, seed: readonly number[], keep: (i: number) => boolean): Bars {
  const zone = MARKETS[exchange].zone
  const close = publishedClose(exchange, day)
  const minutes = sessionMinutes(exchange, [zone.midnightUtc(day)]).filter(
    (t, i) => zone.localMinute(t) < close && keep(i),
  )
  const bars = walkBars(minutes, seed)
  for (let i = 0; i < barCount(bars); i++) {
    bars.volume[i] = 4 + Math.floor((seed[(i * 7) % seed.length] ?? 0.5) * 10_000)
    bars.amount[i] = Math.round(bars.volume[i] * bars.close[i] * 100) / 100
  }
  return bars
}

const weekday = (d: number) => {
  while (isoWeekday(d) >= 5) d++
  return d
}
/** US days around both DST switches and its three half-day rules; HK's three half days; ordinary days. */
const US_HALF_DAYS = [daysFromCivil(2024, 7, 3), daysFromCivil(2024, 11, 29), daysFromCivil(2024, 12, 24)]
const HK_HALF_DAYS = [daysFromCivil(2024, 2, 9), daysFromCivil(2024, 12, 24), daysFromCivil(2024, 12, 31)]

describe('minute bars from quote snapshots', () => {
  it('knows the half days: US 13:00 and HK 12:00 closes on the days their rules name, none on ordinary days', () => {
    for (const d of US_HALF_DAYS) assert.equal(dayCloseMinute(MARKETS.US, d), 13 * 60)
    for (const d of HK_HALF_DAYS) assert.equal(dayCloseMinute(MARKETS.HK, d), 12 * 60)
    // July 3 on a Friday is the observed holiday, not a half day; an ordinary Tuesday; a CN day.
    assert.equal(dayCloseMinute(MARKETS.US, daysFromCivil(2026, 7, 3)), 16 * 60)
    assert.equal(dayCloseMinute(MARKETS.US, daysFromCivil(2024, 7, 9)), 16 * 60)
    assert.equal(dayCloseMinute(MARKETS.HK, daysFromCivil(2024, 2, 8)), 16 * 60)
    assert.equal(dayCloseMinute(MARKETS.SH, daysFromCivil(2024, 12, 24)), 15 * 60)
  })

  it('puts each print in its minute: the opening auction in the first, the lunch break and the close in the session before', () => {
    const sh = MARKETS.SH
    const t = (h: number, m: number, s = 0) => sh.zone.utcOf(2024, 3, 5, h * 60 + m) + s * 1000
    assert.equal(barMinuteOf(t(9, 10), sh), undefined)
    assert.equal(barMinuteOf(t(9, 25, 3), sh), t(9, 30))
    assert.equal(barMinuteOf(t(9, 30, 59), sh), t(9, 30))
    assert.equal(barMinuteOf(t(11, 29, 30), sh), t(11, 29))
    assert.equal(barMinuteOf(t(11, 30, 2), sh), t(11, 29))
    assert.equal(barMinuteOf(t(12, 40), sh), t(11, 29))
    assert.equal(barMinuteOf(t(13, 0, 1), sh), t(13, 0))
    assert.equal(barMinuteOf(t(15, 0, 3), sh), t(14, 59))
    assert.equal(barMinuteOf(t(15, 6), sh), undefined)
    const us = MARKETS.US
    const u = (h: number, m: number, s = 0) => us.zone.utcOf(2024, 11, 29, h * 60 + m) + s * 1000
    assert.equal(barMinuteOf(u(9, 29, 50), us), undefined)
    assert.equal(barMinuteOf(u(12, 59, 59), us), u(12, 59))
    assert.equal(barMinuteOf(u(13, 0, 2), us), u(12, 59))
    assert.equal(barMinuteOf(u(13, 5), us), undefined)
  })

  it('rebuilds exactly the bars the snapshots were made from (CN, HK, US; lunch, auctions, DST, half days; several a minute)', () => {
    const arbCase = fc.record({
      exchange: fc.constantFrom<Exchange>('SH', 'SZ', 'HK', 'US'),
      // Ordinary days (the half days among them, by the rules' own answer, left to the table below), and the table's days.
      day: fc.oneof(
        fc.integer({ min: 17_000, max: 20_500 }).map(weekday),
        fc.constantFrom(...US_HALF_DAYS, ...HK_HALF_DAYS, daysFromCivil(2024, 3, 11), daysFromCivil(2024, 11, 4)),
      ),
      seed: arbSeed,
      holes: fc.array(fc.nat({ max: 400 }), { maxLength: 80 }),
      perMinute: fc.integer({ min: 1, max: 6 }),
      prevClose: fc.integer({ min: 1, max: 100_000 }).map((c) => c / 100),
    })
    fc.assert(
      fc.property(arbCase, (c) => {
        const market = MARKETS[c.exchange]
        const tabled = US_HALF_DAYS.includes(c.day) || HK_HALF_DAYS.includes(c.day)
        if (!tabled && dayCloseMinute(market, c.day) !== market.sessions[market.sessions.length - 1].close) return
        const holes = new Set(c.holes)
        const bars = dayBars(c.exchange, c.day, c.seed, (i) => !holes.has(i))
        if (barCount(bars) === 0) return
        const close = publishedClose(c.exchange, c.day)
        const snapshots = snapshotsOfDay(SYMBOL[c.exchange], bars, market, c.prevClose, c.perMinute, close)
        for (let i = 1; i < snapshots.length; i++) assert.ok(snapshots[i].timestamp > snapshots[i - 1].timestamp)
        const built = build(snapshots, market)
        assert.deepEqual(built.minutes, expectedRows(bars))
        assert.deepEqual(built.counts, { accepted: snapshots.length, stale: 0, duplicate: 0 })
        const n = barCount(bars)
        assert.deepEqual(built.day, {
          timestamp: market.zone.midnightUtc(c.day),
          open: bars.open[0],
          high: Math.max(...bars.high),
          low: Math.min(...bars.low),
          close: bars.close[n - 1],
          volume: bars.volume.reduce((a, v) => a + v, 0),
          amount: Number(rowsOfBars(bars).reduce((a, r) => a + BigInt(Math.round(r.amount * 100)), 0n)) / 100,
          prevClose: c.prevClose,
        })
      }),
      { numRuns: 150 },
    )
  })

  it('ignores the same snapshot twice and any snapshot older than the latest, and counts them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Exchange>('SH', 'HK', 'US'),
        arbSeed,
        fc.array(fc.record({ at: fc.nat(), back: fc.nat({ max: 30 }), copy: fc.boolean() }), { maxLength: 40 }),
        (exchange, seed, noise) => {
          const market = MARKETS[exchange]
          const bars = dayBars(exchange, weekday(19_700), seed, (i) => i % 3 !== 1)
          const clean = snapshotsOfDay(SYMBOL[exchange], bars, market, 10, 3)
          // Each noise entry re-sends, after snapshot `at`, the snapshot `back` places before it: `back` 0 is a duplicate.
          const noisy: QuoteSnapshot[] = []
          const inserts = new Map<number, { back: number; copy: boolean }[]>()
          for (const x of noise) inserts.set(x.at % clean.length, [...(inserts.get(x.at % clean.length) ?? []), x])
          let expected = { duplicate: 0, stale: 0 }
          clean.forEach((q, i) => {
            noisy.push(q)
            for (const x of inserts.get(i) ?? []) {
              const old = clean[Math.max(0, i - x.back)]
              // Not a copy: the same time with other figures, which is no duplicate either.
              noisy.push(x.copy ? old : { ...old, lastPrice: old.lastPrice + 0.01 })
              const duplicate = x.copy && old === q
              expected = {
                duplicate: expected.duplicate + (duplicate ? 1 : 0),
                stale: expected.stale + (duplicate ? 0 : 1),
              }
            }
          })
          const built = build(noisy, market)
          assert.deepEqual(built.minutes, build(clean, market).minutes)
          assert.deepEqual(built.counts, { accepted: clean.length, ...expected })
        },
      ),
      { numRuns: 100 },
    )
  })

  it('continues from a state kept at any snapshot as if never stopped (a restart rebuilds the forming minute)', () => {
    const market = MARKETS.SH
    const bars = dayBars('SH', weekday(19_800), [0.3, 0.7, 0.1, 0.9], () => true)
    const snapshots = snapshotsOfDay('600000.SH', bars, market, 9.5, 4)
    const whole = build(snapshots, market)
    for (const cut of [1, 2, 7, 100, 501, snapshots.length - 1]) {
      const first = build(snapshots.slice(0, cut), market)
      // Through JSON, as a store keeps it: plain numbers and flags.
      const kept = JSON.parse(JSON.stringify(first.state)) as SymbolState
      const second = build(snapshots.slice(cut), market, kept)
      const merged = new Map([...first.minutes, ...second.minutes].map((r) => [r.timestamp, r]))
      assert.deepEqual(
        [...merged.values()].map((r) => ({ ...r, prevClose: NaN })),
        whole.minutes,
        `cut at ${cut}`,
      )
    }
  })

  it("opens the day's first bar with the day's figures when its first snapshot is in the first minute; later ones only set the base", () => {
    const market = MARKETS.SH
    const t = (h: number, m: number, s = 0) => market.zone.utcOf(2024, 3, 5, h * 60 + m) + s * 1000
    const q = (ts: number, last: number, volume: number, amount: number): QuoteSnapshot => ({
      symbol: '600000.SH',
      timestamp: ts,
      lastPrice: last,
      open: 10,
      high: 10.5,
      low: 9.8,
      prevClose: 9.9,
      volume,
      amount,
    })
    const first = applySnapshot(undefined, q(t(9, 30, 40), 10.2, 500, 5100.5), market)
    assert.deepEqual(first.minute, {
      timestamp: t(9, 30),
      open: 10,
      high: 10.5,
      low: 9.8,
      close: 10.2,
      volume: 500,
      amount: 5100.5,
      prevClose: NaN,
    })
    // Joining at 10:00: the trades before are in no minute; the next snapshot's are its minute's.
    const joined = applySnapshot(undefined, q(t(10, 0, 20), 10.2, 500, 5100.5), market)
    assert.equal(joined.minute, undefined)
    assert.equal(joined.day?.volume, 500)
    const next = applySnapshot(joined.state, q(t(10, 0, 50), 10.3, 520, 5306.52), market)
    assert.deepEqual(next.minute, {
      timestamp: t(10, 0),
      open: 10.3,
      high: 10.3,
      low: 10.3,
      close: 10.3,
      volume: 20,
      amount: 206.02,
      prevClose: NaN,
    })
    // A new high of the day between two snapshots is the bar's high.
    const spike = applySnapshot(next.state, { ...q(t(10, 1, 10), 10.4, 530, 5410.52), high: 10.9 }, market)
    assert.equal(spike.minute?.high, 10.9)
    assert.equal(spike.closed?.timestamp, t(10, 0))
  })

  it("gives the day's first trades the day's open, high and low after untraded snapshots (the call auction's) too", () => {
    const market = MARKETS.SH
    const t = (h: number, m: number, s = 0) => market.zone.utcOf(2024, 3, 5, h * 60 + m) + s * 1000
    const untraded = (ts: number, last: number): QuoteSnapshot => ({
      symbol: '600000.SH',
      timestamp: ts,
      lastPrice: last,
      open: 0,
      high: 0,
      low: 0,
      prevClose: 9.9,
      volume: 0,
      amount: 0,
    })
    const traded = (ts: number): QuoteSnapshot => ({
      ...untraded(ts, 10.05),
      open: 10,
      high: 10.06,
      low: 9.97,
      volume: 150,
      amount: 1502.5,
    })
    const bar = (start: number) => ({
      timestamp: start,
      open: 10,
      high: 10.06,
      low: 9.97,
      close: 10.05,
      volume: 150,
      amount: 1502.5,
      prevClose: NaN,
    })
    const alone = applySnapshot(undefined, traded(t(9, 30, 3)), market)
    assert.deepEqual(alone.minute, bar(t(9, 30)))
    let state = applySnapshot(undefined, untraded(t(9, 15), 10), market).state
    state = applySnapshot(state, untraded(t(9, 20), 10.02), market).state
    const after = applySnapshot(state, traded(t(9, 30, 3)), market)
    assert.deepEqual(after.minute, alone.minute)
    assert.deepEqual(after.day, alone.day)
    // Seen later, after an untraded snapshot: the trades since it are its minute's, and the day's first.
    const late = applySnapshot(
      applySnapshot(undefined, untraded(t(9, 25), 10), market).state,
      traded(t(9, 45, 3)),
      market,
    )
    assert.deepEqual(late.minute, bar(t(9, 45)))
  })

  it('trades outside the windows (US pre-market and after hours) are in no minute bar, only in the day figures', () => {
    const market = MARKETS.US
    const t = (h: number, m: number, s = 0) => market.zone.utcOf(2024, 3, 5, h * 60 + m) + s * 1000
    const q = (ts: number, last: number, volume: number): QuoteSnapshot => ({
      symbol: 'AAPL.US',
      timestamp: ts,
      lastPrice: last,
      open: 100,
      high: 101,
      low: 99,
      prevClose: 100,
      volume,
      amount: volume * 100,
    })
    const seq = [
      q(t(8, 0), 100, 1000),
      q(t(9, 30, 5), 100.5, 1300),
      q(t(15, 59, 30), 100.2, 9000),
      q(t(17, 0), 99.9, 9500),
    ]
    const built = build(seq, market)
    assert.deepEqual(
      built.minutes.map((r) => [r.timestamp, r.volume]),
      [
        [t(9, 30), 300],
        [t(15, 59), 7700],
      ],
    )
    assert.equal(built.day?.volume, 9500)
  })
})
