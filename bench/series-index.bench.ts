// A trading day of live minutes in the ClickHouse store's series index (series-index.ts), for 5,000
// series, as the writer and every reader take a feed's `series` rows: each write puts a symbol's
// forming minute, with the minute it closed when a new one began (two bars, the first the newest
// again). Run: npm run bench -- series-index. Baseline in the same run: the same day put one minute
// at a time (one bar a put). In-process, best of 3.
import { MARK_EVERY } from '../src/store/clickhouse/schema.js'
import { SeriesState, type SpanRow } from '../src/store/clickhouse/series-index.js'
import { bestMs, row } from './measure.js'

const SERIES = Number(process.env.BENCH_SERIES ?? 5000)
const MINUTES = 240
const MIN = 60_000
const DAY = 86_400_000
/** A history of daily-spaced bars before the day, as an import leaves one. */
const HISTORY: SpanRow = { first: 0, last: 999 * DAY, bars: 1000, marks: [] }
const T0 = 1000 * DAY

const live = (first: number, last: number, bars: number): SpanRow => ({ first, last, bars, marks: [], rollups: false })

/** Puts the day into every series, minute by minute; the ms a minute of its last hour, and the spans a series ends with. */
function day(putsOf: (m: number) => SpanRow[]): { lastHourMs: number; spans: number } {
  const states = Array.from({ length: SERIES }, () => SeriesState.empty('1m').with(HISTORY, 1))
  let rev = 1
  let lastHour = 0
  for (let m = 0; m < MINUTES; m++) {
    const puts = putsOf(m)
    const t = performance.now()
    for (let i = 0; i < SERIES; i++) for (const p of puts) states[i] = states[i].with(p, ++rev)
    if (m >= MINUTES - 60) lastHour += performance.now() - t
  }
  return { lastHourMs: lastHour / 60, spans: states[0].spans.length }
}

// The forming minute put twice a minute; when a minute begins, with the one it closed.
const closing = (m: number) => [
  m === 0 ? live(T0, T0, 1) : live(T0 + (m - 1) * MIN, T0 + m * MIN, 2),
  live(T0 + m * MIN, T0 + m * MIN, 1),
]
const alone = (m: number) => [live(T0 + m * MIN, T0 + m * MIN, 1), live(T0 + m * MIN, T0 + m * MIN, 1)]

console.log(
  `series-index bench: ${SERIES.toLocaleString()} series, a day of ${MINUTES} live minutes each put twice (MARK_EVERY ${MARK_EVERY}); best of 3`,
)
row('workload', 'day ms', 'ms a minute, last hour', 'spans a series', 'vs baseline')
let base: { ms: number } | undefined
for (const [name, puts] of [
  ['baseline: each minute put alone', alone],
  ['a new minute put with the one it closed', closing],
] as const) {
  let last = { lastHourMs: 0, spans: 0 }
  const ms = bestMs(() => (last = day(puts)), 3)
  base ??= { ms }
  row(name, ms.toFixed(0), last.lastHourMs.toFixed(1), last.spans, (ms / base.ms).toFixed(2))
}
