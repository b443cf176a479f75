import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MARK_EVERY } from './schema.js'
import { SeriesState } from './series-index.js'

const DAY = 86_400_000

/** A put of `bars` daily bars from day 0 on, with its marks as the writer makes them (every MARK_EVERY-th bar). */
function put(bars: number, day0 = 0) {
  const ts = (i: number) => (day0 + i) * DAY
  const marks: number[] = []
  for (let i = MARK_EVERY; i < bars; i += MARK_EVERY) marks.push(ts(i))
  return { first: ts(0), last: ts(bars - 1), bars, marks }
}

/** How many of the bars 0..total-1 (one a day) lie in [start, to]. */
const held = (start: number, to: number, total: number) =>
  Math.max(0, Math.min(Math.floor(to / DAY), total - 1) - Math.max(0, Math.ceil(start / DAY)) + 1)

describe('SeriesState.startFor (the range a read of the newest bars asks for)', () => {
  it('the newest N bars of a series: a range of N to N + MARK_EVERY bars, the last bar known by its count', () => {
    const total = 1000 // marks at 256, 512, 768; the last bar (999) is no mark
    const s = SeriesState.empty('1d').with(put(total), 1)
    for (const limit of [1, 100, 231, 232, 500, 999]) {
      const start = s.startFor((total - 1) * DAY, limit)!
      const n = held(start, (total - 1) * DAY, total)
      assert.ok(n >= limit && n <= limit + MARK_EVERY, `limit ${limit}: ${n} bars`)
    }
    // 100 newest: bars 900..999; the checkpoint at or before bar 900 is the mark of bar 768.
    assert.equal(s.startFor((total - 1) * DAY, 100), 768 * DAY)
    assert.equal(s.startFor((total - 1) * DAY, 1000), 0)
    assert.equal(s.startFor((total - 1) * DAY, 1001), -Infinity)
  })

  it('ending before the last bar: at least N, at most N + 2 x MARK_EVERY', () => {
    const total = 2000
    const s = SeriesState.empty('1d').with(put(total), 1)
    for (const end of [300, 1000, 1500, 1998])
      for (const limit of [1, 100, 600]) {
        const start = s.startFor(end * DAY, limit)!
        const n = held(start, end * DAY, total)
        assert.ok(n >= Math.min(limit, end + 1) && n <= limit + 2 * MARK_EVERY, `end ${end}, limit ${limit}: ${n}`)
      }
  })

  it('two puts one after the other: positions run on across them', () => {
    const s = SeriesState.empty('1d').with(put(300), 1).with(put(50, 1000), 2)
    // The newest 60: the 50 of the second put and the last 10 of the first (bars 290..299).
    const start = s.startFor(1049 * DAY, 60)!
    assert.ok(start <= 290 * DAY && start >= 256 * DAY, `start day ${start / DAY}`)
  })
})

describe('SeriesState.with (a series as puts arrive)', () => {
  it('live days (each minute put several times as it forms): one span with the right count, one overlap for the run of days', () => {
    const MIN = 60_000
    const history = put(1000) // 1000 daily-spaced bars, then minutes after the last
    let s = SeriesState.empty('1m').with(history, 1)
    const t0 = history.last + DAY
    let rev = 1
    for (let m = 0; m < 240; m++)
      for (let k = 0; k < 3; k++) s = s.with({ first: t0 + m * MIN, last: t0 + m * MIN, bars: 1, marks: [] }, ++rev)
    assert.equal(s.spans.length, 1, 'the day joined to the history (within the join gap)')
    assert.equal(s.spans[0].bars, 1000 + 240)
    assert.equal(s.last, t0 + 239 * MIN)
    assert.deepEqual(
      s.overlaps,
      [[t0, t0 + 239 * MIN]],
      'each minute has rows of several puts: read as the newest per timestamp',
    )
    assert.ok(!s.overlapsIn(history.first, history.last), 'the history before stays read as single rows')
    assert.equal(s.rev, rev)
    // The next trading day (over a weekend): the same range goes on.
    const t1 = t0 + 3 * DAY
    for (let m = 0; m < 240; m++)
      for (let k = 0; k < 2; k++) s = s.with({ first: t1 + m * MIN, last: t1 + m * MIN, bars: 1, marks: [] }, ++rev)
    assert.deepEqual(s.overlaps, [[t0, t1 + 239 * MIN]])
    assert.equal(s.spans[0].bars, 1000 + 480)
  })

  it('live puts that stored no rollups: read as overlapping over their whole range, a run of minutes one range, even where no two puts meet', () => {
    const MIN = 60_000
    const history = put(1000)
    let s = SeriesState.empty('1m').with(history, 1)
    const t0 = history.last + DAY
    // A symbol whose snapshots all came in one push: its morning in one live put, met by no other.
    s = s.with({ first: t0, last: t0 + 119 * MIN, bars: 120, marks: [], rollups: false }, 2)
    assert.deepEqual(s.overlaps, [[t0, t0 + 119 * MIN]])
    assert.ok(!s.overlapsIn(history.first, history.last), 'the history keeps its stored rollups')
    // Then a minute at a time, each put twice as it forms: the run stays one range.
    for (let m = 120; m < 240; m++)
      for (let k = 0; k < 2; k++)
        s = s.with({ first: t0 + m * MIN, last: t0 + m * MIN, bars: 1, marks: [], rollups: false }, 3 + m * 2 + k)
    assert.deepEqual(s.overlaps, [[t0, t0 + 239 * MIN]])
    assert.equal(s.spans.length, 1)
    assert.equal(s.spans[0].bars, 1000 + 240)
  })

  it('live puts of a minute with the one it closed (two bars, the first the newest again): one span a day, each bar counted once', () => {
    const MIN = 60_000
    const history = put(1000)
    let s = SeriesState.empty('1m').with(history, 1)
    const t0 = history.last + DAY
    let rev = 1
    s = s.with({ first: t0, last: t0, bars: 1, marks: [], rollups: false }, ++rev)
    for (let m = 1; m < 240; m++) {
      s = s.with({ first: t0 + (m - 1) * MIN, last: t0 + m * MIN, bars: 2, marks: [], rollups: false }, ++rev)
      s = s.with({ first: t0 + m * MIN, last: t0 + m * MIN, bars: 1, marks: [], rollups: false }, ++rev)
    }
    assert.equal(s.spans.length, 1, 'a span a put would grow every reader by 240 spans a series a day')
    assert.equal(s.spans[0].bars, 1000 + 240)
    assert.equal(s.bars, 1000 + 240)
    assert.deepEqual(s.overlaps, [[t0, t0 + 239 * MIN]])
  })

  it('a put starting at the newest bar joins its span: that bar counted once, each checkpoint at its position, the bar read as the newest of its rows', () => {
    const first = put(100) // days 0..99
    const second = put(MARK_EVERY * 2 + 5, 99) // days 99.., its first bar day 99 again
    const s = SeriesState.empty('1d').with(first, 1).with(second, 2)
    assert.equal(s.spans.length, 1)
    assert.equal(s.bars, 100 + MARK_EVERY * 2 + 4)
    const [span] = s.spans
    assert.ok(span.ts.length > 2, 'checkpoints of both puts')
    span.ts.forEach((t, k) => assert.equal(span.at[k], t / DAY, `checkpoint ${k}: bar i is day i`))
    assert.deepEqual(s.overlaps, [[99 * DAY, 99 * DAY]], 'the shared bar is read as the newest of its rows')
  })
})

describe('SeriesState.unblobbedFrom (where the blobs stop holding every bar)', () => {
  it('a history with blobs, then live days put again and again: the blobs hold everything before the first live day', () => {
    const history = { ...put(1000), blobs: true }
    let s = SeriesState.empty('1d').with(history, 1)
    assert.equal(s.unblobbedFrom(history.first, history.last + 10 * DAY), Infinity)
    const t0 = history.last + DAY
    // Ten live days, each day's bar put three times as it forms, with no blobs; a day off between some.
    for (let d = 0; d < 10; d++)
      for (let k = 0; k < 3; k++) s = s.with({ first: t0 + d * 2 * DAY, last: t0 + d * 2 * DAY, bars: 1, marks: [] }, 2)
    assert.deepEqual(s.unblobbedFrom(history.first, t0 + 30 * DAY), t0)
    assert.equal(s.unblobbedFrom(history.first, t0 - 1), Infinity, 'a read that ends before them')
    assert.equal(s.unblobbedFrom(t0 + 5 * DAY, t0 + 30 * DAY), t0 + 5 * DAY, 'a read that starts among them')
    assert.equal(s.unblobbedFrom(t0 + 30 * DAY, t0 + 40 * DAY), Infinity, 'a read after them')
    assert.equal(s.unblobbedFrom(t0 + 18 * DAY, t0 + 40 * DAY), t0 + 18 * DAY)
    assert.equal(s.unblobbedTo(history.first, t0 + 40 * DAY), t0 + 18 * DAY, 'the last live day')
    assert.equal(s.unblobbedTo(history.first, t0 + 5 * DAY), t0 + 5 * DAY, 'a read that ends among them')
    assert.equal(s.unblobbedTo(history.first, t0 - 1), -Infinity)
  })

  it('a put from before blobs (no flag) covers its range; a later put with blobs does not', () => {
    const old = put(300)
    const s = SeriesState.empty('1d')
      .with(old, 1)
      .with({ ...put(300, 400), blobs: true }, 2)
    assert.equal(s.unblobbedFrom(old.first, 700 * DAY), old.first)
    assert.equal(s.unblobbedFrom(400 * DAY, 700 * DAY), Infinity)
    assert.equal(s.unblobbedTo(old.first, 700 * DAY), old.last, 'after the old put the blobs hold every bar')
  })
})
