/** @module The columnar Bars type: one Float64Array per field, index i = the same bar everywhere. */

export const BAR_FIELDS = ['timestamp', 'open', 'high', 'low', 'close', 'volume', 'amount', 'prevClose'] as const
export type BarField = (typeof BAR_FIELDS)[number]
/** Fields that hold prices and are therefore adjusted; volume and amount never are. */
export const PRICE_FIELDS = ['open', 'high', 'low', 'close', 'prevClose'] as const satisfies readonly BarField[]

/**
 * Bars in ascending timestamp order. `prevClose` may hold NaN where no value was imported; the
 * query layer fills it (domain/prev-close.ts) before anything leaves the service.
 */
export type Bars = { readonly [F in BarField]: Float64Array }

/**
 * Bars of at most this many have a typed array of their own per column: V8 keeps arrays of up to 64
 * bytes on its heap, several times cheaper to make than views of one shared buffer (a live put of
 * one bar makes two a quote).
 */
const OWN_COLUMNS_MAX = 8

export function allocBars(n: number): Bars {
  if (n <= OWN_COLUMNS_MAX) {
    const own = () => new Float64Array(n)
    return {
      timestamp: own(),
      open: own(),
      high: own(),
      low: own(),
      close: own(),
      volume: own(),
      amount: own(),
      prevClose: own(),
    }
  }
  const buffer = new ArrayBuffer(n * 8 * BAR_FIELDS.length)
  const col = (k: number) => new Float64Array(buffer, k * n * 8, n)
  return {
    timestamp: col(0),
    open: col(1),
    high: col(2),
    low: col(3),
    close: col(4),
    volume: col(5),
    amount: col(6),
    prevClose: col(7),
  }
}

export function barCount(bars: Bars): number {
  return bars.timestamp.length
}

/** Views of bars [from, to), no copy. */
export function sliceBars(bars: Bars, from: number, to: number): Bars {
  return {
    timestamp: bars.timestamp.subarray(from, to),
    open: bars.open.subarray(from, to),
    high: bars.high.subarray(from, to),
    low: bars.low.subarray(from, to),
    close: bars.close.subarray(from, to),
    volume: bars.volume.subarray(from, to),
    amount: bars.amount.subarray(from, to),
    prevClose: bars.prevClose.subarray(from, to),
  }
}

export function concatBars(parts: readonly Bars[]): Bars {
  if (parts.length === 1) return parts[0]
  let n = 0
  for (const p of parts) n += barCount(p)
  const out = allocBars(n)
  let at = 0
  for (const p of parts) {
    copyBars(p, 0, barCount(p), out, at)
    at += barCount(p)
  }
  return out
}

/** First index with timestamp >= t (binary search over an ascending column). */
export function lowerBound(ts: Float64Array, t: number, from = 0, to = ts.length): number {
  let lo = from
  let hi = to
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ts[mid] < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Plain object rows, for tests and small tools; never on the hot path. */
export interface BarRow {
  timestamp: number
  open: number
  high: number
  low: number
  close: number
  volume: number
  amount: number
  prevClose: number
}

export function rowsOfBars(bars: Bars): BarRow[] {
  const rows: BarRow[] = []
  for (let i = 0; i < barCount(bars); i++) {
    rows.push({
      timestamp: bars.timestamp[i],
      open: bars.open[i],
      high: bars.high[i],
      low: bars.low[i],
      close: bars.close[i],
      volume: bars.volume[i],
      amount: bars.amount[i],
      prevClose: bars.prevClose[i],
    })
  }
  return rows
}

/** Bars of plain rows (ascending, as given): the inverse of rowsOfBars. */
export function barsOfRows(rows: readonly BarRow[]): Bars {
  const bars = allocBars(rows.length)
  const { timestamp, open, high, low, close, volume, amount, prevClose } = bars
  rows.forEach((r, i) => {
    timestamp[i] = r.timestamp
    open[i] = r.open
    high[i] = r.high
    low[i] = r.low
    close[i] = r.close
    volume[i] = r.volume
    amount[i] = r.amount
    prevClose[i] = r.prevClose
  })
  return bars
}

/** Runs of up to this many bars are copied element by element: eight subarray views cost more than such a copy. */
const SHORT_RUN = 16

/** Copies bars [from, to) of `src` into `dst` from index `at`. */
export function copyBars(src: Bars, from: number, to: number, dst: Bars, at: number): void {
  if (to - from > SHORT_RUN) {
    for (const f of BAR_FIELDS) dst[f].set(src[f].subarray(from, to), at)
    return
  }
  for (let i = from; i < to; i++, at++) {
    dst.timestamp[at] = src.timestamp[i]
    dst.open[at] = src.open[i]
    dst.high[at] = src.high[i]
    dst.low[at] = src.low[i]
    dst.close[at] = src.close[i]
    dst.volume[at] = src.volume[i]
    dst.amount[at] = src.amount[i]
    dst.prevClose[at] = src.prevClose[i]
  }
}

/** Two ascending series merged; at equal timestamps `incoming` wins. Copied in runs (appending new bars is one run of each). */
export function mergeBars(existing: Bars, incoming: Bars): Bars {
  const a = existing.timestamp
  const b = incoming.timestamp
  if (a.length === 0) return incoming
  const out = allocBars(a.length + b.length)
  let i = 0
  let j = 0
  let k = 0
  while (i < a.length || j < b.length) {
    if (j === b.length || (i < a.length && a[i] < b[j])) {
      // Existing bars before the next incoming one.
      const end = j === b.length ? a.length : lowerBound(a, b[j], i)
      copyBars(existing, i, end, out, k)
      k += end - i
      i = end
    } else {
      // Incoming bars up to the next existing one, and the one at its time (which it replaces).
      let end = i === a.length ? b.length : lowerBound(b, a[i], j)
      if (i < a.length && end < b.length && b[end] === a[i]) {
        end++
        i++
      }
      copyBars(incoming, j, end, out, k)
      k += end - j
      j = end
    }
  }
  return sliceBars(out, 0, k)
}

/** The bars outside the inclusive range [fromMs, toMs] (a copy when anything is cut out). */
export function withoutRange(bars: Bars, fromMs: number, toMs: number): Bars {
  const lo = lowerBound(bars.timestamp, fromMs)
  const hi = lowerBound(bars.timestamp, toMs + 1)
  if (lo >= hi) return bars
  return concatBars([sliceBars(bars, 0, lo), sliceBars(bars, hi, barCount(bars))])
}
