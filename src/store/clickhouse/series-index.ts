/**
 * @module What readers know of each series from the `series` rows of visible imports, held in memory:
 * where its bars are, where two puts overlap (only there can a timestamp have two rows), and the
 * position of every MARK_EVERY-th bar and of the last, so a read of the latest N bars asks for a range
 * that holds N to N + MARK_EVERY of them (N + 2 x MARK_EVERY ending at an earlier time).
 */
import type { StoredPeriod } from '../../domain/period.js'
import { MARK_EVERY } from './schema.js'

/** One put's row of the `series` table (bars 0: written before counts were kept). */
export interface SpanRow {
  readonly first: number
  readonly last: number
  readonly bars: number
  /** Timestamps of bars MARK_EVERY, 2 x MARK_EVERY, ... of the put. */
  readonly marks: readonly number[]
  /** False for a 1m put that stored no rollups (a live one): its range is read as where puts overlap. */
  readonly rollups?: boolean
  /** True when the put wrote its bars as blobs too (schema.ts BLOBS). */
  readonly blobs?: boolean
}

/** Bars of puts that follow one another this close are held as one span (a day of one-minute appends). */
const JOIN_GAP_MS: Record<StoredPeriod, number> = { '1m': 4 * 86_400_000, '1d': 15 * 86_400_000 }

/** Puts joined: first and last bar, count, and checkpoints (timestamp, bars before it in the span). */
interface Span {
  readonly first: number
  readonly last: number
  readonly bars: number
  readonly ts: readonly number[]
  readonly at: readonly number[]
}

export class SeriesState {
  #flat: { ts: Float64Array; pos: Float64Array } | undefined | null

  private constructor(
    readonly period: StoredPeriod,
    /** Sorted by first bar; disjoint unless `overlaps` says where they meet. */
    readonly spans: readonly Span[],
    /**
     * Sorted, merged [from, to] ranges where two puts meet or a put stored no rollups: reads there take
     * the newest row per timestamp and roll up from the 1m bars.
     */
    readonly overlaps: readonly (readonly [number, number])[],
    /** Changes whenever the series does (a new put, or a tombstone of it): keys what is held per series. */
    readonly rev: number,
    /**
     * Sorted, merged [from, to] ranges of the puts that wrote no blobs (live ones, small ones, those
     * from before blobs): outside them the visible blob rows hold every bar a put wrote (the reader
     * still takes the newest per timestamp where they overlap, and checks that no tombstone hides part
     * of one).
     */
    readonly unblobbed: readonly (readonly [number, number])[] = [],
  ) {}

  static empty(period: StoredPeriod): SeriesState {
    return new SeriesState(period, [], [], 0)
  }

  get first(): number {
    return this.spans.length ? this.spans[0].first : Infinity
  }

  get last(): number {
    let last = -Infinity
    for (const s of this.spans) last = Math.max(last, s.last)
    return last
  }

  /** Bars in the series at most (bars where puts overlap count twice); Infinity when a span predates counts. */
  get bars(): number {
    let n = 0
    for (const s of this.spans) n += s.bars > 0 ? s.bars : Infinity
    return n
  }

  /** This state with one more put (`rev`: the new revision). */
  with(row: SpanRow, rev: number): SeriesState {
    // A put without rollups is read as met all over (where it meets other puts lies within): one
    // range, which joins the last as a live feed's minutes do.
    const met: [number, number][] = []
    if (row.rollups === false) met.push([row.first, row.last])
    else
      for (const s of this.spans)
        if (s.first <= row.last && row.first <= s.last)
          met.push([Math.max(s.first, row.first), Math.min(s.last, row.last)])
    const overlaps = withRanges(this.overlaps, met, JOIN_GAP_MS[this.period])
    const unblobbed = row.blobs
      ? this.unblobbed
      : withRanges(this.unblobbed, [[row.first, row.last]], JOIN_GAP_MS[this.period])
    const tail = this.spans.at(-1)
    // The newest bar put again (a live minute or day still forming): the spans hold it already.
    if (tail && tail.bars > 0 && row.bars === 1 && row.first === tail.last)
      return new SeriesState(this.period, this.spans, overlaps, rev, unblobbed)
    const spans = [...this.spans]
    const ts = [row.first, ...row.marks]
    const at = ts.map((_, k) => k * MARK_EVERY)
    if (
      tail &&
      tail.bars > 0 &&
      row.bars > 0 &&
      row.first >= tail.last &&
      row.first - tail.last <= JOIN_GAP_MS[this.period]
    ) {
      // Joined, its checkpoints thinned to one per MARK_EVERY bars: a day of appends is one span, not
      // 240. A put that starts at the newest bar (a live minute put again with the next, which closed
      // it) holds that bar once more: the span counts it once.
      const shared = row.first === tail.last ? 1 : 0
      const joined = { ts: [...tail.ts], at: [...tail.at] }
      for (let k = 0; k < ts.length; k++) {
        const offset = tail.bars - shared + at[k]
        if (offset - joined.at[joined.at.length - 1] >= MARK_EVERY) {
          joined.ts.push(ts[k])
          joined.at.push(offset)
        }
      }
      const bars = tail.bars + row.bars - shared
      spans[spans.length - 1] = { first: tail.first, last: row.last, bars, ...joined }
    } else {
      let i = spans.length
      while (i > 0 && spans[i - 1].first > row.first) i--
      spans.splice(i, 0, { first: row.first, last: row.last, bars: row.bars, ts, at })
    }
    return new SeriesState(this.period, spans, overlaps, rev, unblobbed)
  }

  /** The same series at a new revision (a tombstone of it became visible). */
  touched(rev: number): SeriesState {
    return new SeriesState(this.period, this.spans, this.overlaps, rev, this.unblobbed)
  }

  /** The first time in [from, to] that a put without blobs may have written, or Infinity: before it the blobs hold every bar. */
  unblobbedFrom(from: number, to: number): number {
    for (const [a, b] of this.unblobbed) if (a <= to && from <= b) return Math.max(a, from)
    return Infinity
  }

  /** The last time in [from, to] that a put without blobs may have written, or -Infinity: after it the blobs hold every bar. */
  unblobbedTo(from: number, to: number): number {
    for (let i = this.unblobbed.length - 1; i >= 0; i--) {
      const [a, b] = this.unblobbed[i]
      if (a <= to && from <= b) return Math.min(b, to)
    }
    return -Infinity
  }

  /** Whether a put written before counts were kept (and so before rollups were stored) meets [from, to]. */
  legacyIn(from: number, to: number): boolean {
    return this.spans.some((s) => s.bars === 0 && s.first <= to && from <= s.last)
  }

  /** Whether two puts meet, or a put stored no rollups, anywhere in [from, to]. */
  overlapsIn(from: number, to: number): boolean {
    for (const [a, b] of this.overlaps) if (a <= to && from <= b) return true
    return false
  }

  /**
   * A time from which [from, to] holds at least `limit` bars (or from itself), as few more as the
   * checkpoints allow; undefined when positions are unknown (puts overlap, or rows from before counts).
   * Bars deleted since make it hold fewer: the caller widens then.
   */
  startFor(to: number, limit: number): number | undefined {
    const flat = this.#positions()
    if (!flat) return undefined
    // j: the last checkpoint at or before `to`; at least pos[j] + 1 bars lie at or before `to`.
    let lo = 0
    let hi = flat.ts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (flat.ts[mid] <= to) lo = mid + 1
      else hi = mid
    }
    const j = lo - 1
    if (j < 0) return undefined
    const want = flat.pos[j] + 1 - limit
    if (want < 0) return -Infinity
    // i: the last checkpoint at a position <= want: [ts[i], to] holds >= limit bars.
    lo = 0
    hi = j + 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (flat.pos[mid] <= want) lo = mid + 1
      else hi = mid
    }
    return lo === 0 ? -Infinity : flat.ts[lo - 1]
  }

  /** Every checkpoint in time order with its position in the series; null when not known exactly. */
  #positions(): { ts: Float64Array; pos: Float64Array } | null {
    if (this.#flat !== undefined) return this.#flat
    if (this.overlaps.length || this.spans.some((s) => s.bars === 0)) return (this.#flat = null)
    // Each span's checkpoints and its last bar, whose position its count gives: a read of the newest
    // bars then asks for at most MARK_EVERY more than it returns.
    const count = this.spans.reduce((n, s) => n + s.ts.length + 1, 0)
    const ts = new Float64Array(count)
    const pos = new Float64Array(count)
    let k = 0
    let base = 0
    for (const s of this.spans) {
      for (let m = 0; m < s.ts.length; m++, k++) {
        ts[k] = s.ts[m]
        pos[k] = base + s.at[m]
      }
      ts[k] = s.last
      pos[k++] = base + s.bars - 1
      base += s.bars
    }
    return (this.#flat = { ts, pos })
  }
}

type Range = readonly [number, number]

/**
 * Sorted, merged `ranges` with `added` merged in; `ranges` itself when nothing changes (the same
 * bar put again). One range added that starts within the last or after it (the next live minute put
 * twice, or the forming minute with the one it closed) joins the last when it follows within
 * `joinGap`: a live feed's minutes are one range a run of days, not one a minute (each reader's
 * index would grow by 240 ranges a series a day). Wider ranges only make reads group by timestamp
 * where one row would do: the same answers.
 */
function withRanges(ranges: readonly Range[], added: readonly Range[], joinGap: number): readonly Range[] {
  if (added.length === 0) return ranges
  const last = ranges.at(-1)
  if (added.length === 1 && last) {
    const [a, b] = added[0]
    if (a >= last[0] && b <= last[1]) return ranges
    if (a >= last[0] && a - last[1] <= joinGap) return [...ranges.slice(0, -1), [last[0], b]]
    if (a > last[1]) return [...ranges, added[0]]
  }
  return merged([...ranges, ...added])
}

function merged(ranges: Range[]): Range[] {
  if (ranges.length < 2) return ranges
  const sorted = [...ranges].sort((a, b) => a[0] - b[0])
  const out: [number, number][] = [[sorted[0][0], sorted[0][1]]]
  for (const [a, b] of sorted.slice(1)) {
    const last = out[out.length - 1]
    if (a <= last[1]) last[1] = Math.max(last[1], b)
    else out.push([a, b])
  }
  return out
}
